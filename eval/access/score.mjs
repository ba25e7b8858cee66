#!/usr/bin/env node
// Scores `barrier-divergence`, `uncoalesced-access` and `bank-conflict` findings of
// `cuda-occupancy check --format json --no-nvcc` against the hand labels in labels.jsonl
// (see README.md). Positives: global accesses labelled `uncoalesced`, shared accesses labelled
// `conflict`, barriers labelled `divergent` or `data`. A finding matches a label on the same file,
// line and rule whose access text names the finding's array (barriers: the line alone). Findings
// on labelled negatives (`coalesced`, `conflict-free`, `uniform`) are false positives; findings on
// `unknown` labels are counted apart (the rules promise none there).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const RULES = { global: 'uncoalesced-access', shared: 'bank-conflict', barrier: 'barrier-divergence' };
const POSITIVE = { global: ['uncoalesced'], shared: ['conflict'], barrier: ['divergent', 'data'] };

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const corpus = path.resolve(opt('--corpus', process.env.CUDA_DEV_CORPUS ?? path.join(repo, '..', 'dev-corpus')));
const cli = path.resolve(opt('--cli', path.join(repo, 'dist', 'cli', 'cuda-occupancy.js')));
const showMismatches = args.includes('--mismatches');

const labels = fs
  .readFileSync(path.join(here, 'labels.jsonl'), 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l));

/** The findings of the labelled files, per project: `check` over those files (their includes come with them). */
function findingsOf(project, files) {
  const dir = path.join(corpus, project);
  const r = spawnSync(
    process.execPath,
    [cli, 'check', ...files, '--format', 'json', '--arch', 'sm_80', '--no-nvcc', '--fail-on', 'never'],
    { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 30 },
  );
  if (r.status !== 0 && r.status !== 1) throw new Error(`check failed on ${project}: ${r.stderr}`);
  const out = [];
  for (const f of JSON.parse(r.stdout).files ?? [])
    for (const d of f.diagnostics ?? [])
      if (Object.values(RULES).includes(d.code))
        out.push({ file: f.path, line: d.line, code: d.code, message: d.message });
  return out;
}

const arrayOf = (message) => /`([^`]+)`/.exec(message)?.[1] ?? '';
const projects = [...new Set(labels.map((l) => l.project))];
const rows = [];
const mismatches = [];
for (const project of projects) {
  const mine = labels.filter((l) => l.project === project);
  const files = [...new Set(mine.map((l) => l.file))];
  // A header is read in the unit of the `.cu` that includes it, as the editor's workspace has it:
  // that file is checked too (its launches give the header's kernels their blocks), its findings
  // left out of the counts.
  const units = [...new Set(mine.map((l) => l.unit).filter((u) => u && !files.includes(u)))];
  const findings = findingsOf(project, [...files, ...units]).filter((f) => files.includes(f.file));
  for (const [kind, rule] of Object.entries(RULES)) {
    const labelled = mine.filter((l) => l.rule === kind);
    const ruleFindings = findings.filter((f) => f.code === rule);
    // A finding names its array: it matches the label on its line whose access names that array,
    // the one whose access starts with it where two do (`p[tid].assign` before
    // `center_table_d[p[tid].assign]` for a finding on `p`).
    const labelOf = (f) => {
      const here = labelled.filter((l) => f.file === l.file && f.line === l.line);
      if (kind === 'barrier') return here[0];
      const name = arrayOf(f.message).replace(/\s+/g, ' ');
      const naming = here.filter((l) => l.access.includes(name));
      return naming.find((l) => l.access.replace(/^[*(\s]+/, '').startsWith(name)) ?? naming[0];
    };
    const matchOf = (l) => ruleFindings.find((f) => labelOf(f) === l);
    let tp = 0;
    let fp = 0;
    let fn = 0;
    let onUnknown = 0;
    for (const l of labelled) {
      const hit = matchOf(l);
      const positive = POSITIVE[kind].includes(l.label);
      if (positive && hit) tp++;
      else if (positive) {
        fn++;
        mismatches.push(`FN ${project}/${l.file}:${l.line} ${rule} ${l.access} (${l.label})`);
      } else if (hit && l.label === 'unknown') {
        onUnknown++;
        mismatches.push(`on unknown ${project}/${l.file}:${l.line} ${rule}: ${hit.message}`);
      } else if (hit) {
        fp++;
        mismatches.push(`FP ${project}/${l.file}:${l.line} ${rule}: ${hit.message}`);
      }
    }
    const off = ruleFindings.filter((f) => !labelled.some((l) => l.file === f.file && l.line === f.line));
    for (const f of off) mismatches.push(`off the labels ${project}/${f.file}:${f.line} ${rule}: ${f.message}`);
    const unlabelled = off.length;
    rows.push({
      project,
      rule,
      labels: labelled.length,
      positives: labelled.filter((l) => POSITIVE[kind].includes(l.label)).length,
      tp,
      fp,
      fn,
      onUnknown,
      unlabelled,
    });
  }
}

const pct = (a, b) => (b === 0 ? '–' : `${Math.round((100 * a) / b)}%`);
console.log(
  '| project | rule | labels | positives | TP | FP | FN | on unknown | precision | recall | findings off the labels |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows)
  if (r.labels > 0)
    console.log(
      `| ${r.project} | ${r.rule} | ${r.labels} | ${r.positives} | ${r.tp} | ${r.fp} | ${r.fn} | ${r.onUnknown} | ${pct(r.tp, r.tp + r.fp)} | ${pct(r.tp, r.tp + r.fn)} | ${r.unlabelled} |`,
    );
for (const rule of Object.values(RULES)) {
  const t = rows
    .filter((r) => r.rule === rule)
    .reduce(
      (a, r) => ({
        labels: a.labels + r.labels,
        positives: a.positives + r.positives,
        tp: a.tp + r.tp,
        fp: a.fp + r.fp,
        fn: a.fn + r.fn,
        onUnknown: a.onUnknown + r.onUnknown,
        unlabelled: a.unlabelled + r.unlabelled,
      }),
      { labels: 0, positives: 0, tp: 0, fp: 0, fn: 0, onUnknown: 0, unlabelled: 0 },
    );
  console.log(
    `| **all** | ${rule} | ${t.labels} | ${t.positives} | ${t.tp} | ${t.fp} | ${t.fn} | ${t.onUnknown} | ${pct(t.tp, t.tp + t.fp)} | ${pct(t.tp, t.tp + t.fn)} | ${t.unlabelled} |`,
  );
}
if (showMismatches) for (const m of mismatches) console.log(m);
