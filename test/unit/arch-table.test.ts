import * as assert from 'node:assert/strict';
import { ARCHS, archName, parseArch } from '../../server/src/core/gpu/arch-table';
import { headerArchConstants } from '../../server/src/core/gpu/occupancy';
import { buildOracle, deviceWords, runOracle } from '../support/oracle-process';

const EXPECTED = [
  '5.0',
  '5.2',
  '5.3',
  '6.0',
  '6.1',
  '6.2',
  '7.0',
  '7.2',
  '7.5',
  '8.0',
  '8.6',
  '8.7',
  '8.8',
  '8.9',
  '9.0',
  '10.0',
  '10.3',
  '11.0',
  '12.0',
  '12.1',
];

describe('arch table', () => {
  it('has one row per documented compute capability from 5.0 to 12.1, in order', () => {
    assert.deepEqual(
      ARCHS.map((r) => `${r.device.computeMajor}.${r.device.computeMinor}`),
      EXPECTED,
    );
  });

  it('reads every spelling: sm_90, sm_90a, sm_100f, compute_90, 90, 9.0, case and blanks ignored', () => {
    for (const text of ['sm_90', 'sm_90a', 'compute_90', '90', '9.0', ' SM_90 ', 'Compute_90A', 'sm90']) {
      assert.equal(parseArch(text)?.name, 'sm_90', text);
    }
    assert.equal(parseArch('sm_100f')?.name, 'sm_100');
    assert.equal(parseArch('10.3')?.name, 'sm_103');
    assert.equal(parseArch('121')?.name, 'sm_121');
    for (const text of ['sm_35', 'sm_91', '9', '9.', 'sm_90x', '', 'ampere', '1000', '9.01']) {
      assert.equal(parseArch(text), undefined, text);
    }
  });

  it('names rows sm_XY', () => {
    for (const row of ARCHS) {
      assert.equal(archName(row), row.name);
      assert.equal(parseArch(row.name), row);
    }
  });

  it("agrees with the header's hard-coded constants for every row", () => {
    for (const row of ARCHS) {
      const h = headerArchConstants(row.device);
      assert.equal(h.error, null, row.name);
      assert.equal(row.maxBlocksPerMultiprocessor, h.maxBlocksPerMultiprocessor, `${row.name} blocks`);
      assert.equal(row.smemAllocationGranularity, h.smemAllocationGranularity, `${row.name} smem granularity`);
      assert.equal(row.regAllocationUnit, h.regAllocationGranularity, `${row.name} register unit`);
      assert.equal(row.subPartitionsPerMultiprocessor, h.subPartitionsPerMultiprocessor, `${row.name} sub-partitions`);
      assert.deepEqual([...row.sharedMemCarveoutKB], h.sharedMemCarveoutKB, `${row.name} carveouts`);
      assert.equal(row.carveoutConfigurable, h.carveoutConfigurable, `${row.name} carveout configurable`);
      assert.equal(row.barriersPerBlockSlot, h.barriersPerBlockSlot, `${row.name} barriers`);
      assert.equal(
        row.partitionedGlobalCachingSupported,
        h.partitionedGlobalCachingSupported,
        `${row.name} partitioned caching`,
      );
      assert.equal(
        row.device.sharedMemPerMultiprocessor,
        h.defaultSharedMemPerMultiprocessor,
        `${row.name} default smem`,
      );
      // The documented 255; the header checks against 255 before 7.0 and 256 from 7.0.
      assert.equal(row.maxRegsPerThread, 255);
      assert.equal(h.maxRegsPerThread, row.device.computeMajor >= 7 ? 256 : 255);
      assert.equal(row.maxWarpsPerMultiprocessor, row.device.maxThreadsPerMultiprocessor / row.device.warpSize);
      assert.equal(row.schedulersPerMultiprocessor, 4);
    }
  });

  // The documented figures per compute capability (CUDA Programming Guide, compute capabilities
  // tables; docs/occupancy-model.md cites them row by row), written out here so that a change
  // to arch-table.ts shows as a change to this table. Shared memory in KB.
  //        threads/block  threads/SM  regs/block  regs/SM  smem/block  smem/SM  opt-in  reserved  blocks/SM  SMs  example part
  const DOCUMENTED: Record<
    string,
    [number, number, number, number, number, number, number, number, number, number, string]
  > = {
    sm_50: [1024, 2048, 65536, 65536, 48, 64, 48, 0, 32, 5, 'GeForce GTX 750 Ti (5 SMs)'],
    sm_52: [1024, 2048, 65536, 65536, 48, 96, 48, 0, 32, 16, 'GeForce GTX 980 (16 SMs)'],
    sm_53: [1024, 2048, 32768, 65536, 48, 64, 48, 0, 32, 1, 'Jetson TX1 / Jetson Nano (1 SM)'],
    sm_60: [1024, 2048, 65536, 65536, 48, 64, 48, 0, 32, 56, 'Tesla P100 (56 SMs)'],
    sm_61: [1024, 2048, 65536, 65536, 48, 96, 48, 0, 32, 20, 'GeForce GTX 1080 (20 SMs)'],
    sm_62: [1024, 2048, 32768, 65536, 48, 64, 48, 0, 32, 2, 'Jetson TX2 (2 SMs)'],
    sm_70: [1024, 2048, 65536, 65536, 48, 96, 96, 0, 32, 80, 'Tesla V100 (80 SMs)'],
    sm_72: [1024, 2048, 65536, 65536, 48, 96, 96, 0, 32, 8, 'Jetson AGX Xavier (8 SMs)'],
    sm_75: [1024, 1024, 65536, 65536, 48, 64, 64, 0, 16, 40, 'Tesla T4 (40 SMs)'],
    sm_80: [1024, 2048, 65536, 65536, 48, 164, 163, 1, 32, 108, 'A100 (108 SMs)'],
    sm_86: [1024, 1536, 65536, 65536, 48, 100, 99, 1, 16, 82, 'GeForce RTX 3090 (82 SMs)'],
    sm_87: [1024, 1536, 65536, 65536, 48, 164, 163, 1, 16, 16, 'Jetson AGX Orin 64GB (16 SMs)'],
    sm_88: [1024, 1536, 65536, 65536, 48, 100, 99, 1, 16, 16, 'none known (placeholder)'],
    sm_89: [1024, 1536, 65536, 65536, 48, 100, 99, 1, 24, 128, 'GeForce RTX 4090 (128 SMs)'],
    sm_90: [1024, 2048, 65536, 65536, 48, 228, 227, 1, 32, 132, 'H100 SXM5 (132 SMs)'],
    sm_100: [1024, 2048, 65536, 65536, 48, 228, 227, 1, 32, 148, 'B200 (148 SMs)'],
    sm_103: [1024, 2048, 65536, 65536, 48, 228, 227, 1, 32, 148, 'B300 (148 SMs, unverified)'],
    sm_110: [1024, 1536, 65536, 65536, 48, 228, 227, 1, 24, 20, 'Jetson AGX Thor (20 SMs, unverified)'],
    sm_120: [1024, 1536, 65536, 65536, 48, 100, 99, 1, 24, 170, 'GeForce RTX 5090 (170 SMs)'],
    sm_121: [1024, 1536, 65536, 65536, 48, 100, 99, 1, 24, 48, 'DGX Spark GB10 (48 SMs, unverified)'],
  };

  const FAMILIES: Record<string, string> = {
    sm_50: 'Maxwell (GM107/GM108)',
    sm_52: 'Maxwell (GM20x)',
    sm_53: 'Maxwell (Tegra X1)',
    sm_60: 'Pascal (GP100)',
    sm_61: 'Pascal (GP10x)',
    sm_62: 'Pascal (Tegra X2)',
    sm_70: 'Volta (GV100)',
    sm_72: 'Volta (Xavier)',
    sm_75: 'Turing',
    sm_80: 'Ampere (GA100)',
    sm_86: 'Ampere (GA10x)',
    sm_87: 'Ampere (Orin)',
    sm_88: 'Ampere (8.8, no public part name)',
    sm_89: 'Ada Lovelace',
    sm_90: 'Hopper',
    sm_100: 'Blackwell (B200/GB200)',
    sm_103: 'Blackwell Ultra (B300/GB300)',
    sm_110: 'Blackwell (Jetson Thor)',
    sm_120: 'Blackwell (GB20x, RTX 50 series / RTX PRO)',
    sm_121: 'Blackwell (GB10, DGX Spark)',
  };

  it('holds the documented figures of every compute capability', () => {
    assert.deepEqual(
      Object.keys(DOCUMENTED),
      ARCHS.map((r) => r.name),
    );
    for (const row of ARCHS) {
      const d = row.device;
      const kb = (bytes: number) => bytes / 1024;
      assert.deepEqual(
        [
          d.maxThreadsPerBlock,
          d.maxThreadsPerMultiprocessor,
          d.regsPerBlock,
          d.regsPerMultiprocessor,
          kb(d.sharedMemPerBlock),
          kb(d.sharedMemPerMultiprocessor),
          kb(d.sharedMemPerBlockOptin),
          kb(d.reservedSharedMemPerBlock),
          row.maxBlocksPerMultiprocessor,
          d.numSms,
          row.numSmsExampleGpu,
        ],
        DOCUMENTED[row.name],
        row.name,
      );
      assert.equal(d.warpSize, 32, row.name);
      assert.equal(row.family, FAMILIES[row.name], row.name);
    }
  });

  it("agrees with NVIDIA's header on every row: block slots, allocation units, sub-partitions, carveouts, barriers", async function () {
    const build = buildOracle();
    if (!build.ok) {
      console.log(`    skipped: cannot build NVIDIA's calculator: ${build.reason}`);
      this.skip();
    }
    const answers = await runOracle(
      build.binary,
      ARCHS.map((row) => `constants ${deviceWords(row.device).join(' ')}`),
    );
    for (const [i, row] of ARCHS.entries()) {
      const [
        status,
        smemGranularity,
        regGranularity,
        maxRegs,
        subPartitions,
        maxBlocks,
        ,
        partitioned,
        barriersPerSlot,
        ,
        configurable,
        defaultSmem,
        ...carveouts
      ] = answers[i].split(' ').map(Number);
      assert.equal(status, 0, `${row.name}: the header knows it`);
      assert.deepEqual(
        [
          row.smemAllocationGranularity,
          row.regAllocationUnit,
          row.subPartitionsPerMultiprocessor,
          row.maxBlocksPerMultiprocessor,
          row.partitionedGlobalCachingSupported,
          row.barriersPerBlockSlot,
          row.carveoutConfigurable,
          row.device.sharedMemPerMultiprocessor,
          [...row.sharedMemCarveoutKB],
        ],
        [
          smemGranularity,
          regGranularity,
          subPartitions,
          maxBlocks,
          partitioned === 1,
          barriersPerSlot,
          configurable === 1,
          defaultSmem,
          carveouts,
        ],
        row.name,
      );
      // The documented 255; the header checks against 255 before 7.0 and 256 from 7.0.
      assert.equal(maxRegs, row.device.computeMajor >= 7 ? 256 : 255, row.name);
    }
  });
});
