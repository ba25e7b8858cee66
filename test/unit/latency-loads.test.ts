/**
 * The latency estimate counts the loads a kernel really issues per warp and the work between them
 * (the `I` of N = L·Θ / (S·I), and the seeds' "no gap at all" case), from the PTX where it is there,
 * and says nothing where nothing tells: test/fixtures/latency, with the PTX and ptxas report nvcc
 * 13.0 wrote for sm_80. A register-tiled product needs few warps; a stream needs many; a kernel
 * written in a header gets no "1 load in flight" guess.
 */
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { createAnalyzer, type Analyzer, type DocumentReport } from '../../server/src/core/analyzer';
import { parsePtxasOutput } from '../../server/src/core/compiler/ptxas-output';
import { parsePtx } from '../../server/src/core/compiler/ptx-line-costs';
import { ptxLoadWork } from '../../server/src/core/compiler/ptx-load-work';
import { hoverText } from '../../server/src/core/report/hover-text';
import { analyzeSnippet } from '../support/analyze-snippet';
import { buildDocumentReport } from '../../server/src/core/report/document-report';
import { FiguresRegistry } from '../../server/src/core/compiler/figures-registry';
import { loadGrammarBytes } from '../support/grammar';
import { realNvccOrSkip } from '../support/nvcc';
import { runCli, sourceTree } from '../support/cli-run';
import { rmSync } from 'node:fs';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'latency');
const read = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');
const hash = (text: string) => createHash('sha256').update(text).digest('hex');
const UNIT = '/work/latency/tiles.cu';
const HEADER = '/work/latency/tiles.cuh';

describe('latency: the loads and the work from the PTX', () => {
  it('reads per iteration of the loop that loads: the lines in flight per wait and the instructions', () => {
    const works = Object.fromEntries(
      parsePtx(read('tiles.sm_80.ptx'))
        .functions.filter((f) => f.kind === 'entry')
        .map((f) => [f.name.replace(/^_Z\d+/, '').replace(/I.*|P.*/, ''), ptxLoadWork(f)]),
    );
    // Two float4 loads a step (4 lines of 128 bytes each per warp), issued together, then 512 FMAs.
    assert.deepEqual(
      { ...works.tiled_product, instructions: works.tiled_product!.instructions > 500 },
      {
        loadsInFlight: 8,
        loads: 2,
        lines: 8,
        waits: 1,
        instructions: true,
        atLeast: false,
        loop: { line: 14 },
        source: 'ptx',
      },
    );
    // One load an element, and a few instructions around it.
    assert.deepEqual(works.scale_stream, {
      loadsInFlight: 1,
      loads: 1,
      lines: 1,
      waits: 1,
      instructions: 9,
      atLeast: false,
      loop: { line: 36 },
      source: 'ptx',
    });
    // Each load waits for the one before: as many waits as loads (nvcc unrolled four hops).
    assert.equal(works.follow_links!.loadsInFlight, 1);
    assert.equal(works.follow_links!.waits, works.follow_links!.loads);
  });

  describe('in the report of the launching unit', () => {
    let analyzer: Analyzer;
    const text = read('tiles.cu');
    const reportWith = (ptx: boolean): DocumentReport => {
      const facts = analyzer.analyzeFile({ uri: UNIT, text });
      if (ptx) analyzer.setPtx(UNIT, { text: read('tiles.sm_80.ptx'), filePath: UNIT, sourceHash: hash(text) });
      else analyzer.setPtx(UNIT, { text: '', filePath: UNIT, sourceHash: 'another text' });
      return analyzer.reportOf(facts);
    };
    const hover = (report: DocumentReport, kernel: string) =>
      hoverText(report, report.analyses.find((a) => a.launch.kernelName === kernel)!.launch.nameSpan.start)!.markdown;

    before(async () => {
      analyzer = await createAnalyzer({ grammar: loadGrammarBytes(), contentHash: hash });
      analyzer.configure({
        archs: ['sm_80'],
        divergence: false,
        report: {
          latencyCycles: 0,
          occupancyWarningBelow: 0,
          divergenceMinCost: 4,
          divergenceMinShare: 8,
          divergenceEnabled: false,
        },
      });
      analyzer.index.update(HEADER, read('tiles.cuh'));
      analyzer.index.update(UNIT, text);
      const entries = parsePtxasOutput(read('tiles.sm_80.txt')).entries;
      analyzer.setCompiled(UNIT, { perArch: [{ arch: 'sm_80', entries, diagnostics: [] }], producedAt: 1 });
    });

    it('finds the register-tiled product covered by its 16 warps, and the stream at 32 warps short', () => {
      const report = reportWith(true);
      // On the default part of sm_80, at its lowest and highest published latency.
      assert.match(
        hover(report, 'tiled_product'),
        /Latency \(estimate\): 7–9 warps needed to keep the schedulers busy \(compute-bound, L = 290–640 cycles as published, 8 lines of 128 bytes in flight per warp and \d{3} instructions per iteration of the loop at line 14, from the PTX\); 16 resident, covered even at the high latency\./,
      );
      assert.match(
        hover(report, 'scale_stream'),
        /Latency \(estimate\): 24–52 warps needed to keep DRAM busy \(bandwidth-bound, L = 290–640 cycles as published, 1 line of 128 bytes in flight per warp and 9 instructions per iteration of the loop at line 36, from the PTX\); 32 resident, covered at the low latency, 61\.5% at the high\./,
      );
      assert.deepEqual(
        report.findings.filter((f) => f.code === 'latency-deficit').map((f) => f.message),
        [
          'scale_stream on sm_80: 32 warps resident, about 39 needed to keep DRAM busy (estimate: L ≈ 470 cycles, 1 line of 128 bytes in flight per warp and 9 instructions per iteration of the loop at line 36, from the PTX); 82.1% of the latency is covered. More independent loads per thread (ILP) help as much as more warps.',
        ],
      );
      // The reading per architecture (the note's), for the register-tiled product: the schedulers set the pace.
      const b = report.analyses[0].perArch[0].latency!.bandwidthBound;
      assert.deepEqual([b.warpsNeeded, b.warpsResident, b.assumptions.limit], [8, 16, 'issue']);
    });

    it('says nothing of latency for a kernel written in a header when the PTX is not there to tell: no "1 load" guess', () => {
      const report = reportWith(false);
      for (const kernel of ['tiled_product', 'scale_stream', 'follow_links']) {
        assert.doesNotMatch(hover(report, kernel), /Latency|in flight/, kernel);
        assert.equal(report.analyses.find((a) => a.launch.kernelName === kernel)!.perArch[0].latency, null);
      }
      assert.deepEqual(
        report.findings.filter((f) => f.code === 'latency-deficit'),
        [],
      );
    });
  });

  describe('from the source, without PTX', () => {
    const report = async (text: string) => {
      const facts = await analyzeSnippet(text);
      return buildDocumentReport({ facts, archs: ['sm_80'], figuresFor: new FiguresRegistry().figuresFor });
    };

    it('counts the work of a loop of multiply-adds per load, and claims no shortfall it cannot tell', async () => {
      const r = await report(`// occupancy: regs=128
__global__ void tiled(const float* __restrict__ a, const float* __restrict__ b, float* c, int steps, int tile) {
  float acc = 0;
  for (int k = 0; k < steps; ++k) {
    float x = a[k * 256 + threadIdx.x];
    float y = b[k * 256 + threadIdx.x];
    for (int j = 0; j < tile; ++j) acc += x * y + j;
  }
  c[threadIdx.x] = acc;
}
void run(const float* a, const float* b, float* c) { tiled<<<80, 256>>>(a, b, c, 64, 8); }
`);
      const p = r.analyses[0].perArch[0];
      assert.equal(p.result!.activeWarps, 16);
      const b = p.latency!.bandwidthBound;
      assert.equal(b.assumptions.independentOpsPerWarp, 2);
      assert.equal(b.assumptions.workSource, 'source');
      assert.equal(b.assumptions.loopLine, 4);
      // The inner loop's trip count is not a constant: counted once, the work is a lower bound.
      assert.equal(b.upperBound, true);
      assert.equal(b.deficitWarps, 0);
      assert.deepEqual(
        r.findings.filter((f) => f.code === 'latency-deficit'),
        [],
      );
    });

    it('makes no estimate for a kernel that loads nothing from global memory (it once claimed "1 load in flight")', async () => {
      const r = await report(`// occupancy: regs=10
__global__ void fill(unsigned* a, unsigned* b, int row) {
  unsigned x = threadIdx.x / 4, y = threadIdx.x % 4;
  a[x * row + y] = x;
  b[x * row + y] = y;
}
void run(unsigned* a, unsigned* b) { fill<<<1, 16>>>(a, b, 4); }
`);
      assert.equal(r.analyses[0].perArch[0].latency, null);
      assert.deepEqual(
        r.findings.filter((f) => f.code === 'latency-deficit'),
        [],
      );
    });
  });

  describe('in the CLI, with the real nvcc (the PTX of a unit that only launches is read too)', function () {
    this.timeout(120_000);
    const nvcc = realNvccOrSkip();

    it('notes the stream, and not the register-tiled product', async () => {
      const dir = sourceTree({ 'tiles.cu': read('tiles.cu'), 'tiles.cuh': read('tiles.cuh') });
      try {
        const run = await runCli(['check', '--nvcc', nvcc, '--arch', 'sm_80', '-q', 'tiles.cu'], dir);
        const notes = run.out.split('\n').filter((l) => l.includes('[latency-deficit]'));
        assert.equal(notes.length, 1, run.out);
        assert.match(
          notes[0],
          /^tiles\.cu:7:15: note: scale_stream on sm_80: 32 warps resident, about \d+ needed to keep DRAM busy \(estimate: L ≈ 470 cycles, 1 line of 128 bytes in flight per warp and \d+ instructions per iteration of the loop at line 36, from the PTX\)/,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
