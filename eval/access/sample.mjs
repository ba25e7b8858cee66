#!/usr/bin/env node
// Draws a seeded random sample of the memory rules' findings (`barrier-divergence`,
// `uncoalesced-access`, `bank-conflict`) over whole projects of the development corpus, for reading
// by hand: which of them a programmer would act on (see README.md, "Samples").
//
//   node eval/access/sample.mjs [--corpus DIR] [--cli PATH] [--seed N] [--count N]
//                               [--level warning|all] [--saved DIR] [--save DIR] [--json]
//
// `--level warning` (the default) samples the findings shown as warnings or errors; `all` takes the
// hints too. The findings are sorted by project, file, line, rule and message, shuffled with a
// seeded generator (mulberry32) and the first `--count` kept, so the same findings and seed give
// the same sample. `--save DIR` keeps each project's `check` output as DIR/<project>.json and
// `--saved DIR` reads them back instead of running `check` again.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../seeded-random.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const RULES = ['uncoalesced-access', 'bank-conflict', 'barrier-divergence'];
const PROJECTS = [
  'bitsandbytes',
  'FasterTransformer',
  'xgboost',
  'faiss',
  'DeepSpeed',
  'openmm',
  'SGEMM_CUDA',
  'llm.c',
];

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const corpus = path.resolve(opt('--corpus', process.env.CUDA_DEV_CORPUS ?? path.join(repo, '..', 'dev-corpus')));
const cli = path.resolve(opt('--cli', path.join(repo, 'dist', 'cli', 'cuda-occupancy.js')));
const seed = Number(opt('--seed', '3806'));
const count = Number(opt('--count', '30'));
const level = opt('--level', 'warning');
const saved = opt('--saved', null);
const save = opt('--save', null);

function reportOf(project) {
  if (saved) return JSON.parse(fs.readFileSync(path.join(saved, `${project}.json`), 'utf8'));
  const r = spawnSync(
    process.execPath,
    [cli, 'check', '.', '--format', 'json', '--arch', 'sm_80', '--no-nvcc', '--fail-on', 'never'],
    { cwd: path.join(corpus, project), encoding: 'utf8', maxBuffer: 1 << 30 },
  );
  if (r.status !== 0 && r.status !== 1) throw new Error(`check failed on ${project}: ${r.stderr}`);
  if (save) {
    fs.mkdirSync(save, { recursive: true });
    fs.writeFileSync(path.join(save, `${project}.json`), r.stdout);
  }
  return JSON.parse(r.stdout);
}

const findings = [];
const counts = {};
for (const project of PROJECTS) {
  if (!saved && !fs.existsSync(path.join(corpus, project))) continue;
  for (const f of reportOf(project).files ?? [])
    for (const d of f.diagnostics ?? []) {
      if (!RULES.includes(d.code)) continue;
      const warning = d.severity === 'warning' || d.severity === 'error';
      const key = `${project} ${d.code} ${warning ? 'warning' : 'hint'}`;
      counts[key] = (counts[key] ?? 0) + 1;
      if (level === 'warning' && !warning) continue;
      findings.push({ project, file: f.path, line: d.line, rule: d.code, severity: d.severity, message: d.message });
    }
}
const order = (a, b) =>
  a.project.localeCompare(b.project) ||
  a.file.localeCompare(b.file) ||
  a.line - b.line ||
  a.rule.localeCompare(b.rule) ||
  a.message.localeCompare(b.message);
findings.sort(order);
const random = mulberry32(seed);
for (let i = findings.length - 1; i > 0; i--) {
  const j = Math.floor(random() * (i + 1));
  [findings[i], findings[j]] = [findings[j], findings[i]];
}
const sample = findings.slice(0, count);
if (args.includes('--json')) {
  for (const s of sample) console.log(JSON.stringify(s));
} else {
  for (const [k, n] of Object.entries(counts).sort()) console.log(`${k}: ${n}`);
  console.log(`\n${sample.length} of ${findings.length} (${level}), seed ${seed}:\n`);
  sample.forEach((s, i) =>
    console.log(`${i + 1}. ${s.project}/${s.file}:${s.line} ${s.rule} (${s.severity})\n   ${s.message}\n`),
  );
}
