/**
 * Figures for kernels wherever they are defined: a translation unit's ptxas entries go to the
 * kernels of the unit and of the headers it includes, a launch reads the figures of the kernel it
 * starts (by file and name, never a same-named kernel of another file), and a launch that can run
 * several instances shows their range. The compiler output is what nvcc printed for
 * test/fixtures/units (see kernels.cuh there); no compiler runs here.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  createAnalyzer,
  DEFAULT_REPORT_SETTINGS,
  type Analyzer,
  type DocumentReport,
} from '../../server/src/core/analyzer';
import { parsePtxasOutput } from '../../server/src/core/compiler/ptxas-output';
import { findFirstCompilerError } from '../../server/src/nvcc/compile-resources';
import { hoverText } from '../../server/src/core/report/hover-text';
import { lenses } from '../../server/src/core/report/lenses';
import { loadGrammarBytes } from '../support/grammar';

const UNITS = path.resolve(__dirname, '../../../test/fixtures/units');
const FILES = ['kernels.cuh', 'fill.cu', 'main.cu', 'sample.cu', 'other.cu'];
const at = (file: string) => `/work/units/${file}`;

async function workspace(): Promise<Analyzer> {
  const analyzer = await createAnalyzer({ grammar: loadGrammarBytes() });
  analyzer.configure({ archs: ['sm_80'], divergence: false, report: DEFAULT_REPORT_SETTINGS });
  for (const file of FILES) analyzer.index.update(at(file), fs.readFileSync(path.join(UNITS, file), 'utf8'));
  return analyzer;
}

/** What nvcc printed for a unit, handed to the analyzer as the CLI and the server do. */
function compiled(analyzer: Analyzer, unit: string): void {
  const text = fs.readFileSync(path.join(UNITS, unit.replace(/\.cu$/, '.sm_80.txt')), 'utf8');
  const entries = parsePtxasOutput(text, { defaultArch: 'sm_80' }).entries;
  analyzer.setCompiled(at(unit), { perArch: [{ arch: 'sm_80', entries, diagnostics: [] }], producedAt: Date.now() });
}

function report(analyzer: Analyzer, file: string): DocumentReport {
  return analyzer.reportOf(
    analyzer.analyzeFile({ uri: at(file), text: fs.readFileSync(path.join(UNITS, file), 'utf8') }),
  );
}

/** Each launch of a report: the line it is on, and its sm_80 occupancy or why there is none. */
function occupancies(r: DocumentReport): Array<[string, string]> {
  return r.analyses.map((a) => {
    const p = a.perArch[0];
    const line = r.facts.source.text.split('\n')[a.launch.span.start.line].trim();
    return [line, p.result ? `${p.result.occupancy * 100}% at ${p.figures.numRegs} regs` : `none: ${p.reason}`];
  });
}

describe('figures for kernels wherever they are defined', () => {
  it("a .cu that only launches gets its instances of the header's templates, and the kernel fill.cu defines from fill.cu's compile", async () => {
    const analyzer = await workspace();
    compiled(analyzer, 'main.cu');
    compiled(analyzer, 'fill.cu');
    assert.deepEqual(occupancies(report(analyzer, 'main.cu')), [
      [
        'gemm<T, MB><<<1, 128>>>(a, c, n);',
        'none: 2 compiled instantiations could run here (16–48 registers): 62.5%–100%',
      ],
      ['fill<<<(n + 255) / 256, 256>>>(x, 1.f, n);', '100% at 8 regs'],
      ['tile<128, false><<<n / 128, 128>>>(x, n);', '100% at 10 regs'],
      ['tile<256, true><<<(n + 255) / 256, 256>>>(x, n);', '100% at 8 regs'],
    ]);
  });

  it('a launch of an instance no unit compiled says so, and claims nothing', async () => {
    const analyzer = await workspace();
    compiled(analyzer, 'main.cu');
    const text = '#include "kernels.cuh"\nvoid more(float* x, int n) { tile<64, true><<<n / 64, 64>>>(x, n); }\n';
    analyzer.index.update(at('more.cu'), text);
    const r = analyzer.reportOf(analyzer.analyzeFile({ uri: at('more.cu'), text }));
    assert.deepEqual(occupancies(r), [
      ['void more(float* x, int n) { tile<64, true><<<n / 64, 64>>>(x, n); }', 'none: registers per thread not known'],
    ]);
    const hover = hoverText(r, r.analyses[0].launch.nameSpan.start)!.markdown;
    assert.match(
      hover,
      /Figures: registers unknown for sm_80: ptxas compiled main\.cu, with no instance of this kernel that fits this launch\./,
    );
    assert.match(
      hover,
      /registers per thread\. Its static shared memory is not known from the source and is counted as 0: more would lower these\.$/,
    );
  });

  it('opening the header shows the figures its kernels got from the units that include it', async () => {
    const analyzer = await workspace();
    compiled(analyzer, 'main.cu');
    const header = report(analyzer, 'kernels.cuh');
    const gemm = header.facts.kernels.find((k) => k.name === 'gemm')!;
    assert.deepEqual(
      analyzer
        .instancesOf(at('kernels.cuh'), gemm)
        .map((i) => `${i.signature}: ${i.resources.sm_80.numRegs}`)
        .sort(),
      ['void gemm<double, 48>(double const*, double*, int): 48', 'void gemm<float, 4>(float const*, float*, int): 16'],
    );
    const fill = header.facts.kernels.find((k) => k.name === 'fill')!;
    assert.deepEqual(
      analyzer.instancesOf(at('kernels.cuh'), fill).map((i) => i.mangledName),
      [null],
      'fill.cu is not compiled yet',
    );
    compiled(analyzer, 'fill.cu');
    assert.deepEqual(
      analyzer.instancesOf(at('kernels.cuh'), fill).map((i) => i.mangledName),
      ['_Z4fillPffi'],
      "the declaration shows its definition's figures",
    );
  });

  it('a kernel never takes the figures of a same-named kernel of another file', async () => {
    const analyzer = await workspace();
    compiled(analyzer, 'other.cu');
    const failure = findFirstCompilerError(fs.readFileSync(path.join(UNITS, 'sample.sm_80.txt'), 'utf8'))!;
    analyzer.setCompileState(at('sample.cu'), { state: 'failed', error: failure });
    assert.deepEqual(occupancies(report(analyzer, 'other.cu')), [['testKernel<<<1, 128>>>(data);', '100% at 8 regs']]);
    const sample = report(analyzer, 'sample.cu');
    assert.deepEqual(occupancies(sample), [
      ['testKernel<<<1, 256>>>(in, out);', 'none: registers per thread not known'],
    ]);
    const hover = hoverText(sample, sample.analyses[0].launch.nameSpan.start)!.markdown;
    assert.match(
      hover,
      /registers unknown for sm_80: nvcc failed on sample\.cu: `helper_cuda_missing\.h`: no such file; set `cudaOccupancy\.nvcc\.includePaths` to the folder that holds it, or use a `compile_commands\.json` \(`cudaOccupancy\.compileCommandsDir`\)/,
    );
  });

  it("a failed compile is one diagnostic at the top of the file, with nvcc's first error and what to set", async () => {
    const analyzer = await workspace();
    const failure = findFirstCompilerError(fs.readFileSync(path.join(UNITS, 'sample.sm_80.txt'), 'utf8'))!;
    analyzer.setCompileState(at('sample.cu'), { state: 'failed', error: failure });
    const diagnostics = report(analyzer, 'sample.cu').findings.filter((f) => f.code === 'nvcc-failed');
    assert.equal(diagnostics.length, 1);
    assert.deepEqual(diagnostics[0].span.start, { line: 0, character: 0 });
    assert.equal(diagnostics[0].severity, 'info');
    assert.match(
      diagnostics[0].message,
      /^nvcc failed, so register figures are missing: sample\.cu:3:10: fatal error: helper_cuda_missing\.h: No such file or directory\. To fix it, set `cudaOccupancy\.nvcc\.includePaths`/,
    );
    assert.deepEqual(
      report(analyzer, 'other.cu').findings.filter((f) => f.code === 'nvcc-failed'),
      [],
    );
    analyzer.setCompileState(at('sample.cu'), null);
    assert.deepEqual(
      report(analyzer, 'sample.cu').findings.filter((f) => f.code === 'nvcc-failed'),
      [],
    );
  });

  it('a header whose including units failed carries the diagnostic too, until one of them compiles', async () => {
    const analyzer = await workspace();
    analyzer.setCompileState(at('main.cu'), {
      state: 'failed',
      error: { text: 'main.cu(2): error: something', message: 'something', file: 'main.cu', line: 2 },
    });
    const failed = report(analyzer, 'kernels.cuh').findings.filter((f) => f.code === 'nvcc-failed');
    assert.deepEqual(
      failed.map((f) => f.message.split(':')[0]),
      ['nvcc failed (compiling main.cu), so register figures are missing'],
    );
    compiled(analyzer, 'fill.cu');
    assert.deepEqual(
      report(analyzer, 'kernels.cuh').findings.filter((f) => f.code === 'nvcc-failed'),
      [],
    );
  });

  it("while ptxas runs, the hover says so, with the register budget at the launch's block size", async () => {
    const analyzer = await workspace();
    analyzer.setCompileState(at('main.cu'), { state: 'running', archs: ['sm_80'], since: Date.now() - 3000 });
    const main = report(analyzer, 'main.cu');
    const fill = main.analyses.find((a) => a.launch.kernelName === 'fill')!;
    const hover = hoverText(main, fill.launch.nameSpan.start)!.markdown;
    assert.doesNotMatch(hover, /No occupancy/, 'the figures line says why');
    assert.match(hover, /Figures: registers not known yet for sm_80 \(ptxas running for sm_80 on main\.cu, 3 s\)\./);
    assert.match(
      hover,
      /\*\*Register budget\*\* at 256 threads \(sm_80\): 100% ≤ 32 · 75% ≤ 40 · 62\.5% ≤ 48 · 50% ≤ 64 · 37\.5% ≤ 80 · 25% ≤ 128 · 12\.5% ≤ 255 registers per thread\./,
    );
    // The header's kernels wait for the same compile.
    const header = report(analyzer, 'kernels.cuh');
    assert.equal(header.analyses.length, 0);
    assert.ok(
      lenses(main).some((l) => l.title === '256 threads · ptxas running · sm_80 100% needs ≤ 32 regs, 75% ≤ 40'),
      lenses(main)
        .map((l) => l.title)
        .join('\n'),
    );
  });

  it('says what is coming while a compile is asked for, and asks for nvcc only when it is missing', async () => {
    const analyzer = await workspace();
    const figuresLine = () => {
      const main = report(analyzer, 'main.cu');
      const fill = main.analyses.find((a) => a.launch.kernelName === 'fill')!;
      return /^Figures: .*$/m.exec(hoverText(main, fill.launch.nameSpan.start)!.markdown)![0];
    };
    const elsewhere = 'pass a build log, or add `// occupancy: regs=N` above the kernel.';
    analyzer.setCompilerStatus('starting');
    assert.equal(
      figuresLine(),
      'Figures: registers not known yet for sm_80 (starting: nvcc compiles once the settings are read).',
    );
    analyzer.setCompilerStatus('available');
    analyzer.setCompileState(at('main.cu'), { state: 'running', archs: [], since: Date.now(), queued: true });
    assert.equal(figuresLine(), 'Figures: registers not known yet for sm_80 (compiling main.cu…).');
    assert.ok(lenses(report(analyzer, 'main.cu')).some((l) => l.title.startsWith('256 threads · compiling… · sm_80')));
    analyzer.setCompileState(at('main.cu'), null);
    assert.equal(
      figuresLine(),
      `Figures: registers unknown for sm_80: no compile has covered this kernel yet; save its file or a \`.cu\` that includes it, ${elsewhere}`,
    );
    analyzer.setCompilerStatus('off');
    assert.equal(
      figuresLine(),
      `Figures: registers unknown for sm_80: nvcc is switched off (\`cudaOccupancy.nvcc.enabled\`); ${elsewhere}`,
    );
    // Compiles asked for before nvcc turned out missing will not run: no longer "compiling".
    analyzer.setCompilerStatus('available');
    analyzer.setCompileState(at('main.cu'), { state: 'running', archs: [], since: Date.now(), queued: true });
    analyzer.setCompilerStatus('missing');
    assert.equal(
      figuresLine(),
      `Figures: registers unknown for sm_80: nvcc was not found; save with nvcc available (\`cudaOccupancy.nvcc.path\`), ${elsewhere}`,
    );
  });
});
