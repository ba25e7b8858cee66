#!/usr/bin/env node
// Builds labels.json from the hand-written labels in labels.src/*.txt, adding for each launch where its
// kernel is defined (found in the corpus) and the ptxas figures of the instances it launches (read from
// the logs that `--compile` writes). A dev tool: it needs the corpus and, for --compile, nvcc.
//
//   node eval/launches/build-labels.mjs [--corpus DIR] [--logs DIR] [--compile [--only PROJECT]] [--nvcc PATH]
//
// The source format is described in README.md ("The label source").
import { readFileSync, writeFileSync, readdirSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const corpus = path.resolve(opt('--corpus', process.env.CUDA_DEV_CORPUS ?? path.join(repo, '..', 'dev-corpus')));
const logsDir = path.resolve(opt('--logs', process.env.CUDA_EVAL_PTXAS ?? path.join(repo, '..', 'eval-data', 'ptxas')));
const nvcc = opt('--nvcc', '/usr/local/cuda/bin/nvcc');
const depsDir = path.resolve(opt('--deps', process.env.CUDA_EVAL_DEPS ?? path.join(repo, '..', 'eval-data', 'deps')));
const only = opt('--only', null);
if (!existsSync(corpus)) {
  console.error(
    `build-labels: no corpus at ${corpus} (set CUDA_DEV_CORPUS or pass --corpus; README.md says how to make it)`,
  );
  process.exit(2);
}

const compileTable = JSON.parse(readFileSync(path.join(here, 'compile.json'), 'utf8'));
export const logName = (file) => file.replaceAll('/', '__') + '.log';

// ---- compiling for ptxas truth ----
if (args.includes('--compile')) {
  for (const entry of compileTable.files) {
    if (only && entry.project !== only) continue;
    const cwd = path.join(corpus, entry.project);
    const argv = nvccArgs(entry, cwd);
    const out = path.join(logsDir, entry.project, logName(entry.file));
    if (existsSync(out) && !args.includes('--force') && !/fatal|error/.test(readFileSync(out, 'utf8'))) continue;
    mkdirSync(path.dirname(out), { recursive: true });
    const t0 = Date.now();
    const r = spawnSync(nvcc, argv, { cwd, encoding: 'utf8', maxBuffer: 256 << 20 });
    writeFileSync(out, `# ${nvcc} ${argv.join(' ')}\n${r.stdout ?? ''}${r.stderr ?? ''}`);
    const entries = ((r.stderr ?? '') + (r.stdout ?? ''))
      .split('\n')
      .filter((l) => l.includes('Compiling entry function')).length;
    console.log(
      `${entry.project}/${entry.file}: rc=${r.status} entries=${entries} ${((Date.now() - t0) / 1000).toFixed(1)}s`,
    );
  }
}

export function nvccArgs(entry, _cwd) {
  const defaults = compileTable.defaults?.[entry.project] ?? {};
  const includes = entry.include ?? defaults.include ?? [];
  const stubs = entry.stubs ?? defaults.stubs ?? [];
  const deps = entry.deps ?? defaults.deps ?? [];
  const flags = entry.flags ?? defaults.flags ?? [];
  return [
    '-c',
    `-arch=${compileTable.arch}`,
    '-Xptxas',
    '-v',
    '-o',
    '/dev/null',
    entry.file,
    ...includes.map((i) => `-I${i}`),
    ...stubs.map((s) => `-I${path.join(here, 'stubs', s)}`),
    ...deps.map((d) => `-I${path.join(depsDir, d)}`),
    ...flags,
  ];
}

// ---- ptxas logs ----
const logCache = new Map();
function readLog(project, file) {
  const key = `${project}/${file}`;
  if (logCache.has(key)) return logCache.get(key);
  const p = path.join(logsDir, project, logName(file));
  let result = null;
  if (existsSync(p)) {
    const entries = [];
    let cur = null;
    for (const line of readFileSync(p, 'utf8').split('\n')) {
      let m = /Compiling entry function '([^']+)' for '(sm_\w+)'/.exec(line);
      if (m) {
        cur = { mangled: m[1] };
        entries.push(cur);
        continue;
      }
      // A kernel with a stack says so between the barriers and the smem ("..., 168 bytes cumulative stack size, 49152 bytes smem").
      m = /Used (\d+) registers(?:, used (\d+) barriers)?/.exec(line);
      if (m && cur) {
        cur.regs = Number(m[1]);
        cur.barriers = Number(m[2] ?? 0);
        cur.smem = Number(/(\d+) bytes smem/.exec(line)?.[1] ?? 0);
        cur = null;
      }
    }
    const names = entries.map((e) => e.mangled);
    const demangled = names.length
      ? execFileSync('c++filt', { input: names.join('\n') + '\n', encoding: 'utf8', maxBuffer: 256 << 20 }).split('\n')
      : [];
    entries.forEach((e, i) => (e.demangled = (demangled[i] ?? e.mangled).replace(/^void /, '')));
    result = entries.filter((e) => e.regs !== undefined);
  }
  logCache.set(key, result);
  return result;
}

// ---- kernel definitions ----
const defCache = new Map();
function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(cu|cuh|h|hpp|hxx|inl|cpp|cc)$/.test(name)) out.push(p);
  }
  return out;
}
function stripComments(text) {
  // keeps newlines so offsets map to the same lines
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/\/\/[^\n]*/g, (m) => ' '.repeat(m.length));
}
function definitions(project) {
  if (defCache.has(project)) return defCache.get(project);
  const root = path.join(corpus, project);
  const map = new Map();
  for (const file of walk(root)) {
    const text = stripComments(readFileSync(file, 'utf8'));
    const re = /\b__global__\b/g;
    let m;
    while ((m = re.exec(text))) {
      let i = m.index + m[0].length;
      let found = null;
      while (i < text.length) {
        const c = text[i];
        if (c === ';' || c === '{') break;
        const id = /^[A-Za-z_]\w*/.exec(text.slice(i, i + 200));
        if (id) {
          let j = i + id[0].length;
          while (/\s/.test(text[j])) j++;
          if (text[j] === '(') {
            if (
              ['__launch_bounds__', '__align__', 'alignas', '__attribute__', '__declspec', 'LAUNCH_BOUNDS'].includes(
                id[0],
              ) ||
              /^__launch_bounds/.test(id[0])
            ) {
              i = skipParens(text, j);
              continue;
            }
            found = { name: id[0], at: i, paren: j };
            break;
          }
          i = j;
          continue;
        }
        i++;
      }
      if (!found) continue;
      const after = skipParens(text, found.paren);
      const rest = text.slice(after, after + 400);
      const isDef = /^[^;{]*\{/.test(rest);
      if (!isDef) continue;
      const line = text.slice(0, found.at).split('\n').length;
      const rel = path.relative(root, file);
      if (!map.has(found.name)) map.set(found.name, []);
      map.get(found.name).push(`${rel}:${line}`);
    }
  }
  defCache.set(project, map);
  return map;
}
function skipParens(text, j) {
  let depth = 0;
  for (let k = j; k < text.length; k++) {
    if (text[k] === '(') depth++;
    else if (text[k] === ')' && --depth === 0) return k + 1;
  }
  return text.length;
}

// ---- the label source ----
function tokenize(line) {
  const out = [];
  const re = /\s*([A-Za-z_][\w-]*=)?(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))/g;
  let m;
  while ((m = re.exec(line))) {
    if (!m[0].trim()) break;
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3] !== undefined ? m[3] : m[4];
    out.push(m[1] ? [m[1].slice(0, -1), value] : [null, value]);
  }
  return out;
}
function dims(text) {
  const parts = text.split('x').map(Number);
  if (parts.some((n) => !Number.isInteger(n) || n <= 0) || parts.length > 3) throw new Error(`bad block "${text}"`);
  return { x: parts[0], y: parts[1] ?? 1, z: parts[2] ?? 1 };
}

const srcDir = path.join(here, 'labels.src');
const files = [];
const problems = [];
for (const name of readdirSync(srcDir)
  .filter((n) => n.endsWith('.txt'))
  .sort()) {
  let project = null;
  let current = null;
  const lines = readFileSync(path.join(srcDir, name), 'utf8').split('\n');
  lines.forEach((raw, idx) => {
    const where = `${name}:${idx + 1}`;
    const line = raw.replace(/^\s+/, '');
    if (!line || line.startsWith('#')) return;
    const toks = tokenize(line);
    const kv = Object.fromEntries(toks.filter(([k]) => k));
    const pos = toks.filter(([k]) => !k).map(([, v]) => v);
    if (pos[0] === 'project') {
      project = pos[1];
      return;
    }
    if (pos[0] === 'file') {
      current = {
        project,
        file: pos[1],
        complete: pos.includes('complete'),
        context: kv.context ? kv.context.split(',') : [],
        macroBodyLines: kv.macrobody
          ? kv.macrobody.split(',').flatMap((r) => {
              const [a, b] = r.split('-').map(Number);
              return Array.from({ length: (b ?? a) - a + 1 }, (_, i) => a + i);
            })
          : [],
        note: kv.note,
        launches: [],
      };
      if (!existsSync(path.join(corpus, project, current.file)))
        problems.push(`${where}: no file ${project}/${current.file}`);
      files.push(current);
      return;
    }
    if (!current) throw new Error(`${where}: launch before any file line`);
    const [lineNo, kernel, via] = pos;
    const l = { line: Number(lineNo), kernel, via };
    if (!Number.isInteger(l.line) || !kernel || !via) throw new Error(`${where}: want LINE KERNEL VIA`);
    if (kv.inactive) l.inactive = kv.inactive;
    if (kv.alias) l.kernelAliases = kv.alias.split(',');
    if (kv.alt) l.altLines = kv.alt.split(',').map(Number);
    if (kv.macro) l.macroLine = Number(kv.macro);
    if (kv.block === undefined) throw new Error(`${where}: block= missing`);
    l.block = kv.block === '?' ? null : dims(kv.block);
    if (kv.cand) {
      if (l.block) throw new Error(`${where}: both block and cand`);
      l.candidates = kv.cand.split('|').map(dims);
    }
    if (!l.block && !kv.why) problems.push(`${where}: block unknown without why=`);
    if (kv.why) l.why = kv.why;
    if (kv.expr) l.blockExpr = kv.expr;
    if (kv.dyn === undefined) throw new Error(`${where}: dyn= missing`);
    l.dynamicSmemBytes = kv.dyn === '?' ? null : Number(kv.dyn);
    if (kv.dyncand) l.dynamicSmemCandidates = kv.dyncand.split('|').map(Number);
    if (kv.dynwhy) l.dynamicSmemWhy = kv.dynwhy;
    l.confidence = kv.conf ?? 'high';
    if (kv.note) l.note = kv.note;
    // where the kernel is defined
    if (kv.def) l.definedAt = kv.def.split(',');
    else {
      const defs = definitions(project).get(kv.defname ?? kernel);
      if (defs) l.definedAt = defs;
      else if (kv.nodef === undefined)
        problems.push(`${where}: no __global__ definition of ${kernel} found (give def= or nodef=1)`);
    }
    // ptxas truth
    if (kv.truth) {
      const logFile =
        kv.tlog ??
        (l.definedAt?.length === 1 && l.definedAt[0].split(':')[0].endsWith('.cu')
          ? l.definedAt[0].split(':')[0]
          : current.file);
      const entries = readLog(project, logFile);
      if (!entries) problems.push(`${where}: no ptxas log for ${project}/${logFile}`);
      else {
        const re = new RegExp(kv.truth);
        const hit = entries.filter((e) => re.test(e.demangled));
        if (hit.length === 0) problems.push(`${where}: truth /${kv.truth}/ matches nothing in ${logFile}`);
        else
          l.truth = {
            log: logFile,
            filter: kv.truth,
            instances: hit.map(({ mangled, regs, smem, barriers }) => ({ mangled, regs, smem, barriers })),
          };
      }
    } else if (kv.notruth) l.noTruthWhy = kv.notruth;
    current.launches.push(l);
  });
}
if (problems.length) {
  for (const p of problems) console.error(p);
  if (!args.includes('--allow-problems')) process.exit(1);
}
const count = files.reduce((n, f) => n + f.launches.length, 0);
const out = {
  version: 1,
  arch: compileTable.arch,
  generatedBy: 'eval/launches/build-labels.mjs from labels.src/*.txt',
  files,
};
writeFileSync(path.join(here, 'labels.json'), JSON.stringify(out, null, 1) + '\n');
console.log(
  `labels.json: ${files.length} files, ${count} launches, ${files.reduce((n, f) => n + f.launches.filter((l) => l.truth).length, 0)} with ptxas truth`,
);
