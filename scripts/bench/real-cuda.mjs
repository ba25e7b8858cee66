// Real CUDA for the benchmark: files of the development corpus (real public projects, kept outside
// the repository; eval/README.md says how to make it) joined into one document of about the size
// asked for. Edits go where a client's would: one character at the start of a random line, any
// line (comments, host code, directives and kernel bodies alike).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The corpus folder: $CUDA_DEV_CORPUS, else ../dev-corpus beside the checkout; null when absent. */
export function corpusDir(root) {
  const dir = process.env.CUDA_DEV_CORPUS ?? join(root, '..', 'dev-corpus');
  return existsSync(dir) && statSync(dir).isDirectory() ? dir : null;
}

/** The CUDA sources of one project (or all), sorted: the same corpus always gives the same text. */
export function corpusFiles(dir, project = null) {
  const files = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const s = statSync(p);
      if (s.isDirectory()) walk(p);
      else if (/\.(cu|cuh)$/.test(name) && s.size < 512 * 1024) files.push(p);
    }
  };
  walk(project ? join(dir, project) : dir);
  return files;
}

/** About `lines` lines of real CUDA from the corpus, with edit places (line starts) and launch places (kernel names before `<<<`). */
export function realCudaSource(dir, lines, random) {
  const parts = [];
  let count = 0;
  for (const file of corpusFiles(dir)) {
    if (count >= lines) break;
    const text = readFileSync(file, 'utf8').replace(/\r\n?/g, '\n');
    parts.push(text.endsWith('\n') ? text : `${text}\n`);
    count += text.split('\n').length;
  }
  const text = parts.join('');
  const all = text.split('\n');
  const launches = [];
  // Not in a directive's lines (a launch in a macro body): files joined into one can define one macro
  // twice, and then only one definition's body holds a launch (the second rms_norm.cu's did not).
  let inDirective = false;
  all.forEach((line, row) => {
    const directive = inDirective || /^\s*#/.test(line);
    inDirective = directive && line.endsWith('\\');
    if (directive) return;
    for (const m of line.matchAll(/([A-Za-z_]\w*)\s*(?:<[^<>;]*>)?\s*<<</g))
      launches.push({ line: row, character: m.index + 1 });
  });
  const edits = Array.from({ length: 4000 }, () => ({ line: Math.floor(random.next() * all.length), character: 0 }));
  return { text, lineCount: all.length, launches, edits, files: parts.length };
}
