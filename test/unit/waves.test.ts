/** Waves, the tail and idle SMs of a grid on a whole GPU; the thread block cluster estimate. */
import * as assert from 'node:assert/strict';
import { wavesPointLines, wavesTitle } from '../../client/src/chart/chart-model';
import { clusterEstimate, elementsPerWave, wavesChart, wavesOf, wholeWavesGrid } from '../../server/src/core/gpu/waves';

describe('waves', () => {
  it('a grid under one wave: how many SMs run how many blocks, of those each could hold', () => {
    // 120 blocks at 6 blocks per SM on an A100 (108 SMs): 648 blocks fill one wave.
    const w = wavesOf(120, 6, 108)!;
    assert.equal(w.blocksPerWave, 648);
    assert.equal(w.waves.toFixed(2), '0.19');
    assert.equal(w.wavesRun, 1);
    assert.deepEqual(w.spread, [
      { blocks: 2, sms: 12 },
      { blocks: 1, sms: 96 },
    ]);
    assert.equal(w.idleSms, 0);
  });

  it('a grid smaller than the SM count leaves SMs idle', () => {
    const w = wavesOf(40, 4, 132)!;
    assert.equal(w.idleSms, 92);
    assert.deepEqual(w.spread, [{ blocks: 1, sms: 40 }]);
  });

  it('a grid of 1.25 waves runs its last wave a quarter full', () => {
    // 270 blocks at 2 blocks per SM on 108 SMs: 216 per wave.
    const w = wavesOf(270, 2, 108)!;
    assert.equal(w.waves, 1.25);
    assert.equal(w.wavesRun, 2);
    assert.equal(w.lastWaveBlocks, 54);
    assert.equal(w.lastWaveFill, 0.25);
    assert.equal(w.idleFraction, (216 - 54) / (2 * 216));
    assert.equal(wholeWavesGrid(270, 2, 108), 432);
  });

  it('whole waves have no tail', () => {
    const w = wavesOf(432, 2, 108)!;
    assert.equal(w.wavesRun, 2);
    assert.equal(w.lastWaveFill, 1);
    assert.equal(w.idleFraction, 0);
    assert.equal(wholeWavesGrid(432, 2, 108), 432);
  });

  it('nothing to say when no block fits', () => {
    assert.equal(wavesOf(100, 0, 108), null);
    assert.equal(wavesOf(0, 2, 108), null);
  });

  it('a grid of ceil(n / 256) blocks: one wave per 256 × blocks per wave elements', () => {
    assert.equal(elementsPerWave(256, 8, 108), 221_184);
  });
});

describe('cluster estimate', () => {
  it('counts the clusters each GPC holds, its SMs spread evenly', () => {
    // 132 SMs over 8 GPCs: 4 of 17 and 4 of 16. At 1 block per SM and 8 blocks per cluster: 2 per GPC.
    const c = clusterEstimate(8, 1, 132, 8)!;
    assert.equal(c.maxActiveClusters, 16);
    assert.equal(c.blocksInClusters, 128);
    assert.equal(c.blocksWithoutClusters, 132);
    assert.match(c.assumptions[0], /4 of 17 and 4 of 16/);
    // 16-block clusters (non-portable) at 2 blocks per SM: 34 and 32 slots per GPC, 2 clusters each.
    const big = clusterEstimate(16, 2, 132, 8)!;
    assert.equal(big.maxActiveClusters, 16);
    assert.ok(big.assumptions.some((a) => /NonPortableClusterSizeAllowed/.test(a)));
  });
});

describe('the waves chart of a grid of ceil(n / b) blocks', () => {
  // 256 threads per block at 8 blocks per SM on an A100's 108 SMs: 864 blocks, 221,184 elements per wave.
  const chart = wavesChart({ part: 'A100 SXM4 40GB', variable: 'n', perBlock: 256, blocksPerSm: 8, sms: 108 })!;
  const at = (gridBlocks: number) => chart.points.find((p) => p.gridBlocks === gridBlocks)!;

  it('runs from a block to four whole waves, in ascending n', () => {
    assert.equal(chart.elementsPerWave, 221_184);
    assert.equal(chart.points[0].gridBlocks, 1);
    assert.equal(chart.points[chart.points.length - 1].gridBlocks, 4 * 864);
    assert.ok(chart.points.every((p, i) => i === 0 || p.n > chart.points[i - 1].n));
  });

  it('is the sawtooth of the tail: every slot busy at whole waves, about half when one block spills into a second', () => {
    assert.equal(at(864).used, 1);
    assert.equal(at(864).n, 221_184);
    assert.equal(at(865).used, 865 / (2 * 864));
    assert.equal(at(3 * 864 + 1).used, (3 * 864 + 1) / (4 * 864));
  });

  it('is titled and explained in the chart view as the calculator would say it', () => {
    assert.equal(wavesTitle(chart), 'Grid of ⌈n / 256⌉ blocks on the A100 SXM4 40GB: one wave per 221,184 of n');
    assert.equal(wavesPointLines(at(864), chart)[0], 'n = 221,184: 864 blocks, 1 wave (8 blocks per SM × 108 SMs)');
    assert.deepEqual(wavesPointLines(at(865), chart), [
      'n = 221,440: 865 blocks, 1.001 waves, 2 run (8 blocks per SM × 108 SMs)',
      '50.1% of the block slots busy over the run',
    ]);
  });

  it('is null for a block size or part that cannot run', () => {
    assert.equal(wavesChart({ part: 'x', variable: 'n', perBlock: 256, blocksPerSm: 0, sms: 108 }), null);
  });
});
