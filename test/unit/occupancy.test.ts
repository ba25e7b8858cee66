import * as assert from 'node:assert/strict';
import { parseArch, type ArchRow } from '../../server/src/core/gpu/arch-table';
import {
  availableDynamicSmem,
  maxPotentialBlockSize,
  occupancy,
  INT_MAX,
  type OccupancyQuery,
  type OccupancyResult,
} from '../../server/src/core/gpu/occupancy';

function arch(name: string): ArchRow {
  const row = parseArch(name);
  assert.ok(row, name);
  return row;
}

function occ(name: string, q: Omit<OccupancyQuery, 'device'>): OccupancyResult {
  const r = occupancy({ device: arch(name).device, ...q });
  assert.ok(r.ok, `occupancy failed: ${JSON.stringify(r)}`);
  return r.value;
}

// Worked examples, each computed by hand from the header's rules (docs/occupancy-model.md).
describe('occupancy: worked examples', () => {
  it('example 1: sm_90, 256 threads, 64 registers, 4 KB static: 4 blocks, limited by registers', () => {
    const r = occ('sm_90', { blockSize: 256, numRegs: 64, sharedSizeBytes: 4096 });
    assert.equal(r.blockLimitRegs, 4);
    assert.equal(r.blockLimitSharedMem, 45); // 233472 / (4096 + 1024)
    assert.equal(r.blockLimitWarps, 8);
    assert.equal(r.blockLimitBlocks, 32);
    assert.equal(r.blockLimitBarriers, 64);
    assert.equal(r.blockLimitVirtual, INT_MAX);
    assert.equal(r.activeBlocksPerMultiprocessor, 4);
    assert.equal(r.activeWarps, 32);
    assert.equal(r.activeThreads, 1024);
    assert.equal(r.occupancy, 0.5);
    assert.deepEqual(r.limitingFactors, ['registers']);
    assert.equal(r.limitingFactorsMask, 0x02);
    assert.equal(r.allocatedRegistersPerBlock, 16384);
    assert.equal(r.allocatedSharedMemPerBlock, 5120);
  });

  it('example 2: sm_80, 96 threads, 37 registers: per-sub-partition rounding gives 16 blocks, not 17', () => {
    const r = occ('sm_80', { blockSize: 96, numRegs: 37 });
    assert.equal(r.allocatedRegistersPerBlock, 3840); // 1280 per warp x 3
    assert.equal(r.blockLimitRegs, 16);
    assert.equal(r.blockLimitSharedMem, 164); // the reserved 1 KB alone
    assert.equal(r.blockLimitWarps, 21);
    assert.equal(r.blockLimitBarriers, INT_MAX); // barriers only from 9.0
    assert.equal(r.activeWarps, 48);
    assert.equal(r.occupancy, 0.75);
    assert.deepEqual(r.limitingFactors, ['registers']);
  });

  it('example 3: sm_80, 20000 B dynamic, carveout 50%: rounded to 21120 B, 100 KB carveout, 4 blocks', () => {
    const r = occ('sm_80', { blockSize: 256, numRegs: 32, dynamicSmemBytes: 20000, carveout: 50 });
    assert.equal(r.allocatedSharedMemPerBlock, 21120);
    assert.equal(r.blockLimitSharedMem, 4);
    assert.equal(r.blockLimitRegs, 8);
    assert.equal(r.activeBlocksPerMultiprocessor, 4);
    assert.equal(r.occupancy, 0.5);
    assert.deepEqual(r.limitingFactors, ['sharedMemory']);
  });

  it('example 3b: the same without a carveout: 167936 / 21120 = 7 blocks', () => {
    const r = occ('sm_80', { blockSize: 256, numRegs: 32, dynamicSmemBytes: 20000 });
    assert.equal(r.blockLimitSharedMem, 7);
    assert.equal(r.activeBlocksPerMultiprocessor, 7);
    assert.equal(r.occupancy, 0.875);
  });

  it('example 4: sm_75, 1024 threads, 65 registers: 73728 registers per block, does not fit', () => {
    const r = occ('sm_75', { blockSize: 1024, numRegs: 65 });
    assert.equal(r.allocatedRegistersPerBlock, 73728);
    assert.equal(r.blockLimitRegs, 0);
    assert.equal(r.blockLimitWarps, 1);
    assert.equal(r.blockLimitBlocks, 16);
    assert.equal(r.blockLimitSharedMem, INT_MAX); // no shared memory and nothing reserved before 8.0
    assert.equal(r.activeBlocksPerMultiprocessor, 0);
    assert.equal(r.occupancy, 0);
    assert.deepEqual(r.limitingFactors, ['registers']);
  });

  it('example 5: sm_120, 32 threads, 16 registers: 24 block slots, blocks and barriers tie', () => {
    const r = occ('sm_120', { blockSize: 32, numRegs: 16 });
    assert.equal(r.blockLimitRegs, 128);
    assert.equal(r.blockLimitWarps, 48);
    assert.equal(r.blockLimitBlocks, 24);
    assert.equal(r.blockLimitSharedMem, 100);
    assert.equal(r.blockLimitBarriers, 24);
    assert.equal(r.activeBlocksPerMultiprocessor, 24);
    assert.equal(r.occupancy, 0.5);
    assert.deepEqual(r.limitingFactors, ['blocks', 'barriers']);
    assert.equal(r.limitingFactorsMask, 0x18);
  });

  it('example 6: sm_90 maxPotentialBlockSize with 64 registers: 1024 threads, minGridSize 132', () => {
    const r = maxPotentialBlockSize({ device: arch('sm_90').device, numRegs: 64, sharedSizeBytes: 4096 });
    assert.deepEqual(r, { ok: true, value: { blockSize: 1024, minGridSize: 132 } });
  });
});

describe('occupancy: header behaviours beyond the worked examples', () => {
  it('rejects a carveout outside -1..100 on 7.0+ but ignores it before 7.0', () => {
    assert.deepEqual(occupancy({ device: arch('sm_90').device, blockSize: 128, carveout: 101 }), {
      ok: false,
      error: 'CUDA_OCC_ERROR_INVALID_INPUT',
    });
    assert.equal(occupancy({ device: arch('sm_61').device, blockSize: 128, carveout: 101 }).ok, true);
  });

  it('answers CUDA_OCC_ERROR_UNKNOWN_DEVICE for a compute capability the header does not know', () => {
    const device = { ...arch('sm_100').device, computeMinor: 2 };
    assert.deepEqual(occupancy({ device, blockSize: 128 }), { ok: false, error: 'CUDA_OCC_ERROR_UNKNOWN_DEVICE' });
  });

  it('counts 0 blocks for a block larger than the device allows, and for numRegs 256 only before 7.0', () => {
    assert.equal(occ('sm_90', { blockSize: 1025 }).blockLimitWarps, 0);
    assert.equal(occ('sm_61', { blockSize: 32, numRegs: 256 }).blockLimitRegs, 0);
    assert.ok(occ('sm_70', { blockSize: 32, numRegs: 256 }).blockLimitRegs > 0); // the header allows 256 from major 7
  });

  it("on 6.0 refuses a block that only fits GP100's 2 sub-partitions", () => {
    // 192 registers: 6144 per warp. 9 warps: GP100's hardware check rounds to 10 warps (61440 <= 65536)
    // and 2 sub-partitions of 5 warps hold one block, but GP10x rounds to 12 warps (73728): refused.
    assert.equal(occ('sm_60', { blockSize: 288, numRegs: 192 }).blockLimitRegs, 0);
    // 8 warps pass both checks: 10 warps / 8 = 1 block.
    assert.equal(occ('sm_60', { blockSize: 256, numRegs: 192 }).blockLimitRegs, 1);
  });

  it('uses the opt-in per-block limit only when asked, and counts the reserved 1 KB', () => {
    const big = { blockSize: 128, dynamicSmemBytes: 100 * 1024 };
    assert.equal(occ('sm_90', big).blockLimitSharedMem, 0);
    const optin = occ('sm_90', { ...big, shmemLimitConfig: 'optin' });
    assert.equal(optin.allocatedSharedMemPerBlock, 101 * 1024);
    assert.equal(optin.blockLimitSharedMem, 2); // 228 KB / 101 KB
  });

  it('maps cacheConfig to a carveout on 7.0+ when no carveout is given', () => {
    const l1 = occ('sm_80', { blockSize: 128, sharedSizeBytes: 4096, cacheConfig: 'l1' });
    // L1 preference: 0 KB carveout, raised to the 8 KB step that holds one 5120 B block.
    assert.equal(l1.blockLimitSharedMem, 1);
    assert.equal(
      occ('sm_80', { blockSize: 128, sharedSizeBytes: 4096, cacheConfig: 'l1', carveout: 100 }).blockLimitSharedMem,
      32,
    );
  });

  it('halves warp and register slots with partitioned global caching on 6.1', () => {
    const off = occ('sm_61', { blockSize: 96, numRegs: 32 });
    const on = occ('sm_61', { blockSize: 96, numRegs: 32, partitionedGCConfig: 'on' });
    assert.equal(off.blockLimitWarps, 21);
    assert.equal(on.blockLimitWarps, 20); // (32 / 3) x 2
    assert.equal(on.partitionedGCConfig, 'on');
  });

  it('limits by virtual resources on 10.x only when the kernel uses some', () => {
    assert.equal(occ('sm_100', { blockSize: 32, virtualResourceCount: 10 }).blockLimitVirtual, 12);
    assert.equal(occ('sm_90', { blockSize: 32, virtualResourceCount: 10 }).blockLimitVirtual, INT_MAX);
  });

  it('availableDynamicSmem: the header leaves out the reserved 1 KB on 8.0+', () => {
    const r = availableDynamicSmem({ device: arch('sm_90').device, blockSize: 128, numBlocks: 4 });
    assert.deepEqual(r, { ok: true, value: 49152 }); // 233472 / 4 = 58368, capped at the 48 KB default
    const two = availableDynamicSmem({
      device: arch('sm_90').device,
      blockSize: 128,
      numBlocks: 2,
      shmemLimitConfig: 'optin',
    });
    assert.deepEqual(two, { ok: true, value: 116736 }); // 233472 / 2
    assert.equal(
      occ('sm_90', { blockSize: 128, numRegs: 0, dynamicSmemBytes: 116736, shmemLimitConfig: 'optin' })
        .activeBlocksPerMultiprocessor,
      1,
    );
  });

  it('maxPotentialBlockSize with per-thread dynamic shared memory and a launch bound', () => {
    const device = arch('sm_80').device;
    const r = maxPotentialBlockSize({ device, numRegs: 32, dynamicSmemPerThreadBytes: 64, maxThreadsPerBlock: 600 });
    assert.ok(r.ok);
    assert.ok(r.value.blockSize <= 600);
    // No smaller warp-multiple size (or the bound itself) keeps more threads resident.
    const threads = (b: number): number => {
      const o = occupancy({ device, blockSize: b, numRegs: 32, dynamicSmemBytes: 64 * b });
      return o.ok ? b * o.value.activeBlocksPerMultiprocessor : 0;
    };
    const best = threads(r.value.blockSize);
    for (let b = 32; b <= 600; b += 32) assert.ok(threads(b) <= best, `block ${b}`);
    assert.ok(threads(600) <= best);
  });
});
