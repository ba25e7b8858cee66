// `npm run bench`: figures and ratios for issue 8's targets, all measured in one run so that machine noise
// cancels in the ratios. A benchmark, not a test: it prints a table, one PASS/FAIL line per target and a
// summary, writes .bench/results.json, and exits 0 whatever the figures (1 only when it cannot run).
//
//   node scripts/bench.mjs [--quick] [--profile] [--only=analysis,keystroke,cold,memory,ptxas,vsix,real,cli]
//
// --quick    smaller sample budgets (a smoke run, figures noisier)
// --profile  also CPU-profile the server on the keystroke path (node --cpu-prof on an unminified bundle)
//            and print its hot spots; the analysis pass is profiled whenever its target fails.
//            --profile-lines=N sizes the keystroke profile's document (10000 by default), --profile-edits=N
//            its edits (30): with more, the keystrokes outweigh the document's first analysis in the profile.
//
// Inputs are generated into a temporary directory by scripts/bench/generate-cuda.mjs (seeded, so every
// run measures the same text). Sample counts are bounded by time budgets so that a slow build still
// finishes in a few minutes; every figure says how many samples it rests on.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import * as os from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateCudaSource, makeRandom } from './bench/generate-cuda.mjs';
import { buildCore, buildProfilingServer, sourceLocator } from './bench/bundle.mjs';
import { LspClient } from './bench/lsp-client.mjs';
import { corpusDir, corpusFiles, realCudaSource } from './bench/real-cuda.mjs';
import { formatProfileRows, profileInProcess, summarizeProfile } from './bench/profile.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
const PROFILE = argv.includes('--profile');
const PROFILE_EDITS = Number(
  argv.find((a) => a.startsWith('--profile-edits='))?.slice('--profile-edits='.length) ?? 30,
);
const PROFILE_LINES = Number(
  argv.find((a) => a.startsWith('--profile-lines='))?.slice('--profile-lines='.length) ?? 10000,
);
const ONLY =
  argv
    .find((a) => a.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',') ?? null;
const runs = (section) => !ONLY || ONLY.includes(section);

/** The server's diagnostics debounce (DIAGNOSTICS_DELAY_MS in server/src/lsp/cuda-occupancy-server.ts). */
const DEBOUNCE_MS = 150;
/** The issue's hover target: p99 at most this, at any size. */
const HOVER_TARGET_MS = 10;
const SIZES = [1000, 10000, 25000];
const ARCHS = ['sm_80', 'sm_90'];
const BUDGET = QUICK
  ? {
      analysisWarmUpMs: 2500,
      analysisMs: 4000,
      keystrokeEdits: 40,
      keystrokeMs: 15000,
      immediateEdits: 10,
      immediateMs: 5000,
      coldRuns: 3,
      memoryFiles: 20,
    }
  : {
      analysisWarmUpMs: 2500,
      analysisMs: 8000,
      keystrokeEdits: 300,
      keystrokeMs: 45000,
      immediateEdits: 40,
      immediateMs: 12000,
      coldRuns: 7,
      memoryFiles: 20,
    };

const SERVER = join(root, 'dist', 'server', 'server.js');
const tmp = mkdtempSync(join(os.tmpdir(), 'cuda-occupancy-bench-'));
const results = {
  meta: meta(),
  analysis: [],
  keystroke: [],
  coldStart: null,
  memory: null,
  ptxas: null,
  vsix: null,
  targets: [],
  profiles: {},
};
const targets = results.targets;

function meta() {
  const git = (...args) => {
    try {
      return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  };
  return {
    date: new Date().toISOString(),
    commit: git('rev-parse', '--short', 'HEAD'),
    modifiedTrackedFiles: (git('status', '--porcelain', '--untracked-files=no') ?? '').split('\n').filter(Boolean)
      .length,
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? null,
    loadAverageAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
    debounceMs: DEBOUNCE_MS,
    quick: QUICK,
  };
}

// ---------------------------------------------------------------------------------------------- helpers

const log = (line = '') => process.stdout.write(`${line}\n`);
const ms = (x) =>
  x == null || Number.isNaN(x) ? '-' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
const round = (x, digits = 2) => (x == null ? null : Math.round(x * 10 ** digits) / 10 ** digits);

function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
const median = (values) => percentile(values, 50);

function target(name, value, limit, unit, { judgedOn, note } = {}) {
  const pass = value != null && value <= limit;
  targets.push({
    name,
    value: round(value),
    limit,
    unit,
    pass: value == null ? null : pass,
    judgedOn: judgedOn ?? null,
    note: note ?? null,
  });
}
function skipped(name, limit, unit, why) {
  targets.push({ name, value: null, limit, unit, pass: null, judgedOn: null, note: `skipped: ${why}` });
}

const sources = new Map();
function source(lines, seed = 1) {
  const key = `${seed}/${lines}`;
  if (!sources.has(key)) sources.set(key, generateCudaSource({ seed, lines }));
  return sources.get(key);
}
function writeSource(name, generated) {
  const file = join(tmp, name);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, generated.text);
  return file;
}

/** A one-character edit: insert a space at `at`, or (undo) delete the one inserted there. */
function oneCharChange(at, insert) {
  return insert
    ? { range: { start: at, end: at }, text: ' ' }
    : { range: { start: at, end: { line: at.line, character: at.character + 1 } }, text: '' };
}

// --------------------------------------------------------------------------------------- analysis cost

/**
 * What the server computes for a newly opened document, through the same facade (core/analyzer.ts):
 * on didOpen the document's first facts (parse, the text passes, kernel bodies within the first-pass
 * budget) and the workspace index's entry; the report for the first hover; then background slices
 * until no kernel body is pending, after which the diagnostics are published (toDiagnostic). With
 * `complete: false` it stops after the first pass.
 */
function makeOpenDocument(core, parser) {
  const uri = 'file:///bench/generated.cu';
  const key = core.toIndexPath('/bench/generated.cu');
  return (text, { divergence, complete = true }) => {
    const analyzer = new core.Analyzer(parser, { clock: () => performance.now(), indexKey: () => key });
    analyzer.configure({
      archs: ARCHS,
      divergence,
      report: { ...core.DEFAULT_REPORT_SETTINGS, divergenceEnabled: divergence },
    });
    const documents = analyzer.documents;
    try {
      const t0 = performance.now();
      documents.open(uri, 1, text);
      const first = documents.facts(uri);
      const t1 = performance.now();
      analyzer.index.updateFromAnalysis(key, first);
      const t2 = performance.now();
      analyzer.report(uri);
      const t3 = performance.now();
      if (!complete)
        return {
          pendingAfterFirst: first.pendingKernels,
          firstFactsMs: t1 - t0,
          indexMs: t2 - t1,
          reportMs: t3 - t2,
          firstPassMs: t3 - t0,
        };
      let slices = 0;
      while (documents.complete(uri, core.BACKGROUND_SLICE_MS)) slices++;
      const facts = documents.facts(uri);
      analyzer.report(uri).findings.map((f) => core.toDiagnostic(f, uri));
      const t4 = performance.now();
      return {
        facts,
        pendingAfterFirst: first.pendingKernels,
        slices,
        firstFactsMs: t1 - t0,
        indexMs: t2 - t1,
        reportMs: t3 - t2,
        firstPassMs: t3 - t0,
        backgroundMs: t4 - t3,
        completeMs: t4 - t0,
      };
    } finally {
      documents.dispose();
    }
  };
}

async function benchAnalysis(bundle) {
  const core = bundle.module;
  log(
    '\n## Analysis cost (in process: the core bundled from server/src, doing what the server does for a newly opened document)',
  );
  log(
    `   first pass = the document's first facts (parse, text passes, kernel bodies for ${core.FIRST_PASS_BUDGET_MS} ms) + its workspace index entry + report: what a first hover waits for`,
  );
  log(
    `   each size is measured after a warm-up of the same runs (at least 5, for ${BUDGET.analysisWarmUpMs / 1000} s), once the JIT has tiered up; a server that starts cold is the cold-start target`,
  );
  log(
    `   complete   = first pass + the background slices (${core.BACKGROUND_SLICE_MS} ms each) until every kernel body is read + diagnostics: when diagnostics are published`,
  );
  const parser = await core.createCudaParser(core.readGrammarBytes(join(root, 'dist', 'wasm')));
  const openDocument = makeOpenDocument(core, parser);
  for (const lines of SIZES) {
    const { text, lineCount, edits } = source(lines);
    // Warmed up on what is measured, until the JIT has tiered up: after a single run, the 1k-line first
    // pass took 12-19 ms in its next ten runs and 6-7 ms from the sixtieth on, so the first size measured
    // JIT warm-up, not analysis (and would have measured less in another order). The cold-start target
    // measures a server that starts cold.
    const warmUp = { runs: 0, started: performance.now() };
    openDocument(text, { divergence: true });
    while (warmUp.runs < 5 || performance.now() - warmUp.started < BUDGET.analysisWarmUpMs) {
      parser.parse(text).delete();
      openDocument(text, { divergence: true, complete: false });
      warmUp.runs++;
    }
    const warmUpMs = performance.now() - warmUp.started;
    const parseAlone = [];
    const first = [];
    const index = [];
    const firstFacts = [];
    const report = [];
    let facts = null;
    let pendingAfterFirst = 0;
    let started = performance.now();
    // At least 11 pairs: at 35k lines the budget allowed 6, and the median's ratio moved between 1.11 and 1.36 from run to run.
    for (let rep = 0; rep < 30 && (rep < 11 || performance.now() - started < BUDGET.analysisMs); rep++) {
      const t = performance.now();
      parser.parse(text).delete();
      parseAlone.push(performance.now() - t);
      // The first pass only: with divergence on, as the server runs (the background part is timed below).
      const run = openDocument(text, { divergence: true, complete: false });
      first.push(run.firstPassMs);
      index.push(run.indexMs);
      firstFacts.push(run.firstFactsMs);
      report.push(run.reportMs);
      pendingAfterFirst = run.pendingAfterFirst;
    }
    const complete = [];
    const noBodies = [];
    let slices = 0;
    started = performance.now();
    for (let rep = 0; rep < 10 && (rep < 1 || performance.now() - started < BUDGET.analysisMs); rep++) {
      const run = openDocument(text, { divergence: true });
      complete.push(run.completeMs);
      slices = run.slices;
      facts = run.facts;
      noBodies.push(openDocument(text, { divergence: false }).completeMs);
    }
    // The keystroke floor: re-parse after a one-character edit, with the old tree.
    const incremental = [];
    const r = makeRandom(7);
    for (let k = 0; k < 10; k++) {
      const at = r.pick(edits);
      const offset = offsetAt(text, at);
      const old = parser.parse(text);
      old.edit({
        startIndex: offset,
        oldEndIndex: offset,
        newEndIndex: offset + 1,
        startPosition: { row: at.line, column: at.character },
        oldEndPosition: { row: at.line, column: at.character },
        newEndPosition: { row: at.line, column: at.character + 1 },
      });
      const t = performance.now();
      const next = parser.parse(text.slice(0, offset) + ' ' + text.slice(offset), old);
      incremental.push(performance.now() - t);
      next.delete();
      old.delete();
    }
    const bodyReads = [];
    for (let k = 0; k < 5; k++) bodyReads.push(readKernelBodies(parser, text, facts.kernels));
    const bodyRead = bodyReads.sort((a, b) => a.ms - b.ms)[2];
    const parseMs = median(parseAlone);
    const row = {
      lines: lineCount,
      bytes: Buffer.byteLength(text),
      kernels: facts.kernels.length,
      launches: facts.launches.length,
      branches: facts.branches.length,
      samples: parseAlone.length,
      completeSamples: complete.length,
      parseMs: round(parseMs),
      firstPass: {
        ms: round(median(first)),
        // Each measured pass parses the text itself (DocumentStore.facts): parse + analysis, against the parse alone.
        ratio: round(median(first) / parseMs),
        workspaceIndexUpdateMs: round(median(index)),
        factsIncludingParseMs: round(median(firstFacts)),
        reportMs: round(median(report)),
        kernelsPendingAfter: pendingAfterFirst,
      },
      complete: { ms: round(median(complete)), ratio: round(median(complete) / parseMs), backgroundSlices: slices },
      withoutKernelBodies: { ms: round(median(noBodies)), ratio: round(median(noBodies) / parseMs) },
      incrementalParseMs: round(median(incremental)),
      kernelBodyRead: {
        bodies: bodyRead.bodies,
        nodes: bodyRead.nodes,
        ms: round(bodyRead.ms),
        ratio: round(bodyRead.ms / parseMs),
      },
      warmUp: { runs: warmUp.runs, ms: round(warmUpMs) },
    };
    // Kept for the other sections: how long until a newly opened file's diagnostics.
    row.parseAndAnalysisMs = round(median(complete));
    results.analysis.push(row);
    log(
      `  ${String(lineCount).padStart(6)} lines ${(row.bytes / 1e6).toFixed(2)} MB  ${row.kernels} kernels ${row.launches} launches ${row.branches} branches  n=${row.samples} (complete n=${row.completeSamples}) after a warm-up of ${row.warmUp.runs} runs (${(row.warmUp.ms / 1000).toFixed(1)} s)` +
        `\n    parse ${ms(parseMs)} ms | first pass (its parse included) ${ms(row.firstPass.ms)} ms -> / parse alone ${row.firstPass.ratio.toFixed(2)}` +
        ` (index ${ms(row.firstPass.workspaceIndexUpdateMs)} ms, facts incl. parse ${ms(row.firstPass.factsIncludingParseMs)} ms, report ${ms(row.firstPass.reportMs)} ms; ${row.firstPass.kernelsPendingAfter} of ${row.kernels} kernel bodies left to the background)` +
        `\n    complete ${ms(row.complete.ms)} ms (${slices} background slices) -> ratio ${row.complete.ratio.toFixed(2)} | without the kernel-body passes (divergence off) ${ms(row.withoutKernelBodies.ms)} ms -> ratio ${row.withoutKernelBodies.ratio.toFixed(2)}` +
        ` | incremental re-parse after one character ${ms(row.incrementalParseMs)} ms` +
        `\n    reading the ${row.kernelBodyRead.nodes} nodes of the ${row.kernelBodyRead.bodies} kernel bodies once (web-tree-sitter tree cursor: type, extent, field) ${ms(row.kernelBodyRead.ms)} ms -> / parse ${row.kernelBodyRead.ratio.toFixed(2)}` +
        ` | a complete analysis under 1.3x would leave every kernel-body pass together ${ms(Math.max(0, 1.3 - row.firstPass.ratio) * parseMs)} ms`,
    );
    target(`analysis: (parse + first pass) / parse alone at ${lineCount} lines`, row.firstPass.ratio, 1.3, 'x', {
      judgedOn: `medians (${row.samples} runs); the first pass is what a first hover and a keystroke wait for`,
      note: `complete (background kernel bodies included) ${row.complete.ratio.toFixed(2)}x; without kernel bodies ${row.withoutKernelBodies.ratio.toFixed(2)}x`,
    });
    const read = row.kernelBodyRead;
    target(`analysis: (parse + complete analysis) / parse alone at ${lineCount} lines`, row.complete.ratio, 1.3, 'x', {
      judgedOn: `medians (${row.completeSamples} runs); every kernel body analysed, when diagnostics are published`,
      note: `unreachable while kernel bodies are read through web-tree-sitter: reading their ${read.nodes} nodes once costs ${read.ratio.toFixed(2)}x parse by itself, and ${
        row.firstPass.ratio < 1.3
          ? `${(1.3 - row.firstPass.ratio).toFixed(2)}x is left after the first pass`
          : 'the first pass leaves nothing'
      }`,
    });
  }

  if (results.analysis.some((row) => row.firstPass.ratio > 1.3 || row.complete.ratio > 1.3)) {
    const locate = sourceLocator(bundle.path, root);
    // Repeated to about half a second of work, so that a small file's profile has enough samples.
    const profileOf = async (label, key, lines, msPerRun, run) => {
      const { text } = source(lines);
      const runs = Math.max(1, Math.min(50, Math.ceil(500 / msPerRun)));
      const profile = await profileInProcess(async () => {
        for (let k = 0; k < runs; k++) run(text);
      });
      const summary = summarizeProfile(profile, { locate, bundleUrl: 'bench-core.cjs', top: 15 });
      results.profiles[key] = { label, runs, ...summary };
      log(`\n  Profile: ${label}, ${runs} run${runs === 1 ? '' : 's'} (${ms(summary.busyMs)} ms busy)`);
      log('   self time:');
      log(formatProfileRows(summary.self));
      log('   inclusive time:');
      log(formatProfileRows(summary.inclusive));
    };
    // The first pass at the size where it is furthest over its target, if any; the complete analysis at the smallest.
    const worst = results.analysis.reduce((a, b) => (b.firstPass.ratio > a.firstPass.ratio ? b : a));
    const worstSize = SIZES[results.analysis.indexOf(worst)];
    if (worst.firstPass.ratio > 1.3)
      await profileOf(
        `the first pass over the ${worst.lines}-line file`,
        'analysisFirstPass',
        worstSize,
        worst.firstPass.ms,
        (text) => openDocument(text, { divergence: true, complete: false }),
      );
    const small = results.analysis[0];
    await profileOf(
      `a complete analysis of the ${small.lines}-line file (background kernel bodies included)`,
      'analysisComplete',
      SIZES[0],
      small.complete.ms,
      (text) => openDocument(text, { divergence: true }),
    );
  }
  parser.dispose();
}

function offsetAt(text, { line, character }) {
  let offset = 0;
  for (let l = 0; l < line; l++) offset = text.indexOf('\n', offset) + 1;
  return offset + character;
}

/**
 * The least a complete analysis does with the kernel bodies: visit each of their nodes once through
 * web-tree-sitter, with a tree cursor reading its type, extent, field and whether it is named (no
 * node objects). Every kernel-body pass reads at least that much; timed on a tree parsed before.
 */
function readKernelBodies(parser, text, kernels) {
  const tree = parser.parse(text);
  try {
    const lineStarts = [0];
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
    const at = ({ line, character }) => lineStarts[line] + character;
    const bodies = kernels
      .filter((k) => k.isDefinition && k.bodySpan)
      .map((k) => tree.rootNode.descendantForIndex(at(k.bodySpan.start), at(k.bodySpan.end) - 1))
      .filter((node) => node?.type === 'compound_statement');
    let nodes = 0;
    let sum = 0;
    const started = performance.now();
    for (const body of bodies) {
      const cursor = body.walk();
      for (let more = true; more;) {
        nodes++;
        sum +=
          cursor.nodeTypeId +
          cursor.startIndex +
          cursor.endIndex +
          cursor.currentFieldId +
          (cursor.nodeIsNamed ? 1 : 0);
        if (cursor.gotoFirstChild()) continue;
        while (!cursor.gotoNextSibling()) {
          if (!cursor.gotoParent()) {
            more = false;
            break;
          }
        }
      }
      cursor.delete();
    }
    return { bodies: bodies.length, nodes, ms: performance.now() - started, checksum: sum };
  } finally {
    tree.delete();
  }
}

// ------------------------------------------------------------------------------------- keystroke path

/** Settings for the LSP runs: nvcc off (the ptxas path is measured on its own, and a compile would compete for the 2 cores). */
const LSP_SETTINGS = { 'nvcc.enabled': false };
const NO_DIVERGENCE = { ...LSP_SETTINGS, 'divergence.enabled': false };

function docUri(name) {
  return pathToFileURL(join(tmp, 'docs', name)).href;
}

/**
 * This process's garbage-collection pauses, [start, end] in performance.now() time, from now until
 * stop(): a hover timed across one of them waited for the benchmark, not for the server.
 */
function gcPausesOfThisProcess() {
  const pauses = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push([entry.startTime, entry.startTime + entry.duration]);
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async stop() {
      await new Promise((resolve) => setTimeout(resolve, 0)); // entries arrive asynchronously
      observer.disconnect();
      return pauses;
    },
  };
}

/**
 * A young-generation collection of this process. Each publishDiagnostics of the 35k-line file is
 * 400 KB of JSON, parsed here: left alone, this process's young generation filled up and was
 * collected in the middle of a timed hover every few dozen edits (at 35k lines every hover over
 * 10 ms overlapped one of these pauses). keystrokeRun collects once a didChange has been written,
 * while the server waits out its 150 ms debounce: that delays neither the server nor any timing.
 */
function collectOwnYoungGeneration() {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  return () => gc({ type: 'minor' });
}
const collectOwnGarbage = collectOwnYoungGeneration();

/**
 * didChange of one character (an incremental range edit: insert a space, then delete it), then the time
 * until publishDiagnostics for that version; after it, a hover on that (analysed) version. Then hovers
 * sent right after an edit. Null when the first diagnostics do not come within `openTimeoutMs`.
 */
async function keystrokeRun({
  serverPath = SERVER,
  lines,
  settings = LSP_SETTINGS,
  nodeArgs = [],
  openTimeoutMs,
  budget,
  generated = source(lines),
  name = `keystroke-${lines}.cu`,
}) {
  writeSource(join('docs', name), generated);
  const uri = docUri(name);
  const client = await LspClient.start({
    serverPath,
    rootDir: join(tmp, 'workspace'),
    nodeArgs,
    settings,
    waitReady: true,
  });
  try {
    const opened = performance.now();
    await client.open(uri, generated.text);
    try {
      await client.waitForDiagnostics(uri, 1, openTimeoutMs);
    } catch {
      return { lines: generated.lineCount, timedOut: true, openTimeoutMs };
    }
    const openToDiagnosticsMs = performance.now() - opened;
    // Typing starts once the file is fully analysed (a big file's first diagnostics can be partial, see
    // publishDiagnostics); the time to that point is reported beside the first diagnostics.
    await client.waitForIdle();
    const openToIdleMs = performance.now() - opened;
    const r = makeRandom(lines);
    let version = 1;
    let pending = null; // where a space was inserted, to delete next
    /** `collect`: collect this process's young generation once the change is written (not before a timed hover). */
    const edit = ({ collect }) => {
      const at = pending ?? r.pick(generated.edits);
      const change = oneCharChange(at, pending === null);
      pending = pending === null ? at : null;
      version++;
      const sent = performance.now();
      void client.change(uri, version, [change]).then(() => collect && collectOwnGarbage());
      return sent;
    };
    const perEditTimeout = Math.max(60000, 3 * openToDiagnosticsMs);
    const diagnostics = [];
    const hovers = [];
    const hoverSpans = [];
    const ownPauses = gcPausesOfThisProcess();
    let started = performance.now();
    while (
      diagnostics.length < budget.keystrokeEdits &&
      (diagnostics.length < 5 || performance.now() - started < budget.keystrokeMs)
    ) {
      const sent = edit({ collect: true });
      const published = await client.waitForDiagnostics(uri, version, perEditTimeout);
      diagnostics.push(published.at - sent);
      const t = performance.now();
      const hover = await client.hover(uri, r.pick(generated.launches));
      hovers.push(performance.now() - t);
      hoverSpans.push([t, performance.now()]);
      if (!hover) throw new Error(`no hover at a launch (version ${version})`);
    }
    const immediate = [];
    const duringAnalysis = [];
    started = performance.now();
    while (
      immediate.length < budget.immediateEdits &&
      (immediate.length < 3 || performance.now() - started < budget.immediateMs)
    ) {
      edit({ collect: false });
      const t = performance.now();
      await client.hover(uri, r.pick(generated.launches));
      immediate.push(performance.now() - t);
      await client.waitForDiagnostics(uri, version, perEditTimeout);
      // Past the debounce, while the new version is analysed (issue 36: answered from the last analysis).
      edit({ collect: false });
      await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS + 10));
      const during = performance.now();
      await client.hover(uri, r.pick(generated.launches));
      if (client.diagnostics.get(uri)?.version !== version) duringAnalysis.push(performance.now() - during);
      await client.waitForDiagnostics(uri, version, perEditTimeout);
    }
    const pauses = await ownPauses.stop();
    const slow = hoverSpans.filter(([from, to]) => to - from > HOVER_TARGET_MS);
    const slowDuringOwnGc = slow.filter(([from, to]) => pauses.some(([a, b]) => a < to && b > from)).length;
    const stats = (xs, minus = 0) =>
      xs.length
        ? {
            samples: xs.length,
            p50: round(median(xs) - minus),
            p99: round(percentile(xs, 99) - minus),
            max: round(Math.max(...xs) - minus),
          }
        : null;
    return {
      lines: generated.lineCount,
      timedOut: false,
      settings,
      edits: diagnostics.length,
      openToDiagnosticsMs: round(openToDiagnosticsMs),
      openToIdleMs: round(openToIdleMs),
      diagnosticsRaw: stats(diagnostics),
      diagnosticsMinusDebounce: stats(diagnostics, DEBOUNCE_MS),
      hoverAnalysed: stats(hovers),
      hoverRightAfterEdit: stats(immediate),
      hoverDuringAnalysis: stats(duringAnalysis),
      hoversOverTarget: { count: slow.length, duringOwnGc: slowDuringOwnGc },
      rssMb: round(client.memory().rssMb, 1),
    };
  } finally {
    await client.stop();
  }
}

function logKeystroke(row, label) {
  log(
    `  ${String(row.lines).padStart(6)} lines${label}  ${row.edits} edits  (didOpen to first diagnostics ${ms(row.openToDiagnosticsMs)} ms, to every kernel body analysed ${ms(row.openToIdleMs)} ms)` +
      `\n    keystroke -> diagnostics  raw p50 ${ms(row.diagnosticsRaw.p50)} p99 ${ms(row.diagnosticsRaw.p99)} max ${ms(row.diagnosticsRaw.max)} ms` +
      ` | minus the ${DEBOUNCE_MS} ms debounce p50 ${ms(row.diagnosticsMinusDebounce.p50)} p99 ${ms(row.diagnosticsMinusDebounce.p99)} ms` +
      `\n    hover on the analysed version p50 ${ms(row.hoverAnalysed.p50)} p99 ${ms(row.hoverAnalysed.p99)} ms (n=${row.hoverAnalysed.samples}; ${row.hoversOverTarget.count} over ${HOVER_TARGET_MS} ms, ${row.hoversOverTarget.duringOwnGc} of them while this benchmark process was collecting its own garbage)` +
      (row.hoverRightAfterEdit
        ? ` | hover sent right after the edit p50 ${ms(row.hoverRightAfterEdit.p50)} p99 ${ms(row.hoverRightAfterEdit.p99)} ms (n=${row.hoverRightAfterEdit.samples})`
        : '') +
      (row.hoverDuringAnalysis
        ? `\n    hover ${DEBOUNCE_MS + 10} ms after an edit, while the new version is analysed p50 ${ms(row.hoverDuringAnalysis.p50)} p99 ${ms(row.hoverDuringAnalysis.p99)} ms (n=${row.hoverDuringAnalysis.samples})`
        : ''),
  );
}

async function benchKeystroke() {
  log(
    '\n## Keystroke path over LSP (dist/server/server.js --stdio, default settings but nvcc off; one-character incremental didChange)',
  );
  log(
    '   this process collects its own young generation once each didChange is written (the server is then in its debounce), outside every timed span',
  );
  for (const lines of [10000, 25000]) {
    const limit = lines <= 10000 ? 50 : 120;
    const openTimeoutMs = QUICK ? 15000 : lines <= 10000 ? 30000 : 45000;
    // When the in-process figure already says one analysed version takes longer than that, do not wait for it.
    const inProcess = results.analysis.find((a) => Math.abs(a.lines - lines) < lines / 10);
    const row =
      inProcess && inProcess.parseAndAnalysisMs > openTimeoutMs
        ? {
            lines: source(lines).lineCount,
            timedOut: true,
            openTimeoutMs,
            skippedBecause: `in process, a newly opened file takes ${(inProcess.parseAndAnalysisMs / 1000).toFixed(0)} s to its diagnostics`,
          }
        : await keystrokeRun({ lines, openTimeoutMs, budget: BUDGET });
    results.keystroke.push(row);
    if (row.timedOut) {
      const why = row.skippedBecause ?? `no diagnostics within ${openTimeoutMs / 1000} s of didOpen`;
      log(`  ${String(row.lines).padStart(6)} lines  not measured with the default settings: ${why}`);
      targets.push({
        name: `keystroke -> diagnostics p99 at ${row.lines} lines (minus debounce)`,
        value: null,
        limit,
        unit: 'ms',
        pass: false,
        judgedOn: null,
        note: `NOT MEASURABLE: ${why}`,
      });
      targets.push({
        name: `hover p99 at ${row.lines} lines`,
        value: null,
        limit: HOVER_TARGET_MS,
        unit: 'ms',
        pass: null,
        judgedOn: null,
        note: 'not measured (no analysed version in time)',
      });
      // What the rest of the server costs: the same run with divergence switched off (for information).
      const fallback = await keystrokeRun({
        lines,
        settings: NO_DIVERGENCE,
        openTimeoutMs: 120000,
        budget: { ...BUDGET, keystrokeMs: BUDGET.keystrokeMs / 2, immediateEdits: 0 },
      });
      fallback.label = 'divergence.enabled: false (information, not judged)';
      results.keystroke.push(fallback);
      if (!fallback.timedOut) logKeystroke(fallback, ' with divergence off (information, not judged)');
      continue;
    }
    logKeystroke(row, '');
    target(
      `keystroke -> diagnostics p99 at ${row.lines} lines (minus debounce)`,
      row.diagnosticsMinusDebounce.p99,
      limit,
      'ms',
      {
        judgedOn: `p99 of ${row.edits} edits: raw time minus the ${DEBOUNCE_MS} ms debounce, i.e. the time the server spends working`,
        note: `raw p99 ${ms(row.diagnosticsRaw.p99)} ms`,
      },
    );
    target(`hover p99 at ${row.lines} lines`, row.hoverAnalysed.p99, HOVER_TARGET_MS, 'ms', {
      judgedOn: `p99 of ${row.hoverAnalysed.samples} hovers on an analysed version`,
      note: `sent right after an edit (pays the analysis) p99 ${ms(row.hoverRightAfterEdit?.p99)} ms; of the ${row.hoversOverTarget.count} over ${HOVER_TARGET_MS} ms, ${row.hoversOverTarget.duringOwnGc} overlapped a GC pause of the benchmark process itself`,
    });
  }
}

// ------------------------------------------------------------------------------------------ cold start

async function benchColdStart() {
  log(
    '\n## Cold start (spawn dist/server/server.js to first hover answered; didOpen sent right after initialized, as VS Code does)',
  );
  const generated = source(1000);
  writeSource(join('docs', 'cold-1k.cu'), generated);
  const uri = docUri('cold-1k.cu');
  const times = [];
  const phases = [];
  const started = performance.now();
  for (let k = 0; k < BUDGET.coldRuns && (k < 3 || performance.now() - started < 20000); k++) {
    const t0 = performance.now();
    const client = await LspClient.start({
      serverPath: SERVER,
      rootDir: join(tmp, 'workspace'),
      settings: LSP_SETTINGS,
    });
    const initialized = performance.now();
    await client.open(uri, generated.text);
    const hover = await client.hover(uri, generated.launches[0]);
    const answered = performance.now();
    if (!hover) throw new Error('cold start: no hover at the first launch');
    times.push(answered - t0);
    phases.push({ initialize: initialized - t0, openToHover: answered - initialized });
    await client.stop();
  }
  const row = {
    runs: times.length,
    file: `${generated.lineCount} lines`,
    p50: round(median(times)),
    max: round(Math.max(...times)),
    initializeP50: round(median(phases.map((p) => p.initialize))),
    openToHoverP50: round(median(phases.map((p) => p.openToHover))),
  };
  results.coldStart = row;
  log(
    `  ${row.runs} runs on a ${row.file} file: p50 ${ms(row.p50)} ms, max ${ms(row.max)} ms (spawn to initialize answered ${ms(row.initializeP50)} ms, didOpen to hover ${ms(row.openToHoverP50)} ms)`,
  );
  if (row.p50 > 600) {
    // For the lead: how much of it is divergence (information, not judged).
    const off = [];
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      const client = await LspClient.start({
        serverPath: SERVER,
        rootDir: join(tmp, 'workspace'),
        settings: NO_DIVERGENCE,
        waitReady: true,
      });
      await client.open(uri, generated.text);
      await client.hover(uri, generated.launches[0]);
      off.push(performance.now() - t0);
      await client.stop();
    }
    row.divergenceOffP50 = round(median(off));
    log(
      `  with divergence off (settings read before didOpen; information, not judged): p50 ${ms(row.divergenceOffP50)} ms over 3 runs`,
    );
  }
  target('cold start: spawn to first hover', row.p50, 600, 'ms', {
    judgedOn: `median of ${row.runs} runs, ${row.file} file`,
    note: `max ${ms(row.max)} ms${row.divergenceOffP50 ? `; divergence off ${ms(row.divergenceOffP50)} ms` : ''}`,
  });
}

// ---------------------------------------------------------------------------------------------- memory

async function benchMemory() {
  const files = BUDGET.memoryFiles;
  // Opening 20 files costs 20 analysed versions: with divergence at its present cost that is many minutes.
  const tenK = results.analysis.find((row) => row.lines >= 10000 && row.lines < 20000);
  const divergenceOff = tenK ? tenK.parseAndAnalysisMs * files > 90000 : false;
  const settings = divergenceOff ? NO_DIVERGENCE : LSP_SETTINGS;
  log(
    `\n## Memory (server RSS with ${files} open 10k-line files${divergenceOff ? '; divergence off: with it, opening them would take ~' + Math.round((tenK.parseAndAnalysisMs * files) / 60000) + ' min' : ''})`,
  );
  const client = await LspClient.start({
    serverPath: SERVER,
    rootDir: join(tmp, 'workspace'),
    settings,
    waitReady: true,
  });
  try {
    const baseline = client.memory();
    const opened = [];
    for (let k = 0; k < files; k++) {
      const generated = source(10000, 100 + k);
      const uri = docUri(`memory-${k}.cu`);
      opened.push([uri, generated]);
      await client.open(uri, generated.text);
      await client.waitForDiagnostics(uri, 1, 120000);
    }
    const opened20 = client.memory();
    // A hover on each: the analyses of the documents not in use were dropped (DocumentStore's
    // ANALYSES_KEPT), so each is analysed again. Measured once that is done: the server idle.
    for (const [uri, generated] of opened) await client.hover(uri, generated.launches[0]);
    await client.waitForIdle();
    await new Promise((r) => setTimeout(r, 1000));
    const loaded = client.memory();
    const usage = await client.memoryUsage();
    const rest = usage.rssMb - usage.heapTotalMb - usage.externalMb;
    results.memory = {
      files,
      linesEach: opened[0][1].lineCount,
      divergence: !divergenceOff,
      baselineRssMb: round(baseline.rssMb, 1),
      afterOpeningRssMb: round(opened20.rssMb, 1),
      rssMb: round(loaded.rssMb, 1),
      peakRssMb: round(loaded.peakRssMb, 1),
      heapTotalMb: usage.heapTotalMb,
      heapUsedMb: usage.heapUsedMb,
      heapLimitMb: usage.heapLimitMb,
      externalMb: usage.externalMb,
      restMb: round(rest, 1),
    };
    log(
      `  baseline ${ms(baseline.rssMb)} MB | ${files} files opened, each analysed: ${ms(opened20.rssMb)} MB | then hovered in turn, server idle again: ${ms(loaded.rssMb)} MB (peak ${ms(loaded.peakRssMb)} MB)`,
    );
    log(
      `    of which: JavaScript heap ${ms(usage.heapTotalMb)} MB reserved (${ms(usage.heapUsedMb)} MB in use, garbage not yet collected included; limit ${ms(usage.heapLimitMb)} MB), external ${ms(usage.externalMb)} MB (mostly the parser's WebAssembly memory, which never shrinks), the rest (node itself, code, buffers) ${ms(rest)} MB`,
    );
    target(`memory: RSS with ${files} open 10k-line files`, loaded.rssMb, 200, 'MB', {
      judgedOn: 'VmRSS once every file was analysed and hovered and the server was idle again',
      note: `peak (VmHWM) ${ms(loaded.peakRssMb)} MB; JS heap ${ms(usage.heapTotalMb)} MB reserved, ${ms(usage.heapUsedMb)} MB used; external ${ms(usage.externalMb)} MB${divergenceOff ? '; divergence off' : ''}`,
    });
  } finally {
    await client.stop();
  }
}

// ------------------------------------------------------------------------------------------ ptxas path

function findNvcc() {
  const candidates = [];
  if (process.env.CUDA_HOME) candidates.push(join(process.env.CUDA_HOME, 'bin', 'nvcc'));
  candidates.push('/usr/local/cuda/bin/nvcc');
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir) candidates.push(join(dir, 'nvcc'));
  return candidates.find((c) => existsSync(c)) ?? null;
}

async function benchPtxas(core) {
  log('\n## ptxas path (compileResources + ResourceCache, nvcc for ' + ARCHS.join(' and ') + ')');
  const nvcc = findNvcc();
  if (!nvcc) {
    results.ptxas = { skipped: 'nvcc not found (CUDA_HOME, /usr/local/cuda, PATH)' };
    log('  skipped: nvcc not found');
    skipped('ptxas: cache hit', 5, 'ms', 'nvcc not found');
    skipped('ptxas: our overhead on a miss', 10, '%', 'nvcc not found');
    return;
  }
  const generated = source(300, 11);
  const file = writeSource('ptxas-300.cu', generated);
  const cacheDir = join(tmp, 'resource-cache');
  const isFigures = (v) =>
    v !== null && typeof v === 'object' && typeof v.arch === 'string' && Array.isArray(v.entries);
  const cache = new core.ResourceCache({ dir: cacheDir, validate: isFigures });
  const options = { nvccPath: nvcc, filePath: file, archs: ARCHS, timeoutMs: 120000, cache };

  let t = performance.now();
  const version = await core.nvccVersion(nvcc);
  const versionMs = performance.now() - t;
  t = performance.now();
  const miss = await core.compileResources(options);
  const missMs = performance.now() - t;
  if (miss.status !== 'ok') {
    results.ptxas = { skipped: `compile ${miss.status}: ${miss.firstError?.text ?? ''}` };
    log(`  skipped: the compile ended ${miss.status} (${miss.firstError?.text ?? ''})`);
    skipped('ptxas: cache hit', 5, 'ms', `compile ${miss.status}`);
    skipped('ptxas: our overhead on a miss', 10, '%', `compile ${miss.status}`);
    return;
  }
  const hits = [];
  for (let k = 0; k < 20; k++) {
    t = performance.now();
    const hit = await core.compileResources(options);
    hits.push(performance.now() - t);
    if (hit.cacheHits.length !== ARCHS.length)
      throw new Error(`expected cache hits for ${ARCHS}, got ${hit.cacheHits}`);
  }
  const diskCache = new core.ResourceCache({ dir: cacheDir, validate: isFigures });
  t = performance.now();
  const disk = await core.compileResources({ ...options, cache: diskCache });
  const diskMs = performance.now() - t;
  const overheadMs = missMs - miss.compileMs;
  const row = {
    nvcc,
    nvccVersion:
      version && typeof version === 'object'
        ? (version.build ?? version.release ?? JSON.stringify(version))
        : String(version),
    file: `${generated.lineCount} lines, ${miss.entries.length} entries`,
    nvccVersionProbeMs: round(versionMs),
    missMs: round(missMs),
    nvccMs: round(miss.compileMs),
    invocations: miss.invocations,
    overheadMs: round(overheadMs),
    overheadPercent: round((100 * overheadMs) / miss.compileMs),
    hitP50Ms: round(median(hits)),
    hitMaxMs: round(Math.max(...hits)),
    diskHitMs: round(diskMs),
    diskHitWasHit: disk.cacheHits.length === ARCHS.length,
  };
  results.ptxas = row;
  log(
    `  ${row.file}: first compile ${ms(row.missMs)} ms, of which nvcc ${ms(row.nvccMs)} ms (${row.invocations} invocation) -> our overhead ${ms(row.overheadMs)} ms = ${row.overheadPercent}%` +
      `\n  cache hit (memory) p50 ${ms(row.hitP50Ms)} ms, max ${ms(row.hitMaxMs)} ms (n=20) | cache hit from disk ${ms(row.diskHitMs)} ms | nvcc --version probe (once per process) ${ms(row.nvccVersionProbeMs)} ms`,
  );
  target('ptxas: cache hit', row.hitP50Ms, 5, 'ms', {
    judgedOn: 'median of 20 in-memory hits (both archs)',
    note: `max ${ms(row.hitMaxMs)} ms, from disk ${ms(row.diskHitMs)} ms`,
  });
  target('ptxas: our overhead on a miss', row.overheadPercent, 10, '%', {
    judgedOn:
      'compileResources wall time minus nvcc run time, over nvcc run time (version probe excluded: once per process)',
  });
  await benchPressureCost(core, nvcc);
}

/**
 * What the register pressure adds to a background compile (issue 26's budget: at most 25%), on
 * examples/nbody.cu for both archs, no cache: the figures compile alone; the same compile keeping its PTX
 * and cubin (-lineinfo -keep) plus the pressure pass over the kept PTX (what the server does now); and the
 * figures compile followed by a separate `nvcc -ptx -lineinfo` (what it did before). Runs interleaved, 5 each,
 * judged on the fastest of each (other processes on the machine only ever add time; medians are printed too). Checked fixes are not in the ratio: each proposed register cap is one more compile of a variant,
 * after the figures and the pressure are in, and only for a register-limited kernel.
 */
async function benchPressureCost(core, nvcc) {
  const file = join(root, 'examples', 'nbody.cu');
  const base = { nvccPath: nvcc, filePath: file, archs: ARCHS, timeoutMs: 120000 };
  const alone = [];
  const kept = [];
  const separate = [];
  const runs = QUICK ? 2 : 5;
  for (let k = 0; k < runs; k++) {
    let t = performance.now();
    const a = await core.compileResources(base);
    alone.push(performance.now() - t);
    t = performance.now();
    const b = await core.compileResources({ ...base, keep: true });
    const ptx = b.kept[0]?.ptx;
    if (b.status !== 'ok' || !ptx) throw new Error(`the figures compile kept no PTX (${b.status})`);
    core.modulePressure(ptx, null);
    kept.push(performance.now() - t);
    t = performance.now();
    const c = await core.compileResources(base);
    const d = await core.compilePtx({ nvccPath: nvcc, filePath: file, arch: ARCHS[0], timeoutMs: 120000 });
    if (c.status !== 'ok' || d.status !== 'ok') throw new Error(`compile failed: ${c.status} / ${d.status}`);
    core.modulePressure(d.ptx.text, null);
    separate.push(performance.now() - t);
    if (a.status !== 'ok') throw new Error(`compile failed: ${a.status}`);
  }
  const row = {
    file: 'examples/nbody.cu',
    archs: ARCHS,
    aloneMs: round(Math.min(...alone)),
    keptMs: round(Math.min(...kept)),
    separateMs: round(Math.min(...separate)),
    keptRatio: round(Math.min(...kept) / Math.min(...alone)),
    separateRatio: round(Math.min(...separate) / Math.min(...alone)),
    medianKeptRatio: round(median(kept) / median(alone)),
    medianSeparateRatio: round(median(separate) / median(alone)),
  };
  results.ptxas = { ...results.ptxas, pressureCost: row };
  log(
    `  pressure cost on ${row.file} (${ARCHS.join(' + ')}, fastest of ${runs}): figures alone ${ms(row.aloneMs)} ms; keeping PTX and cubin + pressure pass ${ms(row.keptMs)} ms (${row.keptRatio}x; median ${row.medianKeptRatio}x); figures + separate nvcc -ptx ${ms(row.separateMs)} ms (${row.separateRatio}x; median ${row.medianSeparateRatio}x, before)`,
  );
  target('ptxas: figures + pressure, over figures alone', row.keptRatio, 1.25, 'x', {
    judgedOn: `fastest wall time of ${runs} interleaved runs each, examples/nbody.cu, ${ARCHS.join(' + ')}, no cache`,
    note: `the separate nvcc -ptx it replaces: ${row.separateRatio}x; checked fixes add one compile per proposed cap, after these`,
  });
}

// ---------------------------------------------------------------------------------------------- .vsix

function benchVsix() {
  log('\n## .vsix size');
  const vsce = join(root, 'node_modules', '.bin', 'vsce');
  if (!existsSync(vsce)) {
    results.vsix = { skipped: '@vscode/vsce is not installed' };
    log('  skipped: @vscode/vsce is not installed');
    skipped('.vsix size', 3, 'MB', '@vscode/vsce is not installed');
    return;
  }
  const out = join(tmp, 'bench.vsix');
  const pack = (extra) =>
    spawnSync(vsce, ['package', '--no-dependencies', '--skip-license', ...extra, '-o', out], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 180000,
    });
  const lastLines = (run) =>
    (run.stderr || run.stdout || '').trim().split('\n').slice(-3).join(' ').replace(/\s+/g, ' ');
  // The same flags as `npm run package`: the package has no repository URL to rewrite README links against.
  const run = pack(['--allow-missing-repository', '--no-rewrite-relative-links']);
  if (run.status !== 0 || !existsSync(out)) {
    results.vsix = { skipped: `vsce failed: ${lastLines(run)}` };
    log(`  skipped: ${results.vsix.skipped}`);
    skipped('.vsix size', 3, 'MB', 'vsce package failed');
    return;
  }
  const mb = statSync(out).size / 1024 / 1024;
  const contents = (run.stdout.match(/^\s*[├└]─ .*$/gm) ?? []).map((l) => l.replace(/^[\s│├└─]+/, '').trim());
  const files = Number(/Packaged: .*\((\d+) files/.exec(run.stdout)?.[1] ?? NaN);
  results.vsix = { mb: round(mb), files, contents, vscodeignore: existsSync(join(root, '.vscodeignore')) };
  log(
    `  ${mb.toFixed(2)} MB, ${files} files${results.vsix.vscodeignore ? '' : ' (no .vscodeignore: everything not git-ignored is packaged)'}`,
  );
  for (const line of contents) log(`    ${line}`);
  target('.vsix size', mb, 3, 'MB', {
    judgedOn: 'npm run package (vsce package --no-dependencies --allow-missing-repository --no-rewrite-relative-links)',
    note: null,
  });
}

// ------------------------------------------------------------------------------- server CPU profile

async function profileServer() {
  log('\n## CPU profiles of the server (unminified bundle of server/src, node --cpu-prof)');
  const outDir = join(tmp, 'profiling');
  const serverPath = await buildProfilingServer({ root, outDir });
  const locate = sourceLocator(serverPath, root);
  const profiled = async (label, key, work) => {
    const profDir = join(tmp, `cpu-prof-${key}`);
    mkdirSync(profDir, { recursive: true });
    await work(['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=250']);
    // One profile per thread (node names them CPU.<date>.<pid>.<thread>.<seq>): the server's own thread
    // analyses, the connection's thread answers from snapshots, the fresh-parse thread parses.
    const files = readdirSync(profDir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .sort();
    if (files.length === 0) {
      log(`  ${label}: no profile was written`);
      return;
    }
    for (const [i, file] of files.entries()) {
      const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8'));
      const summary = summarizeProfile(profile, { locate, bundleUrl: 'server/server.js', top: 20 });
      const thread = files.length > 1 ? ` [thread ${file.split('.').slice(-3, -2)[0]}]` : '';
      results.profiles[i === 0 ? key : `${key}-${i}`] = { label: label + thread, ...summary };
      log(`\n  ${label}${thread} (${ms(summary.busyMs)} ms busy):`);
      log('   self time:');
      log(formatProfileRows(summary.self));
      log('   inclusive time:');
      log(formatProfileRows(summary.inclusive));
    }
  };
  // Divergence is switched off in the keystroke profile when one version with it takes longer than ~10 s
  // (its own profile is printed with the analysis); the rest of the keystroke path is what this one shows.
  // Without the analysis section (--only=keystroke) there is nothing to judge by: divergence stays on.
  const tenK = results.analysis.find((row) => row.lines >= 10000 && row.lines < 20000);
  const slowDivergence = results.analysis.length > 0 && (!tenK || tenK.parseAndAnalysisMs > 10000);
  await profiled(
    `keystroke path: a ${Math.round(PROFILE_LINES / 1000)}k-line file, open + ${PROFILE_EDITS} one-character edits with a hover after each${slowDivergence ? ', divergence off' : ''}`,
    'serverKeystroke',
    (nodeArgs) =>
      keystrokeRun({
        serverPath,
        lines: PROFILE_LINES,
        nodeArgs,
        settings: slowDivergence ? NO_DIVERGENCE : LSP_SETTINGS,
        openTimeoutMs: 120000,
        budget: {
          keystrokeEdits: PROFILE_EDITS,
          keystrokeMs: 300000,
          immediateEdits: 0,
          immediateMs: 0,
        },
      }),
  );
  await profiled(
    'cold start: spawn, initialize, open a 1k-line file, first hover',
    'serverColdStart',
    async (nodeArgs) => {
      const generated = source(1000);
      writeSource(join('docs', 'cold-profile-1k.cu'), generated);
      const uri = docUri('cold-profile-1k.cu');
      const client = await LspClient.start({
        serverPath,
        rootDir: join(tmp, 'workspace'),
        nodeArgs,
        settings: LSP_SETTINGS,
      });
      await client.open(uri, generated.text);
      await client.hover(uri, generated.launches[0]);
      await client.stop();
    },
  );
}

// ------------------------------------------------------------------------------------------ real code

/**
 * The same targets on real code: documents of about 10k and 25k lines joined from the development
 * corpus, edited where a client edits (a character at the start of a random line), a first open,
 * the complete analysis against the parse, and the CLI over each whole project against the parse
 * of its bytes on one core. Skipped, with one line, when there is no corpus.
 */
async function benchRealCode(core) {
  log('\n## Real code (the development corpus)');
  const dir = corpusDir(root);
  if (!dir) {
    log('  skipped: no development corpus (set CUDA_DEV_CORPUS, or make ../dev-corpus as eval/README.md says)');
    for (const name of [
      'real code: keystroke -> diagnostics p99 at 10k lines (minus debounce)',
      'real code: keystroke -> diagnostics p99 at 25k lines (minus debounce)',
    ]) {
      targets.push({
        name,
        value: null,
        limit: name.includes('25k') ? 120 : 50,
        unit: 'ms',
        pass: null,
        judgedOn: null,
        note: 'no corpus',
      });
    }
    return;
  }
  results.real = { keystroke: [], analysis: [], cli: [] };
  const parser = core
    ? await core.module.createCudaParser(core.module.readGrammarBytes(join(root, 'dist', 'wasm')))
    : null;
  for (const [lines, limit] of [
    [10000, 50],
    [25000, 120],
  ]) {
    const generated = realCudaSource(dir, lines, makeRandom(lines));
    // In process: the parse alone, and what a newly opened file's diagnostics wait for.
    if (parser && core) {
      const openDocument = makeOpenDocument(core.module, parser);
      const parseMs = [];
      const completeMs = [];
      for (let k = 0; k < (QUICK ? 3 : 5); k++) {
        const t0 = performance.now();
        parser.parse(generated.text).delete();
        parseMs.push(performance.now() - t0);
        completeMs.push(openDocument(generated.text, { divergence: true }).completeMs);
      }
      const ratio = round(median(completeMs) / median(parseMs), 2);
      results.real.analysis.push({
        lines: generated.lineCount,
        files: generated.files,
        parseMs: round(median(parseMs)),
        completeMs: round(median(completeMs)),
        ratio,
      });
      log(
        `  ${generated.lineCount} lines of ${generated.files} files: parse ${ms(median(parseMs))} ms, first open to diagnostics (complete analysis) ${ms(median(completeMs))} ms = ${ratio}x the parse`,
      );
      target(`real code: first open to diagnostics / parse at ${Math.round(lines / 1000)}k lines`, ratio, 1.5, 'x', {
        judgedOn: 'median of the in-process runs',
      });
    }
    const row = await keystrokeRun({
      lines,
      generated,
      name: `real-${lines}.cu`,
      openTimeoutMs: 60000,
      budget: { ...BUDGET, keystrokeEdits: QUICK ? 40 : 200 },
    });
    row.real = true;
    results.real.keystroke.push(row);
    if (row.timedOut) {
      log(`  ${row.lines} lines: no diagnostics within ${row.openTimeoutMs / 1000} s of didOpen`);
      continue;
    }
    logKeystroke(row, ' (real code, edits at the start of random lines)');
    target(
      `real code: keystroke -> diagnostics p99 at ${Math.round(lines / 1000)}k lines (minus debounce)`,
      row.diagnosticsMinusDebounce.p99,
      limit,
      'ms',
      {
        judgedOn: `p99 of ${row.edits} edits`,
        note: `raw p99 ${ms(row.diagnosticsRaw.p99)} ms, p50 ${ms(row.diagnosticsMinusDebounce.p50)} ms`,
      },
    );
    target(`real code: hover p99 at ${Math.round(lines / 1000)}k lines`, row.hoverAnalysed.p99, HOVER_TARGET_MS, 'ms', {
      judgedOn: `p99 of ${row.hoverAnalysed.samples} hovers`,
    });
  }
  await benchCliOnCorpus(dir, parser);
  parser?.dispose();
}

/**
 * `check --no-nvcc` over each whole project of the corpus, with the default --jobs (worker
 * threads on every core) and with --jobs 1 (in process), against tree-sitter parsing the same
 * bytes on one core. The target is judged on the default.
 */
async function benchCliOnCorpus(dir, parser) {
  results.real ??= { keystroke: [], analysis: [], cli: [] };
  const cli = join(root, 'dist', 'cli', 'cuda-occupancy.js');
  const timeCli = (project, jobs) => {
    const t0 = performance.now();
    const run = spawnSync(
      process.execPath,
      [cli, 'check', '--no-nvcc', '--format', 'json', '--fail-on', 'never', ...jobs, join(dir, project)],
      { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
    );
    return { ms: performance.now() - t0, status: run.status };
  };
  const rate = (files, bytes, t) =>
    `${(files / (t / 1000)).toFixed(0)} files/s, ${(bytes / 1e6 / (t / 1000)).toFixed(2)} MB/s`;
  log(`  check --no-nvcc, default --jobs on ${os.availableParallelism?.() ?? os.cpus().length} CPUs, and --jobs 1:`);
  for (const project of readdirSync(dir).sort()) {
    const files = corpusFiles(dir, project);
    if (files.length === 0) continue;
    const bytes = files.reduce((n, f) => n + statSync(f).size, 0);
    let parseMs = null;
    if (parser) {
      const t0 = performance.now();
      for (const f of files) parser.parse(readFileSync(f, 'utf8')).delete();
      parseMs = performance.now() - t0;
    }
    const parallel = timeCli(project, []);
    const serial = timeCli(project, ['--jobs', '1']);
    const ratio = parseMs ? round(parallel.ms / parseMs, 2) : null;
    const serialRatio = parseMs ? round(serial.ms / parseMs, 2) : null;
    results.real.cli.push({
      project,
      files: files.length,
      bytes,
      cliMs: round(parallel.ms),
      serialMs: round(serial.ms),
      parseMs: parseMs && round(parseMs),
      ratio,
      serialRatio,
      status: parallel.status,
      serialStatus: serial.status,
    });
    log(
      `  check --no-nvcc ${project}: ${files.length} files, ${(bytes / 1e6).toFixed(2)} MB in ${ms(parallel.ms)} ms (${rate(files.length, bytes, parallel.ms)}${ratio ? `, ${ratio}x the parse` : ''}); --jobs 1 ${ms(serial.ms)} ms (${rate(files.length, bytes, serial.ms)}${serialRatio ? `, ${serialRatio}x` : ''}); the parse alone ${parseMs ? `${ms(parseMs)} ms (${(bytes / 1e6 / (parseMs / 1000)).toFixed(2)} MB/s)` : 'not measured'}`,
    );
    if (ratio !== null)
      target(`real code: check --no-nvcc / parse, ${project}`, ratio, 2, 'x', {
        judgedOn: 'one run, the CLI process (default --jobs) against the parse of the same files in this process',
        note: `${files.length} files, ${(bytes / 1e6).toFixed(2)} MB; --jobs 1: ${serialRatio}x`,
      });
  }
}

// ---------------------------------------------------------------------------------------------- main

async function main() {
  if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`npm run build\` first (npm run bench does)`);
  const started = performance.now();
  log(
    `CUDA Occupancy Lens benchmark  ${results.meta.date}  commit ${results.meta.commit}${results.meta.modifiedTrackedFiles ? ` (+${results.meta.modifiedTrackedFiles} modified files)` : ''}`,
  );
  log(
    `node ${results.meta.node}, ${results.meta.cpus} CPUs (${results.meta.cpuModel}), load average ${results.meta.loadAverageAtStart.join(' ')}${QUICK ? ', --quick' : ''}`,
  );
  log(`inputs: generated by scripts/bench/generate-cuda.mjs into ${tmp}`);

  const core =
    runs('analysis') || runs('ptxas') || runs('real') || runs('cli') ? await buildCore({ root, outDir: tmp }) : null;
  // The .vsix first, while the tree holds nothing of ours.
  if (runs('vsix')) benchVsix();
  if (runs('analysis')) await benchAnalysis(core);
  mkdirSync(join(tmp, 'workspace'), { recursive: true }); // an empty workspace root: nothing to index
  if (runs('keystroke')) await benchKeystroke();
  if (runs('cold')) await benchColdStart();
  if (runs('memory')) await benchMemory();
  if (runs('ptxas')) await benchPtxas(core.module);
  if (runs('real')) await benchRealCode(core);
  // The CLI part of the real-code section alone.
  else if (runs('cli')) {
    const dir = corpusDir(root);
    if (!dir) log('\n## check over the development corpus\n  skipped: no development corpus (set CUDA_DEV_CORPUS)');
    else {
      log('\n## check over the development corpus');
      const parser = await core.module.createCudaParser(core.module.readGrammarBytes(join(root, 'dist', 'wasm')));
      await benchCliOnCorpus(dir, parser);
      parser.dispose();
    }
  }
  if (PROFILE) await profileServer();

  results.meta.loadAverageAtEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  results.meta.seconds = round((performance.now() - started) / 1000, 1);
  printSummary();
  mkdirSync(join(root, '.bench'), { recursive: true });
  writeFileSync(join(root, '.bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  log(
    `\nwrote .bench/results.json (${results.meta.seconds} s, load average at end ${results.meta.loadAverageAtEnd.join(' ')})`,
  );
}

function printSummary() {
  log('\n## Targets');
  const width = Math.max(...targets.map((t) => t.name.length));
  for (const t of targets) {
    const status = t.pass === null ? 'SKIP' : t.pass ? 'PASS' : 'FAIL';
    const value = t.value === null ? '-' : `${t.value} ${t.unit}`;
    log(
      `${status}  ${t.name.padEnd(width)}  ${value.padStart(12)}  (target <= ${t.limit} ${t.unit})${t.note ? `  ${t.note}` : ''}`,
    );
  }
  const passed = targets.filter((t) => t.pass === true).length;
  const failed = targets.filter((t) => t.pass === false).length;
  const skippedCount = targets.filter((t) => t.pass === null).length;
  log(
    `\nSummary: ${passed} passed, ${failed} failed, ${skippedCount} skipped. Diagnostics targets are judged on the raw time minus the ${DEBOUNCE_MS} ms debounce (the server's working time); the raw figures are printed beside them.`,
  );
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench failed: ${error.stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  // BENCH_KEEP_TMP=1 keeps the inputs and the CPU profiles (their folder is printed at the start).
  if (!process.env.BENCH_KEEP_TMP) rmSync(tmp, { recursive: true, force: true });
}
