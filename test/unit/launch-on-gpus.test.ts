/** A launch on named GPUs: waves and tails of fixed grids, grids of ceil(n / b) blocks, grids sized from the device, clusters. */
import * as assert from 'node:assert/strict';
import { analyzeSnippet } from '../support/analyze-snippet';
import { analyzeLaunch, type KernelFigures } from '../../server/src/core/report/launch-analysis';
import { findGpuPart } from '../../server/src/core/gpu/gpu-parts';
import { ceilDivision, gridFindings, launchOnGpus } from '../../server/src/core/report/launch-on-gpus';

const figures = (numRegs: number): KernelFigures => ({ numRegs, sharedSizeBytes: 0, spillStoreBytes: 0, spillLoadBytes: 0, stackFrameBytes: 0, barriers: 0, source: 'annotation' });

async function onA100(source: string, numRegs = 32) {
  const facts = await analyzeSnippet(source);
  const launch = facts.launches[0];
  const kernel = facts.launchTargets[0].kernel;
  const analysis = analyzeLaunch(launch, kernel, kernel?.launchBounds ?? null, ['sm_80'], () => figures(numRegs));
  return { analysis, gpus: launchOnGpus(analysis, [findGpuPart('a100')!]) };
}

describe('a launch on named GPUs', () => {
  it('a fixed grid of 1.25 waves: the last wave a quarter full, a tail-effect hint with the grid of whole waves', async () => {
    // 1024 threads at 32 registers: 2 blocks per SM on sm_80, 216 per wave on 108 SMs.
    const { analysis, gpus } = await onA100('__global__ void k(float* x) {}\nvoid f(float* x) { k<<<270, 1024>>>(x); }\n');
    assert.equal(gpus[0].blocksPerSm, 2);
    assert.equal(gpus[0].waves!.waves, 1.25);
    const [hint] = gridFindings(analysis, gpus);
    assert.equal(hint.code, 'tail-effect');
    assert.equal(hint.severity, 'hint');
    assert.equal(hint.message, 'k: 270 blocks are 1.25 waves on the A100 SXM4 80GB (2 blocks per SM × 108 SMs); the last wave runs 25% full, so about 38% of the GPU\'s block slots idle. A grid of 432 blocks fills whole waves.');
  });

  it('a grid below the SM count: a small-grid hint', async () => {
    const { analysis, gpus } = await onA100('__global__ void k(float* x) {}\nvoid f(float* x) { k<<<64, 256>>>(x); }\n');
    assert.equal(gpus[0].waves!.idleSms, 44);
    assert.equal(gridFindings(analysis, gpus)[0].code, 'small-grid');
  });

  it('a grid of ceil(n / 256) blocks: waves per element, no finding', async () => {
    const { analysis, gpus } = await onA100('__global__ void k(float* x, int n) {}\nvoid f(float* x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); }\n');
    assert.deepEqual(gpus[0].perElement, { variable: 'n', perBlock: 256, elementsPerWave: 256 * 8 * 108 });
    assert.deepEqual(gridFindings(analysis, gpus), []);
  });

  it('a grid sized from the device is one full wave', async () => {
    const { analysis, gpus } = await onA100('__global__ void k(float* x) {}\nvoid f(float* x, cudaDeviceProp p) { k<<<p.multiProcessorCount * 8, 256>>>(x); }\n');
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
