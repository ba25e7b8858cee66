/**
 * A register cap is offered in the form the compiler honours for that kernel, and only while it
 * helps: `__launch_bounds__(threads, blocks)` on the kernel (in the header it is written in, when
 * the launch is elsewhere, its own first argument kept), `-maxrregcount` only for a kernel with
 * neither `__launch_bounds__` nor `__maxnreg__` (they take precedence over it), a cap whose ptxas
 * check gives no more blocks withdrawn with why, and every title short enough for a menu.
 */
import * as assert from 'node:assert/strict';
import { parsePtxasOutput } from '../../server/src/core/compiler/ptxas-output';
import { MAX_TITLE, quickFixes, type QuickFix } from '../../server/src/core/report/quick-fixes';
import { hoverText } from '../../server/src/core/report/hover-text';
import { DEFAULT_REPORT_SETTINGS, type Analyzer } from '../../server/src/core/analyzer';
import { applyEdits, quickFixAnalyzer } from '../support/quick-fix-harness';

/** A ptxas report of `kernels` (mangled name, registers) for sm_80. */
function ptxas(kernels: Array<[string, number]>): string {
  return kernels
    .map(
      ([name, regs]) =>
        `ptxas info    : Compiling entry function '${name}' for 'sm_80'\nptxas info    : Function properties for ${name}\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used ${regs} registers, used 1 barriers, 380 bytes cmem[0]\n`,
    )
    .join('');
}

async function workspace(files: Record<string, string>): Promise<Analyzer> {
  const analyzer = await quickFixAnalyzer(true);
  analyzer.configure({ archs: ['sm_80'], divergence: false, report: DEFAULT_REPORT_SETTINGS });
  for (const [path, text] of Object.entries(files)) analyzer.index.update(path, text);
  return analyzer;
}

function compiled(analyzer: Analyzer, unit: string, report: string): void {
  const entries = parsePtxasOutput(report, { defaultArch: 'sm_80' }).entries;
  analyzer.setCompiled(`file://${unit}`, { perArch: [{ arch: 'sm_80', entries, diagnostics: [] }], producedAt: 1 });
}

/** The fixes on the launch of `kernel` in `path`, with the other files' texts as the editor would read them. */
function fixesAt(analyzer: Analyzer, files: Record<string, string>, path: string, kernel: string) {
  const uri = `file://${path}`;
  const report = analyzer.reportOf(analyzer.analyzeFile({ uri, text: files[path] }));
  const analysis = report.analyses.find((a) => a.launch.kernelName === kernel)!;
  const fixes = quickFixes(report, analysis.launch.span, [], {
    ...analyzer.quickFixContext(uri),
    fileText: (p) => files[p] ?? null,
  });
  return { report, analysis, fixes };
}

const titles = (fixes: readonly QuickFix[]) => fixes.map((f) => (f.disabled ? `(withdrawn) ${f.title}` : f.title));

describe('quick fixes offered where the compiler honours them', () => {
  const KERNELS = `__global__ void plain(float* p) { p[threadIdx.x] = 0; }
__global__ void __launch_bounds__(256) bounded(float* p) { p[threadIdx.x] = 0; }
__global__ void __maxnreg__(128) capped(float* p) { p[threadIdx.x] = 0; }
void run(float* p) {
  plain<<<80, 256>>>(p);
  bounded<<<80, 256>>>(p);
  capped<<<80, 256>>>(p);
}
`;
  const files = { '/ws/k.cu': KERNELS };

  it('offers -maxrregcount only for a kernel with neither __launch_bounds__ nor __maxnreg__, and __launch_bounds__ for each', async () => {
    const analyzer = await workspace(files);
    compiled(
      analyzer,
      '/ws/k.cu',
      ptxas([
        ['_Z5plainPf', 64],
        ['_Z7boundedPf', 64],
        ['_Z6cappedPf', 64],
      ]),
    );
    assert.deepEqual(titles(fixesAt(analyzer, files, '/ws/k.cu', 'plain').fixes), [
      'Add __launch_bounds__(256, 5): 5 blocks/SM (62.5%)',
      'Add -maxrregcount=48 (all kernels): 5 blocks/SM (62.5%)',
    ]);
    // The bound takes precedence over -maxrregcount: only changing the bound caps this kernel.
    assert.deepEqual(titles(fixesAt(analyzer, files, '/ws/k.cu', 'bounded').fixes), [
      'Change to __launch_bounds__(256, 5): 5 blocks/SM (62.5%)',
    ]);
    assert.deepEqual(titles(fixesAt(analyzer, files, '/ws/k.cu', 'capped').fixes), [
      'Add __launch_bounds__(256, 5): 5 blocks/SM (62.5%)',
    ]);
  });

  it('withdraws a cap whose ptxas check gives no more blocks, and says why', async () => {
    const analyzer = await workspace(files);
    compiled(analyzer, '/ws/k.cu', ptxas([['_Z5plainPf', 64]]));
    const uri = 'file:///ws/k.cu';
    const report = analyzer.reportOf(analyzer.analyzeFile({ uri, text: KERNELS }));
    const [bounds, flag] = analyzer.capVariants(report).filter((v) => v.kernel.name === 'plain');
    // ptxas kept 64 registers under the flag (as it does under a bound that takes precedence), 48 under the bound.
    analyzer.setCapCheck(uri, KERNELS, flag, {
      state: 'done',
      entries: parsePtxasOutput(ptxas([['_Z5plainPf', 64]]), { defaultArch: 'sm_80' }).entries,
    });
    analyzer.setCapCheck(uri, KERNELS, bounds, {
      state: 'done',
      entries: parsePtxasOutput(ptxas([['_Z5plainPf', 48]]), { defaultArch: 'sm_80' }).entries,
    });
    const { fixes } = fixesAt(analyzer, files, '/ws/k.cu', 'plain');
    assert.deepEqual(titles(fixes), [
      'Add __launch_bounds__(256, 5): 48 regs → 62.5%',
      '(withdrawn) Add -maxrregcount=48 (all kernels)',
    ]);
    assert.equal(
      fixes[1].disabled,
      'ptxas, asked for `-maxrregcount=48`, allocated 64 registers: no more blocks fit on sm_80',
    );
    assert.equal(fixes[1].command, undefined);
  });

  it('edits the header a kernel is written in, keeping the first argument of its bound as written (a template parameter)', async () => {
    // The shape of a register-tiled GEMM: a template kernel in a header, launched from a .cu with macro arguments.
    const header = `#pragma once
template <const int BM, const int NUM_THREADS>
__global__ void __launch_bounds__(NUM_THREADS)
    tiled(float* C) { C[threadIdx.x] = BM; }
`;
    const unit = `#include "tiled.cuh"
#define K_BM 128
#define K_THREADS 256
void run(float* C) {
  tiled<K_BM, K_THREADS><<<80, K_THREADS>>>(C);
}
`;
    const both = { '/ws/tiled.cuh': header, '/ws/run.cu': unit };
    const analyzer = await workspace(both);
    compiled(analyzer, '/ws/run.cu', ptxas([['_Z5tiledILi128ELi256EEvPf', 167]]));
    const { report, analysis, fixes } = fixesAt(analyzer, both, '/ws/run.cu', 'tiled');
    assert.deepEqual(titles(fixes), ['Change to __launch_bounds__(NUM_THREADS, 2): 2 blocks/SM']);
    const [fix] = fixes;
    assert.ok(fix.edits!.every((e) => e.path === '/ws/tiled.cuh'));
    assert.equal(
      applyEdits(header, fix.edits!),
      header.replace('__launch_bounds__(NUM_THREADS)', '__launch_bounds__(NUM_THREADS, 2)'),
    );
    // The hover proposes the same bound, with what ptxas is asked for.
    assert.match(
      hoverText(report, analysis.launch.nameSpan.start)!.markdown,
      /\*\*Next step:\*\* at ≤ 128 registers per thread, 2 blocks fit \(25%\) on sm_80\. Try `__launch_bounds__\(NUM_THREADS, 2\)` \(ptxas targets ≤ 128 registers and may spill to meet it\)\./,
    );
    // Not when the header on disk is another version than the index read (the edit would land elsewhere).
    const moved = quickFixes(report, analysis.launch.span, [], {
      ...analyzer.quickFixContext('file:///ws/run.cu'),
      fileText: () => `// a new first line\n${header}`,
    });
    assert.deepEqual(moved, []);
  });

  it('gives every title in a menu-sized line', async () => {
    const analyzer = await workspace(files);
    compiled(
      analyzer,
      '/ws/k.cu',
      ptxas([
        ['_Z5plainPf', 64],
        ['_Z7boundedPf', 64],
      ]),
    );
    for (const kernel of ['plain', 'bounded'])
      for (const fix of fixesAt(analyzer, files, '/ws/k.cu', kernel).fixes)
        assert.ok(fix.title.length <= MAX_TITLE, `${fix.title.length} characters: ${fix.title}`);
  });
});
