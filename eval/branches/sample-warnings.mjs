#!/usr/bin/env node
// Draws a seeded random sample of the `divergent-branch` findings of severity warning or error
// from saved `cuda-occupancy check --no-nvcc --format json` outputs, one file per corpus project
// (DIR/<project>.json), for labelling by hand: is each warning worth a programmer's fix?
//
//   node eval/branches/sample-warnings.mjs --from DIR --seed N [--size 30] [--out FILE] [--all]
//
// --from   the folder of saved outputs, <project>.json each (the project is the file's name)
// --seed   the seed of the draw (recorded in every row, so a sample can be drawn again)
// --size   how many to draw (default 30; all of them when there are fewer)
// --out    write the rows as JSON lines to FILE (default: stdout); rows keep only paths relative
//          to the project folder, lines and the tool's message, never corpus code
// --all    list every warning instead of drawing (with the count per project on stderr)
//
// Each row has `label: null` and `why: null` for the reader to fill in: `fix` (worth fixing),
// `not-worth` (right, but not worth a fix) or `wrong` (the warning's claim is false).
// Plain Node (18+), no dependencies.
import fs from 'node:fs';
import path from 'node:path';
import { mulberry32 } from '../seeded-random.mjs';

function parseArgs(argv) {
  const opts = { size: 30, all: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--from') opts.from = value();
    else if (a === '--seed') opts.seed = Number(value());
    else if (a === '--size') opts.size = Number(value());
    else if (a === '--out') opts.out = value();
    else if (a === '--all') opts.all = true;
    else if (a === '-h' || a === '--help') {
      console.log('usage: node eval/branches/sample-warnings.mjs --from DIR --seed N [--size 30] [--out FILE] [--all]');
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  if (!opts.from) fail('--from DIR is needed');
  if (!opts.all && !Number.isInteger(opts.seed)) fail('--seed N (an integer) is needed');
  return opts;
}

function fail(message) {
  console.error(`sample-warnings.mjs: ${message}`);
  process.exit(2);
}

// The saved paths are relative to wherever check ran; the project's own folder is the last path
// segment named like the project.
function projectRelative(file, project) {
  const parts = file.split(/[\\/]/);
  const at = parts.lastIndexOf(project);
  return at < 0 ? file : parts.slice(at + 1).join('/');
}

function readWarnings(dir) {
  const rows = [];
  const projects = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .sort();
  for (const project of projects) {
    const out = JSON.parse(fs.readFileSync(path.join(dir, `${project}.json`), 'utf8'));
    for (const file of out.files ?? []) {
      for (const d of file.diagnostics ?? []) {
        if (d.code !== 'divergent-branch' || (d.severity !== 'warning' && d.severity !== 'error')) continue;
        rows.push({
          project,
          file: projectRelative(file.path, project),
          line: d.line,
          column: d.column,
          severity: d.severity,
          // The condition and what the tool claims, without the code it quotes from the source.
          condition: /`([^`]*)`/.exec(d.message)?.[1] ?? null,
          claim: d.message
            .replace(/ \(from `[^`]*`\)/g, '')
            .replace(/^`[^`]*` /, '')
            .slice(0, 160),
        });
      }
    }
  }
  // One order whatever the file system lists, so a seed names one sample.
  const key = (r) =>
    `${r.project}\0${r.file}\0${String(r.line).padStart(8, '0')}\0${String(r.column).padStart(6, '0')}`;
  rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return { rows, projects };
}

function draw(rows, size, seed) {
  const next = mulberry32(seed);
  const pool = rows.slice();
  // A partial Fisher-Yates shuffle: the first `size` places are a uniform sample without repeats.
  const n = Math.min(size, pool.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(next() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, n);
}

const opts = parseArgs(process.argv.slice(2));
const { rows, projects } = readWarnings(opts.from);
const perProject = new Map(projects.map((p) => [p, 0]));
for (const r of rows) perProject.set(r.project, perProject.get(r.project) + 1);
console.error(
  `${rows.length} divergent-branch warnings over ${projects.length} projects: ` +
    [...perProject].map(([p, n]) => `${p} ${n}`).join(', '),
);
const picked = opts.all
  ? rows
  : draw(rows, opts.size, opts.seed).map((r, i) => ({
      id: `s${opts.seed}-${String(i + 1).padStart(2, '0')}`,
      seed: opts.seed,
      ...r,
    }));
const text =
  picked.map((r) => JSON.stringify({ ...r, label: null, why: null })).join('\n') + (picked.length ? '\n' : '');
if (opts.out) fs.writeFileSync(opts.out, text);
else process.stdout.write(text);
