/** The named GPU parts: every figure is sourced or unknown, names resolve, each target architecture has a default part. */
import * as assert from 'node:assert/strict';
import { GPU_PARTS, defaultGpuPart, findGpuPart, partsForArchs } from '../../server/src/core/gpu/gpu-parts';
import { parseArch } from '../../server/src/core/gpu/arch-table';
import { partLatencyRange } from '../../server/src/core/gpu/latency';

describe('GPU parts', () => {
  it('list the parts people launch on', () => {
    const names = GPU_PARTS.map((p) => p.name);
    for (const n of [
      'A100 SXM4 40GB',
      'A100 SXM4 80GB',
      'A10',
      'A30',
      'L4',
      'L40S',
      'GeForce RTX 3090',
      'GeForce RTX 4090',
      'H100 SXM5',
      'H100 PCIe',
      'H200 SXM',
      'GH200 96GB',
      'B200',
      'GeForce RTX 5090',
      'Jetson AGX Orin 64GB',
    ]) {
      assert.ok(names.includes(n), n);
    }
  });

  for (const part of GPU_PARTS) {
    it(`${part.name}: every figure it states has a source, on an architecture the table knows`, () => {
      assert.ok(parseArch(part.arch), part.arch);
      assert.ok(Number.isInteger(part.sms) && part.sms > 0);
      assert.ok(part.sources.sms, 'SM count source');
      for (const field of ['boostClockMHz', 'dramBandwidthGBs', 'l2Bytes', 'gpcs', 'latency'] as const) {
        const value = part[field];
        if (value === null) continue;
        assert.ok(part.sources[field], `${field} is ${JSON.stringify(value)} without a source`);
        if (typeof value === 'number') assert.ok(value > 0, `${field} must be positive`);
      }
      if (part.latency) assert.ok(part.latency.lowCycles <= part.latency.highCycles);
    });
  }

  it('find a part by its name or an alias, case and blanks ignored', () => {
    assert.equal(findGpuPart('h100')?.name, 'H100 SXM5');
    assert.equal(findGpuPart('a100')?.name, 'A100 SXM4 40GB');
    assert.equal(findGpuPart('A100 80GB')?.name, undefined);
    assert.equal(findGpuPart('a100-80gb')?.name, 'A100 SXM4 80GB');
    assert.equal(findGpuPart('NVIDIA A100 SXM4 40GB')?.name, 'A100 SXM4 40GB');
    assert.equal(findGpuPart('rtx 4090')?.name, 'GeForce RTX 4090');
    assert.equal(findGpuPart('geforce rtx 5090')?.name, 'GeForce RTX 5090');
    assert.equal(findGpuPart('Voodoo 2'), undefined);
  });

  it('give one default part per target architecture, or the named ones', () => {
    assert.equal(defaultGpuPart('sm_80')?.name, 'A100 SXM4 40GB');
    assert.equal(defaultGpuPart('9.0')?.name, 'H100 SXM5');
    assert.equal(defaultGpuPart('sm_75'), undefined);
    assert.deepEqual(
      partsForArchs(['sm_80', 'sm_90'], []).parts.map((p) => p.name),
      ['A100 SXM4 40GB', 'H100 SXM5'],
    );
    assert.deepEqual(partsForArchs(['sm_80', 'sm_90'], ['a30', 'h200', 'teapot']), {
      parts: [findGpuPart('a30')!, findGpuPart('h200')!],
      unknown: ['teapot'],
    });
  });

  it("bound the bandwidth-bound latency reading by the part's published latencies, and give nothing without its figures", () => {
    // A100 SXM4 80GB: 2,039 GB/s over 108 SMs at 1,410 MHz = 0.1046 requests of 128 B per cycle per SM.
    const range = partLatencyRange(findGpuPart('a100-80gb')!, 32, 2)!;
    assert.ok(Math.abs(range.rate - 2039e9 / (108 * 1410e6 * 128)) < 1e-12);
    assert.deepEqual(range.warpsNeeded, {
      low: Math.ceil((290 * range.rate) / 2),
      high: Math.ceil((640 * range.rate) / 2),
    });
    assert.deepEqual(range.warpsNeeded, { low: 16, high: 34 });
    assert.equal(partLatencyRange(findGpuPart('b200')!, 32), null, 'no published clock or latency: no reading');
  });
});
