import * as assert from 'node:assert/strict';
import { ARCHS, parseArch } from '../../server/src/core/gpu/arch-table';
import {
  blockSizeStep,
  launchBoundsRegisterCap,
  MAX_REGS_PER_THREAD,
  nextStep,
  registerStep,
  sharedMemoryStep,
  withSharedMemTotal,
} from '../../server/src/core/gpu/next-step';
import { occupancy, type OccupancyQuery } from '../../server/src/core/gpu/occupancy';
import { QueryMaker } from '../support/oracle-queries';

const blocks = (q: OccupancyQuery): number => {
  const r = occupancy(q);
  return r.ok ? r.value.activeBlocksPerMultiprocessor : 0;
};
const warps = (q: OccupancyQuery): number => {
  const r = occupancy(q);
  return r.ok ? r.value.activeWarps : 0;
};

/** Proves a register answer by recomputation one register either side. */
function proveRegisterStep(q: OccupancyQuery): boolean {
  const step = registerStep(q);
  const now = blocks(q);
  assert.equal(step.activeBlocks, now);
  assert.equal(step.targetBlocks, now + 1);
  const current = q.numRegs ?? 0;
  if (step.maxRegsPerThread === null) {
    // Nothing below the current count reaches the target, down to 0 registers.
    assert.ok(current === 0 || blocks({ ...q, numRegs: 0 }) < now + 1, JSON.stringify(q));
    return false;
  }
  const r = step.maxRegsPerThread;
  assert.ok(r < current && r >= 0);
  assert.ok(blocks({ ...q, numRegs: r }) >= now + 1, `at ${r} one more block fits`);
  assert.ok(blocks({ ...q, numRegs: r + 1 }) < now + 1, `at ${r + 1} it does not`);
  return true;
}

/** Proves a shared-memory answer by recomputation one byte either side. */
function proveSharedMemoryStep(q: OccupancyQuery): boolean {
  const step = sharedMemoryStep(q);
  const now = blocks(q);
  const total = (q.sharedSizeBytes ?? 0) + (q.dynamicSmemBytes ?? 0);
  if (step.maxSharedMemPerBlock === null) {
    assert.ok(total === 0 || blocks(withSharedMemTotal(q, 0)) < now + 1, JSON.stringify(q));
    return false;
  }
  const t = step.maxSharedMemPerBlock;
  assert.ok(t < total);
  assert.ok(blocks(withSharedMemTotal(q, t)) >= now + 1, `at ${t} B one more block fits`);
  assert.ok(blocks(withSharedMemTotal(q, t + 1)) < now + 1, `at ${t + 1} B it does not`);
  if (step.maxDynamicSmemBytes !== null) assert.equal(step.maxDynamicSmemBytes, t - (q.sharedSizeBytes ?? 0));
  return true;
}

describe('next step: registers', () => {
  it('sm_90, 256 threads, 64 registers (4 blocks): 5 blocks fit at 48 registers, not at 49', () => {
    const q: OccupancyQuery = {
      device: parseArch('sm_90')!.device,
      blockSize: 256,
      numRegs: 64,
      sharedSizeBytes: 4096,
    };
    const step = registerStep(q);
    // 5 blocks x 8 warps = 40 warps = 10 per sub-partition: 16384 / 10 = 1638 -> 1536 per warp = 48 per thread.
    assert.deepEqual(step, { activeBlocks: 4, targetBlocks: 5, maxRegsPerThread: 48 });
    proveRegisterStep(q);
  });

  it('is null when registers are not what binds (block slots on sm_120)', () => {
    const q: OccupancyQuery = { device: parseArch('sm_120')!.device, blockSize: 32, numRegs: 16 };
    assert.equal(registerStep(q).maxRegsPerThread, null);
    proveRegisterStep(q);
  });

  it('finds the registers at which a block that does not fit starts to fit (sm_75, 1024 threads, 65 registers)', () => {
    const q: OccupancyQuery = { device: parseArch('sm_75')!.device, blockSize: 1024, numRegs: 65 };
    assert.deepEqual(registerStep(q), { activeBlocks: 0, targetBlocks: 1, maxRegsPerThread: 64 });
    proveRegisterStep(q);
  });

  it('every answer on 1,500 random configurations is proved one register either side', () => {
    const maker = new QueryMaker(97);
    let answered = 0;
    for (let i = 0; i < 1500; i++) if (proveRegisterStep(randomQuery(maker, i))) answered++;
    assert.ok(answered > 300, `only ${answered} configurations had a register answer`);
  });
});

describe('next step: shared memory', () => {
  it('sm_80, 20000 B dynamic with a 50% carveout (4 blocks): 5 blocks fit at 19456 B, not at 19457', () => {
    const q: OccupancyQuery = {
      device: parseArch('sm_80')!.device,
      blockSize: 256,
      numRegs: 32,
      dynamicSmemBytes: 20000,
      carveout: 50,
    };
    // 102400 / 5 = 20480 per block, minus the reserved 1024 B.
    assert.deepEqual(sharedMemoryStep(q), {
      activeBlocks: 4,
      targetBlocks: 5,
      maxSharedMemPerBlock: 19456,
      maxDynamicSmemBytes: 19456,
    });
    proveSharedMemoryStep(q);
  });

  it('is null when shared memory is not what binds', () => {
    const q: OccupancyQuery = {
      device: parseArch('sm_90')!.device,
      blockSize: 256,
      numRegs: 64,
      sharedSizeBytes: 4096,
    };
    assert.equal(sharedMemoryStep(q).maxSharedMemPerBlock, null);
    proveSharedMemoryStep(q);
  });

  it('every answer on 1,500 random configurations is proved one byte either side', () => {
    const maker = new QueryMaker(131);
    let answered = 0;
    for (let i = 0; i < 1500; i++) if (proveSharedMemoryStep(randomQuery(maker, i))) answered++;
    assert.ok(answered > 150, `only ${answered} configurations had a shared-memory answer`);
  });
});

describe('next step: block size', () => {
  it('sm_86, 1024 threads (1 block, 32 of 48 warps): 768 or 512 threads give 48 warps', () => {
    const q: OccupancyQuery = { device: parseArch('sm_86')!.device, blockSize: 1024, numRegs: 32 };
    const step = blockSizeStep(q);
    assert.equal(step.activeWarps, 32);
    // 800..992 threads are 25..31 warps: still one block. 768 threads = 24 warps: two blocks, 48 warps.
    assert.deepEqual(step.smaller, { blockSize: 768, activeBlocks: 2, activeWarps: 48, occupancy: 1 });
    assert.deepEqual(step.best, step.smaller);
    assert.equal(step.larger, null);
  });

  it('every suggestion is recomputed and is the nearest with more warps, on 300 random configurations', () => {
    const maker = new QueryMaker(7);
    for (let i = 0; i < 300; i++) {
      const q = randomQuery(maker, i);
      const step = blockSizeStep(q);
      const now = warps(q);
      assert.equal(step.activeWarps, now);
      const better = (b: number): boolean => warps({ ...q, blockSize: b }) > now;
      const ws = q.device.warpSize;
      for (const [option, direction] of [
        [step.smaller, -1],
        [step.larger, 1],
      ] as const) {
        if (option === null) continue;
        assert.ok(better(option.blockSize) && option.blockSize % ws === 0);
        assert.equal(option.activeWarps, warps({ ...q, blockSize: option.blockSize }));
        // No warp multiple strictly between the current size and the suggestion is better.
        for (let b = option.blockSize - direction * ws; direction * (q.blockSize - b) < 0; b -= direction * ws) {
          assert.ok(!better(b), `block ${b} is nearer and better than ${option.blockSize} (from ${q.blockSize})`);
        }
      }
      if (step.smaller === null) for (let b = ws; b < q.blockSize; b += ws) assert.ok(!better(b));
      if (step.larger === null)
        for (let b = q.blockSize + 1; b <= q.device.maxThreadsPerBlock; b++) if (b % ws === 0) assert.ok(!better(b));
      if (step.best !== null) {
        for (let b = ws; b <= q.device.maxThreadsPerBlock; b += ws)
          assert.ok(warps({ ...q, blockSize: b }) <= step.best.activeWarps);
      }
    }
  });
});

describe('next step: __launch_bounds__ register cap', () => {
  it('__launch_bounds__(256, 2) on sm_90: 128 registers (2 blocks x 8 warps = 4 warps per sub-partition)', () => {
    assert.equal(launchBoundsRegisterCap(parseArch('sm_90')!.device, 256, 2), 128);
  });

  it('__launch_bounds__(1024) on sm_75: 64 registers; (1024, 2) cannot be met (32 warps per SM)', () => {
    assert.equal(launchBoundsRegisterCap(parseArch('sm_75')!.device, 1024), 64);
    assert.equal(launchBoundsRegisterCap(parseArch('sm_75')!.device, 1024, 2), null);
  });

  it('__launch_bounds__(32) allows the 255-register maximum; more threads than the device allows gives null', () => {
    assert.equal(launchBoundsRegisterCap(parseArch('sm_80')!.device, 32), MAX_REGS_PER_THREAD);
    assert.equal(launchBoundsRegisterCap(parseArch('sm_80')!.device, 2048), null);
  });

  it('every cap on every arch is proved one register either side', () => {
    for (const row of ARCHS) {
      for (const maxThreads of [32, 64, 96, 128, 160, 256, 384, 512, 640, 768, 1024]) {
        for (const minBlocks of [1, 2, 3, 4, 6, 8, 16]) {
          const cap = launchBoundsRegisterCap(row.device, maxThreads, minBlocks);
          const regsLimit = (regs: number): number => {
            const r = occupancy({ device: row.device, blockSize: maxThreads, numRegs: regs });
            return r.ok ? r.value.blockLimitRegs : 0;
          };
          if (cap === null) {
            const base = occupancy({ device: row.device, blockSize: maxThreads });
            const slots = base.ok ? Math.min(base.value.blockLimitWarps, base.value.blockLimitBlocks) : 0;
            assert.ok(slots < minBlocks || regsLimit(1) < minBlocks, `${row.name} (${maxThreads}, ${minBlocks})`);
            continue;
          }
          assert.ok(regsLimit(cap) >= minBlocks, `${row.name} (${maxThreads}, ${minBlocks}) at ${cap}`);
          assert.ok(
            cap === MAX_REGS_PER_THREAD || regsLimit(cap + 1) < minBlocks,
            `${row.name} (${maxThreads}, ${minBlocks}) at ${cap + 1}`,
          );
          assert.ok(cap === MAX_REGS_PER_THREAD || cap % 8 === 0, 'caps fall on the 8-register allocation step');
        }
      }
    }
  });
});

describe('next step: all together', () => {
  it('nextStep bundles the three answers', () => {
    const q: OccupancyQuery = {
      device: parseArch('sm_90')!.device,
      blockSize: 256,
      numRegs: 64,
      sharedSizeBytes: 4096,
    };
    const s = nextStep(q);
    assert.deepEqual(s.registers, registerStep(q));
    assert.deepEqual(s.sharedMemory, sharedMemoryStep(q));
    assert.deepEqual(s.blockSize, blockSizeStep(q));
  });
});

function randomQuery(maker: QueryMaker, i: number): OccupancyQuery {
  const row = ARCHS[i % ARCHS.length];
  const optin = maker.chance(0.3);
  return {
    device: row.device,
    blockSize: maker.pick([maker.int(1, 1024), 32 * maker.int(1, 32)]),
    numRegs: maker.int(0, 255),
    sharedSizeBytes: maker.chance(0.5) ? maker.int(0, 16 * 1024) : 0,
    dynamicSmemBytes: maker.chance(0.6)
      ? maker.int(0, (optin ? row.device.sharedMemPerBlockOptin : 48 * 1024) - 16 * 1024)
      : 0,
    shmemLimitConfig: optin ? 'optin' : 'default',
    carveout: maker.chance(0.4) ? maker.int(-1, 100) : -1,
    numBlockBarriers: maker.int(0, 2),
  };
}
