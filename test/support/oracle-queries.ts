/**
 * Random oracle-protocol queries, seeded, weighted towards the corners: block sizes that
 * are not warp multiples or exceed 1024, register counts at 0 and around 255, shared
 * memory around the default and opt-in limits, every carveout, the cache and partitioned
 * caching settings, barriers, virtual resources and device overrides.
 */

import { ARCHS, archName, type ArchRow } from '../../server/src/core/gpu/arch-table';

/** mulberry32: a small, fast, seeded PRNG. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Query = Record<string, unknown>;

export class QueryMaker {
  private readonly rnd: () => number;

  constructor(seed: number) {
    this.rnd = seededRandom(seed);
  }

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.rnd() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.rnd() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rnd() * items.length)];
  }

  /** An arch spelling the oracle accepts. */
  archText(row: ArchRow): string {
    const { computeMajor: major, computeMinor: minor } = row.device;
    return this.pick([
      archName(row),
      archName(row),
      archName(row),
      `${archName(row)}a`,
      `compute_${major}${minor}`,
      `${major}.${minor}`,
      `${major}${minor}`,
      `sm_${major}${minor}f`,
    ]);
  }

  blockSize(): number {
    const r = this.rnd();
    if (r < 0.5) return this.int(1, 1024);
    if (r < 0.7) return 32 * this.int(1, 32);
    if (r < 0.8) return this.int(1, 64);
    if (r < 0.88) return this.pick([1024, 1023, 1025, 992, 993, 512, 513, 768, 769]);
    return this.int(1025, 2048);
  }

  numRegs(): number {
    const r = this.rnd();
    if (r < 0.65) return this.int(0, 255);
    if (r < 0.72) return 0;
    if (r < 0.82) return this.int(248, 258);
    if (r < 0.87) return this.int(259, 400);
    return 8 * this.int(1, 32);
  }

  smemBytes(row: ArchRow): number {
    const r = this.rnd();
    const optin = row.device.sharedMemPerBlockOptin;
    if (r < 0.35) return 0;
    if (r < 0.7) return this.int(0, 48 * 1024);
    if (r < 0.8)
      return this.pick([48 * 1024, 48 * 1024 - 1024, 48 * 1024 + 1, optin, optin - 1024, optin + 1, optin + 1024]);
    return this.int(0, optin + 8 * 1024);
  }

  /** Sets the optional fields shared by every mode. */
  private common(q: Query, row: ArchRow): void {
    if (this.chance(0.45)) q.carveout = this.chance(0.02) ? this.pick([-2, 101, 150]) : this.int(-1, 100);
    if (this.chance(0.3)) q.shmemLimitConfig = this.pick(['optin', 'default', 1, 0]);
    if (this.chance(0.08)) q.maxDynamicSharedSizeBytes = this.int(0, row.device.sharedMemPerBlockOptin + 4096);
    if (this.chance(0.5)) q.numBlockBarriers = this.int(0, 3);
    if (this.chance(0.25)) q.cacheConfig = this.pick(['none', 'shared', 'l1', 'equal', 0, 1, 2, 3]);
    if (this.chance(0.2)) q.partitionedGCConfig = this.pick(['off', 'on', 'on_strict', 1, 2]);
    if (this.chance(0.1)) q.virtualResourceCount = this.int(-2, 200);
    if (this.chance(0.05)) q.maxThreadsPerBlock = this.int(0, 1024);
    if (this.chance(0.03)) q.device = this.deviceOverride(row);
  }

  /** A few cudaOccDeviceProp fields changed: other minors, sizes beyond the carveouts, odd limits. */
  private deviceOverride(row: ArchRow): Query {
    const d: Query = {};
    const r = this.rnd();
    if (r < 0.3) d.computeMinor = this.int(0, 9);
    else if (r < 0.5) d.sharedMemPerMultiprocessor = this.int(1, 300 * 1024);
    else if (r < 0.65) d.regsPerMultiprocessor = this.pick([32768, 65536, 131072]);
    else if (r < 0.8) d.maxThreadsPerMultiprocessor = this.pick([512, 1024, 1536, 2048]);
    else if (r < 0.9) d.sharedMemPerBlockOptin = this.int(0, row.device.sharedMemPerMultiprocessor);
    else d.computeMajor = this.pick([3, 4, 13]);
    return d;
  }

  occupancyQuery(id: number): Query {
    const row = ARCHS[id % ARCHS.length];
    const q: Query = { id, arch: this.archText(row), blockSize: this.blockSize() };
    const regs = this.numRegs();
    if (this.chance(0.9)) q[this.chance(0.1) ? 'regsPerThread' : 'numRegs'] = regs;
    if (this.chance(0.65)) q[this.chance(0.1) ? 'staticSmemBytes' : 'sharedSizeBytes'] = this.smemBytes(row);
    if (this.chance(0.55)) q[this.chance(0.1) ? 'dynamicSMemSize' : 'dynamicSmemBytes'] = this.smemBytes(row);
    this.common(q, row);
    return q;
  }

  maxPotentialQuery(id: number): Query {
    const row = ARCHS[id % ARCHS.length];
    const q: Query = { id, mode: 'maxPotentialBlockSize', arch: this.archText(row) };
    if (this.chance(0.9)) q.numRegs = this.numRegs();
    if (this.chance(0.6)) q.sharedSizeBytes = this.smemBytes(row);
    if (this.chance(0.5)) q.dynamicSmemBytes = this.smemBytes(row);
    if (this.chance(0.5)) q.dynamicSmemPerThreadBytes = this.pick([0, 1, 4, 8, 16, 32, 64, this.int(0, 300)]);
    this.common(q, row);
    if (this.chance(0.4))
      q.maxThreadsPerBlock = this.pick([0, this.int(1, 1024), 32 * this.int(1, 32), this.int(1, 100)]);
    return q;
  }

  /** A valid query with one field spoiled: wrong type, fraction, out of range, unknown name or value. */
  spoiledQuery(id: number): Query {
    const q = this.chance(0.7) ? this.occupancyQuery(id) : this.maxPotentialQuery(id);
    const key = this.pick([
      'blockSize',
      'numRegs',
      'sharedSizeBytes',
      'dynamicSmemBytes',
      'carveout',
      'numBlockBarriers',
      'cacheConfig',
      'shmemLimitConfig',
      'partitionedGCConfig',
      'virtualResourceCount',
      'maxDynamicSharedSizeBytes',
      'arch',
      'unknownField',
    ]);
    q[key] = this.pick(['12', 1.5, true, [], {}, -70000, 70000, 2 ** 29, -1, 'sm_35', 'sm_9', 4, 'max', 9e15, 1e300]);
    return q;
  }

  availableDynamicSmemQuery(id: number): Query {
    const row = ARCHS[id % ARCHS.length];
    const q: Query = {
      id,
      mode: 'availableDynamicSmem',
      arch: this.archText(row),
      blockSize: this.blockSize(),
      numBlocks: this.int(-1, 40),
    };
    if (this.chance(0.8)) q.numRegs = this.int(0, 128);
    if (this.chance(0.6)) q.sharedSizeBytes = this.chance(0.5) ? this.int(0, 8192) : this.smemBytes(row);
    this.common(q, row);
    return q;
  }
}

/** Lines the oracle must refuse (or answer with a header error), with the exact text checked. */
export function badQueryLines(): string[] {
  const bad: Query[] = [
    { arch: 'sm_90' },
    { arch: 'sm_35', blockSize: 128 },
    { arch: 'sm_9x', blockSize: 128 },
    { arch: 90, blockSize: 128 },
    { blockSize: 128 },
    { arch: 'sm_90', blockSize: 128, numRegs: 3.5 },
    { arch: 'sm_90', blockSize: 128, numRegs: '32' },
    { arch: 'sm_90', blockSize: 128, numRegs: 32, regsPerThread: 33 },
    { arch: 'sm_90', blockSize: 128, numRegs: 32, regsPerThread: 32 },
    { arch: 'sm_90', blockSize: 70000 },
    { arch: 'sm_90', blockSize: -5 },
    { arch: 'sm_90', blockSize: 0 },
    { arch: 'sm_90', blockSize: 128, numRegs: -1 },
    { arch: 'sm_90', blockSize: 128, sharedSizeBytes: -1 },
    { arch: 'sm_90', blockSize: 128, sharedSizeBytes: 2 ** 28 + 1 },
    { arch: 'sm_90', blockSize: 128, dynamicSmemBytes: 2 ** 28 },
    { arch: 'sm_90', blockSize: 1024, numRegs: 60000 },
    { arch: 'sm_90', blockSize: 128, bogus: 1 },
    { arch: 'sm_90', blockSize: 128, numBlocks: 2 },
    { arch: 'sm_90', blockSize: 128, cacheConfig: 'big' },
    { arch: 'sm_90', blockSize: 128, cacheConfig: 4 },
    { arch: 'sm_90', blockSize: 128, partitionedGCConfig: true },
    { arch: 'sm_90', blockSize: 128, shmemLimitConfig: 'OPTIN' },
    { arch: 'sm_90', blockSize: 128, carveout: 101 },
    { arch: 'sm_61', blockSize: 128, carveout: 101 },
    { arch: 'sm_90', blockSize: 128, carveout: 70000 },
    { arch: 'sm_90', blockSize: 128, verbose: 1 },
    { arch: 'sm_90', blockSize: 128, mode: 7 },
    { arch: 'sm_90', blockSize: 128, mode: 'fastest' },
    { arch: 'sm_90', blockSize: 128, device: 5 },
    { arch: 'sm_90', blockSize: 128, device: { warpSize: 0 } },
    { arch: 'sm_90', blockSize: 128, device: { numSms: -1 } },
    { arch: 'sm_90', blockSize: 128, device: { sharedMemPerBlock: -1 } },
    { arch: 'sm_90', blockSize: 128, device: { l2Size: 1 } },
    { arch: 'sm_90', blockSize: 128, device: { computeMinor: 5 } },
    { arch: 'sm_100', blockSize: 128, device: { computeMinor: 2 } },
    { arch: 'sm_90', blockSize: 128, device: { computeMajor: 14 } },
    { device: { computeMajor: 9 }, blockSize: 128 },
    { arch: 'sm_90', blockSize: 128, maxThreadsPerBlock: -3 },
    { mode: 'maxPotentialBlockSize', arch: 'sm_90', maxThreadsPerBlock: -3 },
    { mode: 'maxPotentialBlockSize', arch: 'sm_90', blockSize: 128 },
    { mode: 'maxPotentialBlockSize', arch: 'sm_90', dynamicSmemPerThreadBytes: 20000 },
    { mode: 'maxPotentialBlockSize', arch: 'sm_90', dynamicSmemPerThreadBytes: 16384, dynamicSmemBytes: 2 ** 28 },
    { mode: 'availableDynamicSmem', arch: 'sm_90', blockSize: 128 },
    { mode: 'availableDynamicSmem', arch: 'sm_90', numBlocks: 2 },
    { mode: 'availableDynamicSmem', arch: 'sm_90', blockSize: 128, numBlocks: 0 },
    { mode: 'availableDynamicSmem', arch: 'sm_90', blockSize: 1024, numRegs: 64, numBlocks: 2 },
    { mode: 'availableDynamicSmem', arch: 'sm_70', blockSize: 128, numBlocks: 3, carveout: 0 },
    { mode: 'archInfo', arch: 'sm_90', blockSize: 1 },
    { mode: 'listArchs' },
    { mode: 'listArchs', arch: 'sm_90' },
    { id: 'x', arch: 'sm_90', blockSize: 128, numRegs: null, carveout: null },
    { id: null, arch: 'sm_90', blockSize: 128 },
    { id: { nested: [1, 2] }, arch: 'sm_90', blockSize: 128, bogus: 1 },
  ];
  const lines = bad.map((q) => JSON.stringify(q));
  lines.push(
    '{"arch":"sm_90","blockSize":128',
    '[1,2]',
    '42',
    'nonsense',
    '{"arch":"sm_90","blockSize":128,"blockSize":64}',
    '{"arch":"sm_90","blockSize":128} x',
    '{"arch":"sm_90","blockSize":01}',
    '{"arch":"sm_90","blockSize":1.}',
    '{"arch":"sm_90","blockSize":1e}',
    '{"arch":"sm_90","blockSize":-}',
    '{"arch":"sm_90","blockSize":256.0}',
    '{"arch":"sm_90","blockSize":2.56e2}',
    '{"arch":"sm_90","blockSize":1e400}',
    '{"arch":"sm_90","blockSize":1e-400}',
    '{"arch":"sm_90","blockSize":99999999999999999999}',
    '{"arch":"sm_90","blockSize":9007199254740993}',
    '{"arch":"sm_90","blockSize":9e15}',
    '{"id":1e300,"arch":"sm_90","blockSize":128}',
    '{"id":-0,"arch":"sm_90","blockSize":-0}',
    '{"arch":"sm\\u005f90","blockSize":128}',
    '{"arch":"sm_90\\x","blockSize":128}',
    '{"arch":"sm_90\\ud800","blockSize":128}',
    '{"arch":"sm_90\\ud800\\u0041","blockSize":128}',
    '{"arch":"sm_9\\u00e9","blockSize":128}',
    '{"arch":"sm_90","blockSize":128,}',
    '{"arch" "sm_90"}',
    '{arch:"sm_90"}',
    '{"arch":"sm_90","blockSize":tru}',
    '{"id":"\\u00e9\\ud83d\\ude00","arch":"sm_90","blockSize":32}',
    `{"id":${'['.repeat(70)}${']'.repeat(70)},"arch":"sm_90","blockSize":32}`,
    '{"arch":"\t","blockSize":1}',
    '{"mode":"occupancy","mode":"listArchs"}',
    '   {"arch":"sm_90","blockSize":32}   ',
  );
  return lines;
}
