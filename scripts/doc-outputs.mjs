#!/usr/bin/env node
// doc-outputs.mjs: the CLI's output shown in README.md and docs/*.md, as the CLI prints it.
//
// A block is the fenced block right after a `<!-- cli-output -->` comment. Its first line is
// `$ COMMAND` (`node dist/cli/cuda-occupancy.js ...`, or `cuda-occupancy ...`), run from the
// repository's root; the rest is what COMMAND prints (stdout, then stderr). `<!-- cli-output
// nvcc=13.0 -->` marks output with ptxas's figures: it is checked only where `nvcc --version`
// says that release (another nvcc gives other registers), and skipped, saying so, elsewhere.
// Compared as printed, but for the repository's absolute path and "N min ago".
//
//   node scripts/doc-outputs.mjs            checks every block: a diff for each that differs, exit 1
//   node scripts/doc-outputs.mjs --write    rewrites the blocks with what the commands print (npm run docs:outputs)
//   node scripts/doc-outputs.mjs --json     the outcome per block, as JSON (test/unit/doc-outputs.test.ts)
//
// Needs `npm run build` (dist/cli/cuda-occupancy.js).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(repo, 'dist', 'cli', 'cuda-occupancy.js');
const MARK = /^<!--\s*cli-output(?:\s+nvcc=([\d.]+))?\s*-->\s*$/;

export function documents() {
  const docs = path.join(repo, 'docs');
  return [
    path.join(repo, 'README.md'),
    ...fs
      .readdirSync(docs)
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => path.join(docs, f)),
  ];
}

/** The marked blocks of a markdown text: where each starts and ends (line indices of its fences), its command and output. */
export function blocks(text) {
  const lines = text.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const mark = MARK.exec(lines[i]);
    if (!mark) continue;
    const open = i + 1;
    if (!/^```/.test(lines[open] ?? ''))
      throw new Error(`line ${i + 1}: a cli-output mark not followed by a fenced block`);
    const close = lines.findIndex((l, k) => k > open && /^```\s*$/.test(l));
    if (close < 0) throw new Error(`line ${open + 1}: an unclosed block`);
    const [first, ...rest] = lines.slice(open + 1, close);
    if (!first?.startsWith('$ ')) throw new Error(`line ${open + 2}: a cli-output block starts with "$ COMMAND"`);
    found.push({
      line: open + 1,
      open,
      close,
      command: first.slice(2),
      output: rest.join('\n'),
      nvcc: mark[1] ?? null,
    });
  }
  return found;
}

/** `node dist/cli/cuda-occupancy.js check a.cu --arch sm_80` → the arguments after the CLI (no shell: quotes only). */
function argumentsOf(command) {
  const words = [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
  if (words[0] === 'node' && words[1] === 'dist/cli/cuda-occupancy.js') return words.slice(2);
  if (words[0] === 'cuda-occupancy') return words.slice(1);
  throw new Error(`not a cuda-occupancy command: ${command}`);
}

/** The release of the nvcc the CLI would find (as it looks: $CUDA_HOME/bin, /usr/local/cuda/bin, PATH), or null. */
export function nvccRelease() {
  const candidates = [
    process.env.CUDA_HOME && path.join(process.env.CUDA_HOME, 'bin', 'nvcc'),
    '/usr/local/cuda/bin/nvcc',
    ...(process.env.PATH ?? '').split(path.delimiter).map((d) => d && path.join(d, 'nvcc')),
  ].filter(Boolean);
  const nvcc = candidates.find((c) => fs.existsSync(c));
  if (!nvcc) return null;
  const run = spawnSync(nvcc, ['--version'], { encoding: 'utf8' });
  return /release (\d+\.\d+)/.exec(run.stdout ?? '')?.[1] ?? null;
}

/** What the command prints, stdout then stderr, with the repository's path and times made stable. */
export function run(command) {
  const result = spawnSync(process.execPath, [cli, ...argumentsOf(command)], { cwd: repo, encoding: 'utf8' });
  if (result.error) throw result.error;
  return normalise(`${result.stdout}${result.stderr}`.replace(/\n+$/, ''));
}

export function normalise(text) {
  return text
    .split(`${repo}/`)
    .join('')
    .replace(/\b(just now|\d+ (?:min|h|d) ago)\b/g, 'just now');
}

export function check({ write = false } = {}) {
  if (!fs.existsSync(cli)) throw new Error(`${path.relative(repo, cli)} is missing: run npm run build first`);
  const release = nvccRelease();
  const outcomes = [];
  for (const file of documents()) {
    const text = fs.readFileSync(file, 'utf8');
    const lines = text.split('\n');
    const found = blocks(text);
    for (const b of found.reverse()) {
      const where = `${path.relative(repo, file)}:${b.line + 1}`;
      if (b.nvcc && b.nvcc !== release) {
        outcomes.push({
          where,
          command: b.command,
          state: 'skipped',
          why: `needs nvcc ${b.nvcc}, found ${release ?? 'none'}`,
        });
        continue;
      }
      const printed = run(b.command);
      const same = printed === normalise(b.output);
      outcomes.push({ where, command: b.command, state: same ? 'same' : 'differs', expected: b.output, printed });
      if (!same && write) lines.splice(b.open + 2, b.close - b.open - 2, ...printed.split('\n'));
    }
    if (write) fs.writeFileSync(file, lines.join('\n'));
  }
  return outcomes.reverse();
}

function diff(expected, printed) {
  const a = expected.split('\n');
  const b = printed.split('\n');
  const out = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;
    if (a[i] !== undefined) out.push(`  - ${a[i]}`);
    if (b[i] !== undefined) out.push(`  + ${b[i]}`);
  }
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const write = process.argv.includes('--write');
  const outcomes = check({ write });
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(outcomes, null, 2));
  } else {
    for (const o of outcomes) {
      const head = `${o.where}: $ ${o.command}`;
      if (o.state === 'same') console.log(`same     ${head}`);
      else if (o.state === 'skipped') console.log(`skipped  ${head} (${o.why})`);
      else console.log(`${write ? 'written ' : 'differs '} ${head}\n${diff(o.expected, o.printed)}`);
    }
  }
  process.exitCode = !write && outcomes.some((o) => o.state === 'differs') ? 1 : 0;
}
