#!/usr/bin/env node
// Scores the divergence classifier of `cuda-occupancy check` against the hand labels in
// labels.jsonl (branch conditions in the development corpus, see README.md).
//
//   node eval/branches/score.mjs [--corpus DIR] [--cli PATH] [--labels FILE] [--arch sm_80]
//                                [--project NAME]... [--json] [--mismatches] [--skip-missing]
//
// --corpus    the corpus root (default $CUDA_DEV_CORPUS, else ../dev-corpus beside the repository)
// --cli       the built CLI (default dist/cli/cuda-occupancy.js of this repository)
// --json      print one JSON object instead of the text tables
// --mismatches  also list every labelled branch the tool gets wrong (kind or warning)
// --skip-missing  exit 0 (not 2) when the corpus is absent
//
// `divergent-branch` findings of severity warning and hint (a divergent branch below
// divergence.minCost / divergence.minShare) are counted apart; "material" is about warnings.
//
// Plain Node (18+), no dependencies. The corpus is never needed by CI or the tests.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');

const LABEL_KINDS = ['divergent', 'warp-uniform', 'tail', 'uniform'];
const TOOL_KINDS = ['divergent', 'warp-uniform', 'tail', 'not listed'];
const SOURCE_EXT = /\.(cu|cuh)$/;

function parseArgs(argv) {
  const opts = { projects: [], json: false, mismatches: false, skipMissing: false, arch: 'sm_80' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--corpus') opts.corpus = value();
    else if (a === '--cli') opts.cli = value();
    else if (a === '--labels') opts.labels = value();
    else if (a === '--arch') opts.arch = value();
    else if (a === '--project') opts.projects.push(value());
    else if (a === '--json') opts.json = true;
    else if (a === '--mismatches') opts.mismatches = true;
    else if (a === '--skip-missing') opts.skipMissing = true;
    else if (a === '-h' || a === '--help') {
      console.log(
        'usage: node eval/branches/score.mjs [--corpus DIR] [--cli PATH] [--labels FILE] [--arch sm_80] [--project NAME]... [--json] [--mismatches] [--skip-missing]',
      );
      process.exit(0);
    } else fail(`unknown argument ${a}`);
  }
  opts.corpus = path.resolve(opts.corpus ?? process.env.CUDA_DEV_CORPUS ?? path.join(repo, '..', 'dev-corpus'));
  opts.cli = path.resolve(opts.cli ?? path.join(repo, 'dist', 'cli', 'cuda-occupancy.js'));
  opts.labels = path.resolve(opts.labels ?? path.join(here, 'labels.jsonl'));
  return opts;
}

function fail(message, code = 2) {
  console.error(`score.mjs: ${message}`);
  process.exit(code);
}

const norm = (s) => String(s).replace(/\s+/g, '');
const countLines = (text) => (text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));

function readLabels(file) {
  if (!fs.existsSync(file)) fail(`no labels at ${file}`);
  const labels = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let o;
      try {
        o = JSON.parse(line);
      } catch {
        fail(`${file}:${i + 1}: not JSON`);
      }
      for (const k of ['project', 'file', 'line', 'condition', 'kind'])
        if (o[k] === undefined) fail(`${file}:${i + 1}: no ${k}`);
      if (!LABEL_KINDS.includes(o.kind)) fail(`${file}:${i + 1}: kind ${o.kind}`);
      labels.push(o);
    });
  return labels;
}

function walkSources(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walkSources(p, out);
    else if (e.isFile() && SOURCE_EXT.test(e.name)) out.push(p);
  }
  return out;
}

/** Runs the CLI on a project folder (and any labelled file the folder scan would not pick up). */
function runCli(opts, projDir, extraFiles) {
  const args = [
    opts.cli,
    'check',
    '.',
    ...extraFiles,
    '--format',
    'json',
    '--arch',
    opts.arch,
    '--no-nvcc',
    '--fail-on',
    'never',
  ];
  const r = spawnSync(process.execPath, args, { cwd: projDir, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) fail(`could not run the CLI: ${r.error.message}`);
  if (r.status !== 0 && r.status !== 1)
    fail(`the CLI exited ${r.status} on ${projDir}: ${(r.stderr || '').trim().split('\n')[0]}`);
  let json;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    fail(`the CLI printed no JSON for ${projDir}`);
  }
  const files = new Map();
  for (const f of json.files ?? []) {
    const rel = path.relative(projDir, path.resolve(projDir, f.path)).split(path.sep).join('/');
    const branches = (f.branches ?? []).map((b) => ({ ...b, warnings: [], hints: [] }));
    // A divergent branch costly enough (divergence.minCost, divergence.minShare) is a warning; one
    // below the thresholds is a hint. They are counted apart: "material" is about warnings.
    const divergence = (f.diagnostics ?? []).filter((d) => d.code === 'divergent-branch');
    const warnings = divergence.filter((d) => (d.severity ?? 'warning') === 'warning');
    const hints = divergence.filter((d) => d.severity === 'hint' || d.severity === 'info');
    // A finding quotes its condition in backticks and sits on the condition, at or below the
    // branch's own line: give it to the nearest such branch with the same condition.
    const attach = (w, list) => {
      const quoted = /^`([^`]*)`/.exec(w.message ?? '')?.[1];
      let best = null;
      for (const b of branches) {
        if (b.line > w.line || w.line - b.line > 3) continue;
        if (quoted !== undefined && norm(b.condition) !== norm(quoted)) continue;
        if (
          !best ||
          b.line > best.line ||
          (b.line === best.line && Math.abs(b.column - w.column) < Math.abs(best.column - w.column))
        )
          best = b;
      }
      if (best) best[list].push(w);
    };
    for (const w of warnings) attach(w, 'warnings');
    for (const h of hints) attach(h, 'hints');
    files.set(rel, { branches, warnings, hints });
  }
  return files;
}

/** The tool's branch for a label: same file, near the label's line, the same condition text. */
function matchLabels(labels, files) {
  const taken = new Set();
  const result = new Map();
  const scored = [];
  labels.forEach((l, li) => {
    const f = files.get(l.file);
    if (!f) return;
    f.branches.forEach((b, bi) => {
      if (b.line < l.line - 3 || b.line > l.line + 1) return;
      const a = norm(l.condition);
      const c = norm(b.condition);
      let quality;
      if (a === c) quality = 0;
      else if (c.includes(a) || a.includes(c)) quality = 1;
      else return;
      scored.push({ li, key: `${l.file}:${bi}`, b, rank: quality * 10 + Math.abs(b.line - l.line) });
    });
  });
  scored.sort((x, y) => x.rank - y.rank);
  for (const s of scored) {
    if (result.has(s.li) || taken.has(s.key)) continue;
    result.set(s.li, s.b);
    taken.add(s.key);
  }
  return result;
}

function emptyMetrics() {
  const confusion = {};
  for (const k of LABEL_KINDS) confusion[k] = Object.fromEntries(TOOL_KINDS.map((t) => [t, 0]));
  return {
    labels: 0,
    confusion,
    divergent: { tp: 0, fp: 0, fn: 0, precision: null, recall: null },
    warnings: {
      onUniform: 0,
      onWarpUniform: 0,
      onTail: 0,
      onDivergentNotMaterial: 0,
      onDivergentMaterial: 0,
      falseAlarms: 0,
      onLabelled: 0,
      materialPrecision: null,
    },
    hints: {
      onUniform: 0,
      onWarpUniform: 0,
      onTail: 0,
      onDivergentNotMaterial: 0,
      onDivergentMaterial: 0,
      falseAlarms: 0,
      onLabelled: 0,
    },
    material: { labelled: 0, warned: 0, hinted: 0 },
    labelledFiles: { files: 0, lines: 0, warnings: 0, hints: 0, perKLoc: null },
    project: {
      files: 0,
      lines: 0,
      warnings: 0,
      hints: 0,
      perKLoc: null,
      branches: { divergent: 0, 'warp-uniform': 0, tail: 0 },
    },
  };
}

function addInto(t, m) {
  t.labels += m.labels;
  for (const k of LABEL_KINDS) for (const tk of TOOL_KINDS) t.confusion[k][tk] += m.confusion[k][tk];
  for (const k of ['tp', 'fp', 'fn']) t.divergent[k] += m.divergent[k];
  for (const k of Object.keys(t.warnings)) if (k !== 'materialPrecision') t.warnings[k] += m.warnings[k];
  for (const k of Object.keys(t.hints)) t.hints[k] += m.hints[k];
  for (const k of ['labelled', 'warned', 'hinted']) t.material[k] += m.material[k];
  for (const k of ['files', 'lines', 'warnings', 'hints']) {
    t.labelledFiles[k] += m.labelledFiles[k];
    t.project[k] += m.project[k];
  }
  for (const k of Object.keys(t.project.branches)) t.project.branches[k] += m.project.branches[k];
}

function finish(m) {
  const { tp, fp, fn } = m.divergent;
  m.divergent.precision = tp + fp ? tp / (tp + fp) : null;
  m.divergent.recall = tp + fn ? tp / (tp + fn) : null;
  for (const w of [m.warnings, m.hints]) {
    w.falseAlarms = w.onUniform + w.onWarpUniform + w.onTail;
    w.onLabelled = w.falseAlarms + w.onDivergentNotMaterial + w.onDivergentMaterial;
  }
  // Of the warnings that land on labelled branches, the share on branches a programmer would fix.
  m.warnings.materialPrecision = m.warnings.onLabelled ? m.warnings.onDivergentMaterial / m.warnings.onLabelled : null;
  m.labelledFiles.perKLoc = m.labelledFiles.lines ? (1000 * m.labelledFiles.warnings) / m.labelledFiles.lines : null;
  m.project.perKLoc = m.project.lines ? (1000 * m.project.warnings) / m.project.lines : null;
  return m;
}

function scoreProject(opts, project, labels, mismatches, results) {
  const projDir = path.join(opts.corpus, project);
  const m = emptyMetrics();
  if (!fs.existsSync(projDir)) return { missing: true, metrics: finish(m) };
  const labelledFiles = [...new Set(labels.map((l) => l.file))];
  for (const f of labelledFiles)
    if (!fs.existsSync(path.join(projDir, f))) fail(`labelled file missing from the corpus: ${project}/${f}`);
  const files = runCli(
    opts,
    projDir,
    labelledFiles.filter((f) => !SOURCE_EXT.test(f)),
  );
  const matches = matchLabels(labels, files);

  labels.forEach((l, li) => {
    const b = matches.get(li);
    const toolKind = b ? b.kind : 'not listed';
    const warned = b ? b.warnings.length > 0 : false;
    const hinted = b ? !warned && b.hints.length > 0 : false;
    results.push({
      id: l.id,
      project,
      file: l.file,
      line: l.line,
      label: l.kind,
      material: l.material ?? null,
      tool: toolKind,
      warned,
      hinted,
      splitBy: b?.splitBy ?? null,
      match: b ? { line: b.line, column: b.column, condition: b.condition, efficiency: b.efficiency } : null,
    });
    m.labels++;
    m.confusion[l.kind][TOOL_KINDS.includes(toolKind) ? toolKind : 'not listed']++;
    const labelDiv = l.kind === 'divergent';
    const toolDiv = toolKind === 'divergent';
    if (labelDiv && toolDiv) m.divergent.tp++;
    else if (!labelDiv && toolDiv) m.divergent.fp++;
    else if (labelDiv && !toolDiv) m.divergent.fn++;
    if (labelDiv && l.material) {
      m.material.labelled++;
      if (warned) m.material.warned++;
      else if (hinted) m.material.hinted++;
    }
    const tally = (w) => {
      if (l.kind === 'uniform') w.onUniform++;
      else if (l.kind === 'warp-uniform') w.onWarpUniform++;
      else if (l.kind === 'tail') w.onTail++;
      else if (l.material) w.onDivergentMaterial++;
      else w.onDivergentNotMaterial++;
    };
    if (warned) tally(m.warnings);
    else if (hinted) tally(m.hints);
    const wrongKind = toolKind !== l.kind && !(l.kind === 'uniform' && toolKind === 'not listed');
    const wrongWarning = warned !== Boolean(labelDiv && l.material);
    if (wrongKind || wrongWarning) {
      mismatches.push({
        id: l.id,
        project,
        file: l.file,
        line: l.line,
        condition: l.condition,
        label: l.kind,
        material: l.material ?? null,
        tool: toolKind,
        warned,
        hinted,
        splitBy: b?.splitBy ?? null,
        confidence: l.confidence ?? null,
      });
    }
  });

  for (const f of labelledFiles) {
    m.labelledFiles.files++;
    m.labelledFiles.lines += countLines(fs.readFileSync(path.join(projDir, f), 'utf8'));
    m.labelledFiles.warnings += files.get(f)?.warnings.length ?? 0;
    m.labelledFiles.hints += files.get(f)?.hints.length ?? 0;
  }
  for (const abs of walkSources(projDir)) {
    const rel = path.relative(projDir, abs).split(path.sep).join('/');
    m.project.files++;
    m.project.lines += countLines(fs.readFileSync(abs, 'utf8'));
    const f = files.get(rel);
    if (!f) continue;
    m.project.warnings += f.warnings.length;
    m.project.hints += f.hints.length;
    for (const b of f.branches) if (b.kind in m.project.branches) m.project.branches[b.kind]++;
  }
  return { missing: false, metrics: finish(m) };
}

function gitCommit(dir) {
  const r = spawnSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

const pct = (x) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);
const rate = (x) => (x === null ? '-' : x.toFixed(2));

function printText(report) {
  const rows = [...Object.entries(report.projects), ['TOTAL', { metrics: report.total }]];
  console.log(`CUDA Occupancy Lens divergence vs ${report.labels} labelled branches (arch ${report.arch}, --no-nvcc)`);
  console.log(`tool ${report.cli}${report.commit ? ` @ ${report.commit.slice(0, 12)}` : ''}; corpus ${report.corpus}`);
  console.log('');
  const header = [
    'project',
    'labels',
    'div',
    'P(div)',
    'R(div)',
    'W:unif',
    'W:w-unif',
    'W:tail',
    'W:div-nm',
    'W:div-mat',
    'W',
    'P(mat)',
    'H',
    'H:false',
    'H:mat',
    'kLOC-lab',
    'W/kLOC-lab',
    'kLOC-proj',
    'W/kLOC-proj',
    'H-proj',
  ];
  const widths = [18, 6, 4, 7, 7, 6, 8, 6, 8, 9, 4, 6, 4, 7, 5, 8, 10, 9, 11, 6];
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join(' ');
  console.log(line(header));
  for (const [name, r] of rows) {
    if (r.missing) {
      console.log(`${name.padEnd(18)} (missing from the corpus)`);
      continue;
    }
    const m = r.metrics;
    const nDiv = Object.values(m.confusion.divergent).reduce((a, b) => a + b, 0);
    console.log(
      line([
        name,
        m.labels,
        nDiv,
        pct(m.divergent.precision),
        pct(m.divergent.recall),
        m.warnings.onUniform,
        m.warnings.onWarpUniform,
        m.warnings.onTail,
        m.warnings.onDivergentNotMaterial,
        `${m.warnings.onDivergentMaterial}/${m.material.labelled}`,
        m.warnings.onLabelled,
        pct(m.warnings.materialPrecision),
        m.hints.onLabelled,
        m.hints.falseAlarms,
        m.hints.onDivergentMaterial,
        (m.labelledFiles.lines / 1000).toFixed(1),
        rate(m.labelledFiles.perKLoc),
        (m.project.lines / 1000).toFixed(1),
        rate(m.project.perKLoc),
        m.project.hints,
      ]),
    );
  }
  console.log('');
  console.log(
    "P/R(div): precision and recall of the tool's `divergent` over the labelled branches (a branch the tool does not list counts as uniform).",
  );
  console.log(
    'W:<label>: divergent-branch warnings on labelled branches, by label; false alarms = W:unif + W:w-unif + W:tail;',
  );
  console.log(
    'W:div-nm = warnings on divergent branches nobody would fix; W:div-mat = warned / labelled material divergent branches.',
  );
  console.log('W = warnings on labelled branches; P(mat) = the share of them on material divergent branches.');
  console.log(
    'H = divergent-branch hints (below divergence.minCost / minShare) on labelled branches, H:false = on uniform, warp-uniform or tail code,',
  );
  console.log(
    "H:mat = on material divergent branches (a material branch given only a hint); H-proj = all hints in the project's .cu and .cuh files.",
  );
  console.log(
    'W/kLOC-lab, W/kLOC-proj: all divergent-branch warnings per 1,000 lines of the labelled files / of every .cu and .cuh file.',
  );
  console.log('');
  const confusion = (title, m) => {
    console.log(`${title}: label (rows) x tool (columns)`);
    console.log(`${''.padEnd(14)}${TOOL_KINDS.map((t) => t.padStart(13)).join('')}`);
    for (const k of LABEL_KINDS)
      console.log(`${k.padEnd(14)}${TOOL_KINDS.map((t) => String(m.confusion[k][t]).padStart(13)).join('')}`);
  };
  confusion('Confusion, all projects', report.total);
  console.log('');
  console.log("The tool's divergent verdicts by splitBy (rows) x label (columns)");
  console.log(`${''.padEnd(16)}${LABEL_KINDS.map((k) => k.padStart(13)).join('')}`);
  for (const [by, row] of Object.entries(report.splitBy))
    console.log(`${by.padEnd(16)}${LABEL_KINDS.map((k) => String(row[k]).padStart(13)).join('')}`);
  for (const [name, r] of Object.entries(report.projects)) {
    if (r.missing) continue;
    console.log('');
    confusion(`Confusion, ${name}`, r.metrics);
  }
  if (report.mismatches) {
    console.log('');
    console.log(`Mismatches (${report.mismatches.length}): label -> tool [W = warned, H = hinted]`);
    for (const x of report.mismatches) {
      const lab = x.label === 'divergent' ? `divergent${x.material ? '(material)' : ''}` : x.label;
      console.log(
        `  ${x.project}/${x.file}:${x.line}  ${lab} -> ${x.tool}${x.splitBy ? `[${x.splitBy}]` : ''}${x.warned ? ' W' : x.hinted ? ' H' : ''}  \`${x.condition}\`${x.confidence === 'medium' ? '  (medium)' : ''}`,
      );
    }
  }
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(opts.corpus) || !fs.statSync(opts.corpus).isDirectory()) {
    console.error(
      `score.mjs: no development corpus at ${opts.corpus} (set CUDA_DEV_CORPUS or --corpus; eval/branches/README.md says how to re-create it)`,
    );
    process.exit(opts.skipMissing ? 0 : 2);
  }
  if (!fs.existsSync(opts.cli)) fail(`no CLI at ${opts.cli} (run npm ci && npm run build first)`);
  let labels = readLabels(opts.labels);
  if (opts.projects.length) labels = labels.filter((l) => opts.projects.includes(l.project));
  const byProject = new Map();
  for (const l of labels) {
    if (!byProject.has(l.project)) byProject.set(l.project, []);
    byProject.get(l.project).push(l);
  }
  const mismatches = [];
  const results = [];
  const projects = {};
  const total = emptyMetrics();
  for (const [project, ls] of byProject) {
    const r = scoreProject(opts, project, ls, mismatches, results);
    projects[project] = r;
    if (!r.missing) addInto(total, r.metrics);
  }
  if (Object.values(projects).every((r) => r.missing)) {
    console.error(
      `score.mjs: none of the labelled projects is in ${opts.corpus} (eval/branches/README.md says how to re-create the corpus)`,
    );
    process.exit(opts.skipMissing ? 0 : 2);
  }
  const report = {
    cli: path.relative(process.cwd(), opts.cli) || opts.cli,
    commit: gitCommit(path.dirname(opts.cli)),
    corpus: opts.corpus,
    arch: opts.arch,
    labels: labels.length,
    projects,
    total: finish(total),
    mismatches: opts.mismatches || opts.json ? mismatches : undefined,
    results: opts.json ? results : undefined,
    splitBy: splitTable(results),
  };
  if (opts.json) console.log(JSON.stringify(report, null, 2));
  else printText(report);
}

/** The tool's `divergent` verdicts by what it says splits the warp (`splitBy`), against the labels. */
function splitTable(results) {
  const t = {};
  for (const r of results) {
    if (r.tool !== 'divergent') continue;
    const by = r.splitBy ?? 'unstated';
    t[by] ??= Object.fromEntries(LABEL_KINDS.map((k) => [k, 0]));
    t[by][r.label]++;
  }
  return t;
}

main();
