/**
 * Register pressure in the report (core/report/pressure-report.ts): a kernel's lines, peak and
 * ptxas's count from captured PTX and ptxas output (nvcc 13.0, sm_80, test/fixtures/ptx-pressure),
 * as the hover, the peak's lens and the heat map request show them.
 */
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { createAnalyzer, type Analyzer, type DocumentReport } from '../../server/src/core/analyzer';
import { parsePtxasOutput } from '../../server/src/core/compiler/ptxas-output';
import { hoverText } from '../../server/src/core/report/hover-text';
import { lenses } from '../../server/src/core/report/lenses';
import { pressureResult } from '../../server/src/core/report/pressure-report';
import { loadGrammarBytes } from '../support/grammar';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'ptx-pressure');
const read = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');
const hash = (text: string) => createHash('sha256').update(text).digest('hex');
const FILE = '/work/src/pressure.cu';

describe('register pressure in the report', () => {
  let analyzer: Analyzer;
  let report: DocumentReport;
  const text = read('pressure.cu');

  before(async () => {
    analyzer = await createAnalyzer({ grammar: loadGrammarBytes(), contentHash: hash });
    analyzer.configure({
      archs: ['sm_80'],
      divergence: true,
      report: {
        latencyCycles: 0,
        occupancyWarningBelow: 0,
        divergenceMinCost: 4,
        divergenceMinShare: 8,
        divergenceEnabled: true,
      },
    });
    const facts = analyzer.analyzeFile({ uri: FILE, text });
    analyzer.setCompiled(
      FILE,
      {
        perArch: [{ arch: 'sm_80', entries: parsePtxasOutput(read('pressure.sm_80.txt')).entries, diagnostics: [] }],
        producedAt: 1,
      },
      facts.kernels,
    );
    analyzer.setPtx(FILE, { text: read('pressure.sm_80.ptx'), filePath: FILE, sourceHash: hash(text) });
    report = analyzer.reportOf(facts);
  });

  it("finds each kernel's peak on its hot line, with what ptxas allocated", () => {
    const result = pressureResult(report.pressure);
    assert.equal(result.arch, 'sm_80');
    const byName = new Map(result.kernels.map((k) => [k.kernel, k]));
    assert.deepEqual([...byName.keys()], ['dot_rows', 'tile16', 'branchy']);
    // dot_rows: the strided loop (line 10, 0-based 9); tile16: the loads of t[] (line 19).
    assert.deepEqual(
      {
        peak: byName.get('dot_rows')!.peak,
        peakLine: byName.get('dot_rows')!.peakLine,
        allocated: byName.get('dot_rows')!.allocated,
      },
      { peak: 17, peakLine: 9, allocated: 12 },
    );
    assert.deepEqual(
      { peakLine: byName.get('tile16')!.peakLine, allocated: byName.get('tile16')!.allocated },
      { peakLine: 18, allocated: 32 },
    );
    // Only lines of the kernel's own span.
    const dot = byName.get('dot_rows')!;
    assert.ok(
      dot.lines.every((l) => l.line >= 6 && l.line <= 12),
      JSON.stringify(dot.lines),
    );
    assert.equal(Math.max(...dot.lines.map((l) => l.live)), dot.peak);
  });

  it('says in the hover how many values are live at a line, that it is an estimate, and where the kernel peaks', () => {
    const peak = hoverText(report, { line: 9, character: 60 });
    assert.equal(
      peak?.markdown,
      "**Register pressure (estimate):** about 17 values live at this line (PTX, before register allocation; ptxas allocated 12 on sm_80). The kernel's pressure peaks here.",
    );
    const live = report.pressure.get(report.facts.kernels[0])!.lines.find((l) => l.line === 10)!.live;
    assert.equal(
      hoverText(report, { line: 10, character: 4 })?.markdown,
      `**Register pressure (estimate):** about ${live} values live at this line (PTX, before register allocation; ptxas allocated 12 on sm_80). Counts code inlined from \`warp_sum\` at line 3. The kernel peaks at about 17 on line 10.`,
    );
    // Outside a kernel body: nothing.
    assert.equal(hoverText(report, { line: 2, character: 4 }), null);
  });

  it("puts a lens on each kernel's peak line", () => {
    const peaks = lenses(report).filter((l) => l.action === 'pressure-heatmap');
    assert.deepEqual(
      peaks.map((l) => [l.span.start.line, l.title]),
      [
        [9, 'pressure peaks here (about 17 values live)'],
        [18, `pressure peaks here (about ${report.pressure.get(report.facts.kernels[1])!.peak} values live)`],
        [
          report.pressure.get(report.facts.kernels[2])!.peakLine,
          `pressure peaks here (about ${report.pressure.get(report.facts.kernels[2])!.peak} values live)`,
        ],
      ],
    );
  });

  it('has no pressure for text the PTX was not compiled from', () => {
    const edited = `// edited\n${text}`;
    const facts = analyzer.analyzeFile({ uri: FILE, text: edited });
    assert.equal(analyzer.reportOf(facts).pressure.size, 0);
  });
});

describe('register pressure in the report from SASS (nvdisasm, documented format)', () => {
  const text = read('pressure.cu');
  // nvdisasm --print-life-ranges --print-line-info, in the format NVIDIA's CUDA Binary Utilities documentation shows.
  const sass = `
        .text._Z8dot_rowsPKfS0_Pfi:
        //## File "${FILE}", line 8
        /*0000*/                   MOV R1, c[0x0][0x28] ;              // |  1  ^          |      |
        //## File "${FILE}", line 10
        /*0010*/                   FFMA R4, R2, R3, R4 ;               // | 11  :::^       |      |
        //## File "${FILE}", line 3 inlined at "${FILE}", line 11
        /*0020*/                   SHFL.DOWN PT, R5, R4, 0x10, 0x1f ;  // | 13  ::::^      |      |
        //## File "${FILE}", line 12
        /*0030*/               @P0 RED.E.ADD.F32 [R2.64], R4 ;         // |  4  v:v:       |  1 v |
        /*0040*/                   EXIT ;                              // |  0             |      |
        .text._Z6tile16PKfPfi:
        //## File "${FILE}", line 19
        /*0000*/                   STL [R1], R4 ;                      // | 20  ::^        |      |
        //## File "${FILE}", line 24
        /*0010*/                   LDL R6, [R1] ;                      // | 22  :::^       |      |
`;
  let report: DocumentReport;

  before(async () => {
    const analyzer = await createAnalyzer({ grammar: loadGrammarBytes(), contentHash: hash });
    analyzer.configure({
      archs: ['sm_80'],
      divergence: true,
      report: {
        latencyCycles: 0,
        occupancyWarningBelow: 0,
        divergenceMinCost: 4,
        divergenceMinShare: 8,
        divergenceEnabled: true,
      },
    });
    const facts = analyzer.analyzeFile({ uri: FILE, text });
    analyzer.setCompiled(
      FILE,
      {
        perArch: [{ arch: 'sm_80', entries: parsePtxasOutput(read('pressure.sm_80.txt')).entries, diagnostics: [] }],
        producedAt: 1,
      },
      facts.kernels,
    );
    analyzer.setPtx(FILE, { text: read('pressure.sm_80.ptx'), filePath: FILE, sourceHash: hash(text), sass });
    report = analyzer.reportOf(facts);
  });

  it('reads the registers live after allocation per line, inlined code at its call, and says so in the hover (documented format)', () => {
    const result = pressureResult(report.pressure);
    // branchy has no SASS here: it keeps the PTX estimate, and so does the document's summary.
    assert.deepEqual(
      result.kernels.map((k) => [k.kernel, k.source]),
      [
        ['dot_rows', 'sass'],
        ['tile16', 'sass'],
        ['branchy', 'ptx'],
      ],
    );
    assert.equal(result.estimate, 'ptx');
    const dot = result.kernels.find((k) => k.kernel === 'dot_rows')!;
    assert.deepEqual(
      dot.lines.map((l) => [l.line, l.live]),
      [
        [7, 1],
        [9, 11],
        [10, 13],
        [11, 4],
      ],
    );
    assert.deepEqual([dot.peak, dot.peakLine, dot.allocated], [13, 10, 12]);
    assert.equal(
      hoverText(report, { line: 10, character: 4 })?.markdown,
      "**Register pressure:** 13 registers live at this line (SASS from nvdisasm, after register allocation; ptxas allocated 12 on sm_80). Counts code inlined from `warp_sum` at line 3. The kernel's pressure peaks here.",
    );
  });

  it('places no spill where ptxas reports none: local-memory accesses of a local array are not spills (documented format)', () => {
    const tile = [...report.pressure.values()].find((v) => v.kernel.name === 'tile16')!;
    assert.deepEqual(tile.localAccesses, [
      { line: 18, stores: 1, loads: 0 },
      { line: 23, stores: 0, loads: 1 },
    ]);
    assert.deepEqual(
      report.findings.filter((f) => f.code === 'register-spill-here'),
      [],
    );
  });
});
