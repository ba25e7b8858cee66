/** Waves, the tail and idle SMs of a grid on a whole GPU; the thread block cluster estimate. */
import * as assert from 'node:assert/strict';
import { clusterEstimate, elementsPerWave, wavesOf, wholeWavesGrid } from '../../server/src/core/gpu/waves';

describe('waves', () => {
  it('a grid under one wave: how many SMs run how many blocks, of those each could hold', () => {
    // 120 blocks at 6 blocks per SM on an A100 (108 SMs): 648 blocks fill one wave.
    const w = wavesOf(120, 6, 108)!;
    assert.equal(w.blocksPerWave, 648);
    assert.equal(w.waves.toFixed(2), '0.19');
    assert.equal(w.wavesRun, 1);
    assert.deepEqual(w.spread, [{ blocks: 2, sms: 12 }, { blocks: 1, sms: 96 }]);
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
