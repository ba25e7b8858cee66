/**
 * Null beats wrong: a launch figure the source does not fix is never shown as a number. A partly
 * known block is unknown (shown with what is known), an occupancy computed without the dynamic
 * shared memory is an upper bound and says so, and a launch that cannot run says "launch fails" in
 * the hover, the lens, the CLI's text and its JSON instead of "0%".
 */
import * as assert from 'node:assert/strict';
import { analyzeSnippet } from '../support/analyze-snippet';
import { buildDocumentReport } from '../../server/src/core/report/document-report';
import { FiguresRegistry } from '../../server/src/core/compiler/figures-registry';
import { launchHoverMarkdown, launchLensTitle, kernelLensTitle } from '../../server/src/core/report/launch-report';
import { checkJsonOf, runCli, sourceTree } from '../support/cli-run';

const report = async (text: string, archs = ['sm_80']) => {
  const facts = await analyzeSnippet(text);
  return buildDocumentReport({ facts, archs, figuresFor: new FiguresRegistry().figuresFor });
};

describe('launch numbers: a partly known block is unknown', () => {
  const text = [
    '// occupancy: regs=32',
    'template <int ROWS>',
    '__global__ void rows(float* a) { a[threadIdx.y * 32 + threadIdx.x] = 0; }',
    'template <int ROWS>',
    'void run(float* a) {',
    '  const dim3 threads = {32u, ROWS, 1};',
    '  rows<ROWS><<<1, threads>>>(a);',
    '}',
    'void other(float* a) {',
    '  constexpr int ROWS = 1;',
    '  run<ROWS>(a);',
    '}',
    // An instance no call shows: the template's own launch is not read over the calls.
    'template void run<4>(float*);',
  ].join('\n');

  it('does not take a template parameter for a constant of the same name elsewhere: the block is 32 × ? × 1, not 32 threads', async () => {
    const r = await report(text);
    const [a] = r.analyses;
    assert.equal(a.launch.block.value, null);
    assert.equal(a.threadsPerBlock, null);
    assert.equal(a.launch.block.known, '32 × ? × 1');
    assert.equal(a.launch.block.note, '`ROWS` is a template parameter of `run`, known only per instantiation');
    assert.equal(a.perArch[0].result, null);
    assert.match(
      launchHoverMarkdown(a),
      /^\*\*rows\\<ROWS\\>\*\*: block size `threads` = 32 × \? × 1 not known statically \(`ROWS` is a template parameter of `run`, known only per instantiation\)/,
    );
  });

  it('reads a number suffix as part of the number, not as a name (`32u`)', async () => {
    const r = await report(
      '__global__ void k(float* a) {}\ntemplate <int R> void h(float* a) { k<<<1, dim3(32u, R)>>>(a); }\n',
    );
    assert.equal(r.analyses[0].launch.block.note, '`R` is a template parameter of `h`, known only per instantiation');
  });
});

describe('launch numbers: unknown dynamic shared memory gives an upper bound', () => {
  const text = [
    '// occupancy: regs=32',
    '__global__ void scan(float* a) { extern __shared__ float tile[]; tile[threadIdx.x] = a[threadIdx.x]; }',
    'void run(float* a, int bytes) { scan<<<1, 256, bytes>>>(a); }',
  ].join('\n');

  it('marks the figure as an upper bound in the analysis, the hover and the lenses, with no next step or latency claim', async () => {
    const r = await report(text, ['sm_80', 'sm_90']);
    const [a] = r.analyses;
    assert.deepEqual(
      a.perArch.map((p) => [p.arch, p.result?.occupancy, p.upperBound, p.nextStep, p.latency]),
      [
        ['sm_80', 1, 'dynamic shared memory not known', null, null],
        ['sm_90', 1, 'dynamic shared memory not known', null, null],
      ],
    );
    const hover = launchHoverMarkdown(a);
    assert.match(
      hover,
      /\| occupancy \| \*\*≤ 100%\*\* · ≤ 8 blocks\/SM · ≤ 64\/64 warps \| \*\*≤ 100%\*\* · ≤ 8 blocks\/SM · ≤ 64\/64 warps \|/,
    );
    assert.match(
      hover,
      /Upper bounds for sm_80 and sm_90: dynamic shared memory not known \(`bytes`\), and every byte of it per block can only lower them\./,
    );
    assert.doesNotMatch(hover, /Next step|Latency/);
    assert.equal(
      launchLensTitle(a),
      'sm_80 ≤ 100% (≤ 8 blocks/SM) · sm_90 ≤ 100% (≤ 8 blocks/SM) · limited by warp slots and registers · upper bound: dynamic shared memory not known',
    );
    assert.match(kernelLensTitle(r.facts.kernels[0], r.analyses), /^sm_80 ≤ 100% · sm_90 ≤ 100% at 256 threads/);
  });

  it('says so in the CLI: `≤` in the text, `upperBound` in the JSON (the other fields kept)', async () => {
    const dir = sourceTree({ 'scan.cu': text });
    const run = await runCli(['check', 'scan.cu', '--no-nvcc', '--arch', 'sm_80'], dir);
    assert.match(
      run.out,
      /\n {4}sm_80 {3}≤ 100% {2}≤ 8 blocks\/SM {2}≤ 64\/64 warps {2}limited by warp slots and registers {2}\[32 regs, annotation\] {2}\(upper bound: dynamic shared memory not known\)\n/,
    );
    const json = await checkJsonOf(['scan.cu', '--no-nvcc', '--arch', 'sm_80'], dir);
    const occ = json.files[0].launches[0].occupancy.sm_80!;
    assert.equal(occ.occupancy, 1);
    assert.equal(occ.activeBlocksPerMultiprocessor, 8);
    assert.equal(occ.upperBound, true);
    assert.equal(occ.upperBoundReason, 'dynamic shared memory not known');
    assert.equal(json.files[0].launches[0].dynamicSmemBytes, null);
  });

  it('is exact when the dynamic shared memory is known', async () => {
    const r = await report(text.replace('bytes>>>', '1024>>>'));
    assert.equal(r.analyses[0].perArch[0].upperBound, null);
    assert.notEqual(r.analyses[0].perArch[0].latency, null);
  });
});

describe('launch numbers: a launch that fails says so everywhere', () => {
  const text = [
    '// occupancy: regs=32',
    '__global__ void wide(float* a) { a[threadIdx.x] = 0; }',
    'void run(float* a) { wide<<<1, 2048>>>(a); }',
  ].join('\n');

  it('gives no occupancy above 1024 threads per block: the hover and the lens say the launch fails, beside the error', async () => {
    const r = await report(text);
    const [a] = r.analyses;
    assert.equal(a.perArch[0].result, null);
    assert.equal(a.perArch[0].fails, 'the launch fails: 2048 threads per block is above the limit of 1024');
    const hover = launchHoverMarkdown(a);
    assert.doesNotMatch(hover, /0%|warp slots/);
    assert.match(
      hover,
      /No occupancy for sm_80: the launch fails: 2048 threads per block is above the limit of 1024\./,
    );
    assert.equal(
      launchLensTitle(a),
      '2048 threads · the launch fails: 2048 threads per block is above the limit of 1024',
    );
    assert.ok(r.findings.some((f) => f.code === 'block-too-large' && f.severity === 'error'));
  });

  it('prints "launch fails" in the CLI text and JSON, not "0%, 0 blocks/SM, limited by warp slots"', async () => {
    const dir = sourceTree({ 'wide.cu': text });
    const run = await runCli(['check', 'wide.cu', '--no-nvcc', '--arch', 'sm_80'], dir);
    assert.match(run.out, /\n {4}sm_80 {8}- {2}the launch fails: 2048 threads per block is above the limit of 1024\n/);
    assert.doesNotMatch(run.out, /0 blocks\/SM/);
    const json = await checkJsonOf(['wide.cu', '--no-nvcc', '--arch', 'sm_80'], dir);
    assert.equal(json.files[0].launches[0].occupancy.sm_80, null);
    assert.equal(
      json.files[0].launches[0].launchFails,
      'the launch fails: 2048 threads per block is above the limit of 1024',
    );
  });

  it('says the launch fails when not one block fits (too many resources), keeping the calculator answer in the JSON', async () => {
    const r = await report(text.replace('regs=32', 'regs=255').replace('2048', '1024'));
    const [p] = r.analyses[0].perArch;
    assert.equal(p.result?.activeBlocksPerMultiprocessor, 0);
    assert.equal(
      p.fails,
      'the launch fails: not one block fits on an SM (registers; too many resources requested for launch)',
    );
    const hover = launchHoverMarkdown(r.analyses[0]);
    assert.doesNotMatch(hover, /\| occupancy \|/);
    assert.match(hover, /No occupancy for sm_80: the launch fails: not one block fits on an SM/);
    assert.match(launchLensTitle(r.analyses[0]), /^1024 threads · the launch fails: not one block fits on an SM/);
  });
});
