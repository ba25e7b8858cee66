/** A launch on named GPUs: waves and tails of fixed grids, grids of ceil(n / b) blocks, grids sized from the device, clusters. */
import * as assert from 'node:assert/strict';
import { analyzeSnippet } from '../support/analyze-snippet';
import { analyzeLaunch, type KernelFigures } from '../../server/src/core/report/launch-analysis';
import { findGpuPart } from '../../server/src/core/gpu/gpu-parts';
import { ceilDivision, gridFindings, launchOnGpus } from '../../server/src/core/report/launch-on-gpus';
import { buildDocumentReport } from '../../server/src/core/report/document-report';
import { hoverText } from '../../server/src/core/report/hover-text';
import { lenses } from '../../server/src/core/report/lenses';
import { chartForTarget } from '../../server/src/core/report/chart-data';
import { checkJsonOf, runCli, sourceTree as workspace } from '../support/cli-run';

const figures = (numRegs: number): KernelFigures => ({
  numRegs,
  sharedSizeBytes: 0,
  spillStoreBytes: 0,
  spillLoadBytes: 0,
  stackFrameBytes: 0,
  barriers: 0,
  source: 'annotation',
});

async function onA100(source: string, numRegs = 32) {
  const facts = await analyzeSnippet(source);
  const launch = facts.launches[0];
  const kernel = facts.launchTargets[0].kernel;
  const analysis = analyzeLaunch(launch, kernel, kernel?.launchBounds ?? null, ['sm_80'], () => figures(numRegs));
  return { analysis, gpus: launchOnGpus(analysis, [findGpuPart('a100-80gb')!]) };
}

describe('a launch on named GPUs', () => {
  it('a fixed grid of 1.25 waves: the last wave a quarter full, a tail-effect hint with the grid of whole waves', async () => {
    // 1024 threads at 32 registers: 2 blocks per SM on sm_80, 216 per wave on 108 SMs.
    const { analysis, gpus } = await onA100(
      '__global__ void k(float* x) {}\nvoid f(float* x) { k<<<270, 1024>>>(x); }\n',
    );
    assert.equal(gpus[0].blocksPerSm, 2);
    assert.equal(gpus[0].waves!.waves, 1.25);
    const [hint] = gridFindings(analysis, gpus);
    assert.equal(hint.code, 'tail-effect');
    assert.equal(hint.severity, 'hint');
    assert.equal(
      hint.message,
      "k: 270 blocks are 1.25 waves on the A100 SXM4 80GB (2 blocks per SM × 108 SMs); the last wave runs 25% full, so about 38% of the GPU's block slots idle. A grid of 432 blocks fills whole waves.",
    );
  });

  it('a grid below the SM count: a small-grid hint', async () => {
    const { analysis, gpus } = await onA100(
      '__global__ void k(float* x) {}\nvoid f(float* x) { k<<<64, 256>>>(x); }\n',
    );
    assert.equal(gpus[0].waves!.idleSms, 44);
    assert.equal(gridFindings(analysis, gpus)[0].code, 'small-grid');
  });

  it('a grid of ceil(n / 256) blocks: waves per element, no finding', async () => {
    const { analysis, gpus } = await onA100(
      '__global__ void k(float* x, int n) {}\nvoid f(float* x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); }\n',
    );
    assert.deepEqual(gpus[0].perElement, { variable: 'n', perBlock: 256, elementsPerWave: 256 * 8 * 108 });
    assert.deepEqual(gridFindings(analysis, gpus), []);
  });

  it('a grid sized from the device is one full wave', async () => {
    const { analysis, gpus } = await onA100(
      '__global__ void k(float* x) {}\nvoid f(float* x, cudaDeviceProp p) { k<<<p.multiProcessorCount * 8, 256>>>(x); }\n',
    );
    assert.equal(gpus[0].sizedFromDevice, true);
    assert.deepEqual(gridFindings(analysis, gpus), []);
  });

  it('reads ceil divisions as written', () => {
    assert.deepEqual(ceilDivision('(n + 255) / 256'), { variable: 'n', perBlock: 256 });
    assert.deepEqual(ceilDivision('(rows + 128 - 1) / 128'), { variable: 'rows', perBlock: 128 });
    assert.deepEqual(ceilDivision('div_up(count, 512)'), { variable: 'count', perBlock: 512 });
    assert.equal(ceilDivision('(n + 254) / 256'), null);
    assert.equal(ceilDivision('n / 256'), null);
  });
});

describe('launches on named GPUs in the CLI and the hover', () => {
  const SOURCE = `// occupancy: regs=32
__global__ void scale(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] *= 2.f; }
void run(float* x) {
  scale<<<270, 1024>>>(x);
}
`;

  it('check --gpu shows each launch on the named parts, with waves, and hints at the tail', async () => {
    const dir = workspace({ 'scale.cu': SOURCE });
    const json = await checkJsonOf(['--no-nvcc', '--arch', 'sm_80,sm_90', '--gpu', 'a100-80gb,h100', 'scale.cu'], dir);
    const [launch] = json.files[0].launches;
    assert.deepEqual(
      launch.gpus!.map((g) => [g.part, g.arch, g.blocksPerSm, g.waves!.wavesRun]),
      [
        ['A100 SXM4 80GB', 'sm_80', 2, 2],
        ['H100 SXM5', 'sm_90', 2, 2],
      ],
    );
    assert.deepEqual(
      json.files[0].diagnostics.map((d: { code: string }) => d.code),
      ['tail-effect'],
    );
    const text = await runCli(['check', '--no-nvcc', '--arch', 'sm_80', '--gpu', 'a100-80gb', 'scale.cu'], dir);
    assert.match(
      text.out,
      /^ {4}270 blocks = 1\.25 waves on the A100 SXM4 80GB \(2 blocks per SM × 108 SMs = 216 per wave\): the last wave runs 25% full, and about 38% of the block slots idle over the run\. A grid of 432 blocks fills whole waves\.$/m,
    );
  });

  it('check --gpu refuses a part it does not know, and names the ones it does', async () => {
    const run = await runCli(['check', '--no-nvcc', '--gpu', 'teapot', 'scale.cu'], workspace({ 'scale.cu': SOURCE }));
    assert.equal(run.code, 2);
    assert.match(run.err, /unknown GPU teapot \(known: A100 SXM4 40GB, A100 SXM4 80GB, .*GeForce RTX 5090\)/);
  });

  it('the hover on a launch says how its grid runs on each part', async () => {
    const facts = await analyzeSnippet(SOURCE);
    const report = buildDocumentReport({
      facts,
      archs: ['sm_80'],
      figuresFor: () => figures(32),
      parts: [findGpuPart('a100-80gb')!],
    });
    const hover = hoverText(report, facts.launches[0].nameSpan.start)!;
    assert.ok(
      hover.markdown.includes(
        '**On the A100 SXM4 80GB:** 270 blocks = 1.25 waves (2 blocks per SM × 108 SMs = 216 per wave): the last wave runs 25% full',
      ),
      hover.markdown,
    );
  });

  it('the launch lens adds the waves on the first part when codeLens.waves is on, and nothing by default', async () => {
    const facts = await analyzeSnippet(SOURCE);
    const report = buildDocumentReport({
      facts,
      archs: ['sm_80'],
      figuresFor: () => figures(32),
      parts: [findGpuPart('a100-80gb')!],
    });
    const launchLens = (waves: boolean) => lenses(report, { waves }).find((l) => l.span.start.line === 3)!.title;
    assert.equal(launchLens(false), 'sm_80 100% (2 blocks/SM) · limited by warp slots and registers');
    assert.equal(
      launchLens(true),
      'sm_80 100% (2 blocks/SM) · limited by warp slots and registers · 1.25 waves on the A100 SXM4 80GB (last 25% full)',
    );
  });

  it('no waves for an occupancy that is only an upper bound (dynamic shared memory not known)', async () => {
    const facts = await analyzeSnippet(
      SOURCE.replace('scale<<<270, 1024>>>(x);', 'scale<<<270, 1024, bytes>>>(x);').replace(
        'void run(float* x)',
        'void run(float* x, int bytes)',
      ),
    );
    const report = buildDocumentReport({
      facts,
      archs: ['sm_80'],
      figuresFor: () => figures(32),
      parts: [findGpuPart('a100-80gb')!],
    });
    assert.deepEqual(report.gpus[0], []);
    assert.doesNotMatch(lenses(report, { waves: true }).find((l) => l.span.start.line === 3)!.title, /wave/);
  });

  it('the chart of a launch whose grid is ceil(n / 256) blocks has its waves against n on the part; a fixed grid has none', async () => {
    const source = SOURCE.replace('scale<<<270, 1024>>>(x);', 'scale<<<(n + 255) / 256, 256>>>(x);').replace(
      'void run(float* x)',
      'void run(float* x, int n)',
    );
    const facts = await analyzeSnippet(source);
    const report = buildDocumentReport({
      facts,
      archs: ['sm_80'],
      figuresFor: () => figures(32),
      parts: [findGpuPart('a100-80gb')!],
    });
    const data = chartForTarget(report, { kernel: 'scale', line: 3 }, () => figures(32))!;
    assert.deepEqual(
      [
        data.waves!.part,
        data.waves!.variable,
        data.waves!.perBlock,
        data.waves!.blocksPerSm,
        data.waves!.elementsPerWave,
      ],
      ['A100 SXM4 80GB', 'n', 256, 8, 256 * 8 * 108],
    );
    const fixed = buildDocumentReport({
      facts: await analyzeSnippet(SOURCE),
      archs: ['sm_80'],
      figuresFor: () => figures(32),
      parts: [findGpuPart('a100-80gb')!],
    });
    assert.equal(chartForTarget(fixed, { kernel: 'scale', line: 3 }, () => figures(32))!.waves, null);
  });
});

describe('a launch analysis kept between versions', () => {
  it('keeps where its kernel is written, not the reader of the type aliases (which holds its whole version)', async () => {
    const facts = await analyzeSnippet('__global__ void k(float* x) {}\nvoid f(float* x) { k<<<1, 128>>>(x); }\n');
    const analysis = analyzeLaunch(
      facts.launches[0],
      facts.launchTargets[0].kernel,
      null,
      ['sm_80'],
      () => figures(32),
      {},
      {
        kernelPath: '/w/a.cu',
        unit: '/w/a.cu',
        aliases: () => new Map([['scalar_t', 'float']]),
      },
    );
    assert.deepEqual(analysis.site, { kernelPath: '/w/a.cu', unit: '/w/a.cu' });
  });
});
