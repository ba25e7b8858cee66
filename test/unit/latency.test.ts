import * as assert from 'node:assert/strict';
import { ARCHS, parseArch } from '../../server/src/core/gpu/arch-table';
import { dramRequestsPerCyclePerSm, latencyHiding } from '../../server/src/core/gpu/latency';

describe("latency hiding (Little's law)", () => {
  const h100 = parseArch('sm_90')!;

  it('issue-bound reading: r = 4 schedulers x 1, W = ceil(L x 4 / p)', () => {
    const est = latencyHiding({ arch: h100, warpsResident: 32, latencyCycles: 400 });
    assert.deepEqual(est.issueBound, {
      warpsNeeded: 1600,
      warpsResident: 32,
      deficitWarps: 1568,
      coveredFraction: 0.02,
      assumptions: { latencyCycles: 400, rate: 4, independentOpsPerWarp: 1, latencySource: 'override' },
    });
    assert.equal(
      latencyHiding({ arch: h100, warpsResident: 32, latencyCycles: 400, independentOpsPerWarp: 4 }).issueBound
        .warpsNeeded,
      400,
    );
  });

  it('bandwidth-bound reading: H100 SXM5 3350 GB/s over 132 SMs at 1980 MHz is about 0.1 requests of 128 B per cycle', () => {
    const rate = dramRequestsPerCyclePerSm(h100);
    assert.ok(Math.abs(rate - 3350e9 / (132 * 1980e6 * 128)) < 1e-12);
    assert.ok(rate > 0.1 && rate < 0.101);
    const est = latencyHiding({ arch: h100, warpsResident: 32 });
    const b = est.bandwidthBound;
    assert.equal(b.assumptions.latencyCycles, h100.globalMemoryLatency.cycles);
    assert.equal(b.assumptions.referencePart, 'H100 SXM5');
    assert.equal(b.assumptions.latencySource, h100.globalMemoryLatency.source);
    assert.equal(b.warpsNeeded, Math.ceil(h100.globalMemoryLatency.cycles * rate));
    assert.equal(b.deficitWarps, Math.max(0, b.warpsNeeded - 32));
    assert.equal(b.coveredFraction, Math.min(1, 32 / b.warpsNeeded));
  });

  it('more independent loads per warp need proportionally fewer warps; enough warps cover the whole latency', () => {
    const one = latencyHiding({ arch: h100, warpsResident: 8, latencyCycles: 500 }).bandwidthBound;
    const four = latencyHiding({
      arch: h100,
      warpsResident: 8,
      latencyCycles: 500,
      independentOpsPerWarp: 4,
    }).bandwidthBound;
    assert.equal(one.warpsNeeded, 51); // ceil(500 x 0.1002)
    assert.equal(four.warpsNeeded, 13);
    const covered = latencyHiding({ arch: h100, warpsResident: 64, latencyCycles: 500 }).bandwidthBound;
    assert.equal(covered.deficitWarps, 0);
    assert.equal(covered.coveredFraction, 1);
  });

  it('every arch has a latency figure with a source and a reference part with positive figures', () => {
    for (const row of ARCHS) {
      const est = latencyHiding({ arch: row, warpsResident: 16 });
      assert.ok(est.issueBound.warpsNeeded > est.bandwidthBound.warpsNeeded, row.name);
      assert.ok(row.globalMemoryLatency.cycles >= 300 && row.globalMemoryLatency.cycles <= 1000, row.name);
      assert.match(row.globalMemoryLatency.source, /arXiv|stand-in/);
      assert.ok(dramRequestsPerCyclePerSm(row) > 0.01 && dramRequestsPerCyclePerSm(row) < 1, row.name);
    }
  });

  it('refuses nonsense inputs', () => {
    assert.throws(() => latencyHiding({ arch: h100, warpsResident: 8, independentOpsPerWarp: 0 }), RangeError);
    assert.throws(() => latencyHiding({ arch: h100, warpsResident: -1 }), RangeError);
    assert.throws(() => latencyHiding({ arch: h100, warpsResident: 8, latencyCycles: Number.NaN }), RangeError);
  });
});
