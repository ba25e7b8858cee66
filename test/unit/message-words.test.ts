/**
 * Plurals and units right in every message a user reads: "1 block/SM", "about 1 instruction",
 * "1 load in flight", never "1 blocks/SM" or "2 warp". Every text the tool shows (findings and
 * their related notes, hovers on launches, kernels and branches, lens titles, quick-fix titles,
 * `check`'s text, `calc`'s text) is produced for the examples, the fixture corpus and snippets
 * written to bring each count down to one, and read for a count and a noun that disagree.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createAnalyzer, DEFAULT_REPORT_SETTINGS, type Analyzer } from '../../server/src/core/analyzer';
import { hoverText } from '../../server/src/core/report/hover-text';
import { lenses } from '../../server/src/core/report/lenses';
import { quickFixes } from '../../server/src/core/report/quick-fixes';
import { loadGrammarBytes } from '../support/grammar';
import { REPO_ROOT, runCli, sourceTree } from '../support/cli-run';

/** Nouns the messages count, singular → plural. */
const NOUNS: Record<string, string> = {
  block: 'blocks',
  warp: 'warps',
  thread: 'threads',
  register: 'registers',
  instruction: 'instructions',
  load: 'loads',
  line: 'lines',
  lane: 'lanes',
  SM: 'SMs',
  'issue slot': 'issue slots',
  file: 'files',
  kernel: 'kernels',
  launch: 'launches',
  note: 'notes',
  error: 'errors',
  warning: 'warnings',
  value: 'values',
  cycle: 'cycles',
  wave: 'waves',
  step: 'steps',
  case: 'cases',
  instantiation: 'instantiations',
  path: 'paths',
  iteration: 'iterations',
  byte: 'bytes',
  object: 'objects',
  figure: 'figures',
};

const plural = Object.values(NOUNS).join('|');
const singular = Object.keys(NOUNS).join('|');
/** "1 blocks", "1 issue slots" (not "1.5 blocks", "0.19 of a wave", "sm_1 ..."). */
const ONE_AND_MANY = new RegExp(`(?<![\\d.,_\\w-])1 (${plural})\\b`);
/** "2 block", "256 thread" standing alone (not "2 block slots", "16 thread blocks", "3 warp slots"). */
const MANY_AND_ONE = new RegExp(
  `(?<![\\d.,_\\w-])(?:[02-9]|[1-9]\\d+) (${singular})(?![\\w/-])(?! (?:slots?|size|sizes|blocks|index|count|level|limit|boundar|shape|of the|\\d))`,
);

function wordProblems(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const a = ONE_AND_MANY.exec(line);
    const b = MANY_AND_ONE.exec(line);
    if (a) out.push(`"${a[0]}" in: ${line.trim().slice(0, 240)}`);
    if (b) out.push(`"${b[0]}" in: ${line.trim().slice(0, 240)}`);
  }
  return out;
}

/** Snippets that bring counts down to one: a block per SM, a warp per block, a one-instruction branch, one instantiation, one load. */
const SINGULAR = {
  'one-block.cu': `// occupancy: regs=255
__global__ void heavy(const float* __restrict__ in, float* out) { out[threadIdx.x] = in[threadIdx.x]; }
void run(const float* in, float* out) { heavy<<<1, 256>>>(in, out); }
`,
  'one-warp.cu': `// occupancy: regs=32
__global__ void narrow(float* p) { p[threadIdx.x] *= 2.0f; }
void run(float* p) { narrow<<<1, 32>>>(p); narrow<<<1, 1>>>(p); }
`,
  'one-instruction.cu': `__global__ void split(float* p, int n) {
  int t = threadIdx.x;
  if (t % 2 == 0) p[t] = 1;
  if (t == 0) p[0] = 2; else p[1] = 3;
  for (int i = t; i < n; i += 33) p[i] = 0;
}
void run(float* p, int n) { split<<<1, 64>>>(p, n); }
`,
  'one-instance.cu': `// occupancy: regs=40
template <int B> __global__ void tile(float* p) { p[threadIdx.x] = B; }
template <int B> void launch(float* p) { tile<B><<<1, B>>>(p); }
void run(float* p) { launch<128>(p); }
`,
  'bounds.cu': `// occupancy: regs=64
__global__ void __launch_bounds__(64) bounded(float* p) { p[threadIdx.x] = 0; }
void run(float* p) { bounded<<<1, 96>>>(p); bounded<<<2, 64>>>(p); }
`,
};

function sources(): Array<{ name: string; text: string }> {
  const from = (dir: string) =>
    fs
      .readdirSync(dir)
      .filter((f) => /\.(cu|cuh)$/.test(f))
      .map((f) => ({
        name: path.join(path.relative(REPO_ROOT, dir), f),
        text: fs.readFileSync(path.join(dir, f), 'utf8'),
      }));
  return [
    ...from(path.join(REPO_ROOT, 'examples')),
    ...from(path.join(REPO_ROOT, 'test', 'fixtures', 'sources')),
    ...from(path.join(REPO_ROOT, 'test', 'fixtures', 'divergence')),
    ...Object.entries(SINGULAR).map(([name, text]) => ({ name, text })),
  ];
}

/** Every text the editor shows for a document: findings, hovers everywhere they are, lenses, quick-fix titles. */
function editorTexts(analyzer: Analyzer, name: string, text: string): string[] {
  const uri = `file:///words/${path.basename(name)}`;
  analyzer.index.update(`/words/${path.basename(name)}`, text);
  const report = analyzer.reportOf(analyzer.analyzeFile({ uri, text }));
  const out: string[] = [];
  for (const f of report.findings) out.push(f.message, ...f.related.map((r) => r.message));
  const spots = [
    ...report.analyses.map((a) => a.launch.nameSpan.start),
    ...report.facts.kernels.map((k) => k.nameSpan.start),
    ...report.branches.map((b) => b.conditionSpan.start),
  ];
  for (const at of spots) out.push(hoverText(report, at)?.markdown ?? '');
  out.push(...lenses(report).map((l) => l.title));
  for (const a of report.analyses)
    out.push(
      ...quickFixes(
        report,
        a.launch.span,
        report.findings.map((f) => ({ code: f.code, span: f.span })),
        analyzer.quickFixContext(uri),
      ).map((f) => `${f.title} ${f.disabled ?? ''}`),
    );
  return out;
}

describe('plurals and units in every message', function () {
  this.timeout(120_000);

  it('reads a count and its noun in agreement in the hovers, lenses, findings and fix titles', async () => {
    const analyzer = await createAnalyzer({ grammar: loadGrammarBytes() });
    analyzer.configure({
      archs: ['sm_80', 'sm_90'],
      gpus: ['A100 SXM4 40GB', 'RTX 4090'],
      divergence: true,
      report: { ...DEFAULT_REPORT_SETTINGS, occupancyWarningBelow: 100 },
    });
    const problems: string[] = [];
    let texts = 0;
    for (const { name, text } of sources()) {
      for (const t of editorTexts(analyzer, name, text)) {
        texts++;
        problems.push(...wordProblems(t).map((p) => `${name}: ${p}`));
      }
    }
    assert.ok(texts > 300, `only ${texts} texts read`);
    assert.deepEqual(problems, []);
  });

  it("reads them in agreement in check's and calc's text", async () => {
    const dir = sourceTree(Object.fromEntries(Object.entries(SINGULAR)));
    try {
      const outputs = [
        await runCli(['check', '--no-nvcc', '--verbose', '--gpu', 'A100 SXM4 40GB', '--fail-on', 'never', '.'], dir),
        await runCli(['check', '--no-nvcc', '--fail-on', 'never', '.'], dir),
        await runCli(['check', '--no-nvcc', '--verbose', '--fail-on', 'never', 'examples'], REPO_ROOT),
        await runCli(['calc', '--arch', 'sm_80', '--block', '32', '--regs', '255'], dir),
        await runCli(['calc', '--arch', 'sm_90', '--block', '1024', '--regs', '64', '--smem', '1024'], dir),
      ];
      const problems = outputs.flatMap((o) => wordProblems(o.out + o.err));
      assert.deepEqual(problems, []);
      // The words that once read wrong, where a count is one.
      const text = outputs[0].out;
      assert.match(text, / 1 block\/SM /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('catches what it is there to catch', () => {
    assert.deepEqual(
      [
        'sm_80 12.5% (1 blocks/SM)',
        'the idle lanes wait through the body (about 1 instructions, estimated from the syntax)',
        '2 warp per block',
      ].map((t) => wordProblems(t).length),
      [1, 1, 1],
    );
    assert.deepEqual(
      [
        'sm_80 12.5% (1 block/SM)',
        '16 lanes against 1; 2 issue slots; 8 warp slots; 0.19 of a wave; 1 load in flight',
        '256 threads per block, 32 blocks/SM',
      ].map((t) => wordProblems(t).length),
      [0, 0, 0],
    );
  });
});
