/**
 * The calculator's line protocol (docs/cli-json.md, `calc --jsonl`): one JSON query object
 * in, one answer object out, with cuda_occupancy.h's field names, and the defaults, aliases,
 * validation and error texts of the occupancy oracle this protocol was first written to match.
 * `cuda-occupancy calc --jsonl` and the differential test (against the header itself) both go
 * through `answerQueryLine`, so what the test proves is what the CLI prints.
 *
 * Modes: occupancy (default), maxPotentialBlockSize, availableDynamicSmem, archInfo,
 * listArchs, version. `verbose: true` adds the oracle's `effective` object.
 */

import { ARCHS, archByCapability, archName, type ArchRow, type DeviceProps } from '../core/analyzer';
import {
  availableDynamicSmem,
  headerArchConstants,
  maxPotentialBlockSize,
  occupancy,
  resolveAttributes,
  resolveState,
  sharedMemPerMultiprocessorUsed,
  INT_MAX,
  type CacheConfig,
  type HeaderArchConstants,
  type OccupancyQuery,
  type OccupancyResult,
  type PartitionedGCConfig,
  type ShmemLimitConfig,
} from '../core/analyzer';

/** One answer line, as a plain object (key order follows the oracle's). */
export type OracleAnswer = Record<string, unknown>;

/** A parsed value; bigint: an integer literal beyond 2^53; Number object: an integral float literal the oracle does not take as an integer. */
// eslint-disable-next-line @typescript-eslint/no-wrapper-object-types -- a Number object marks an integral float (see above)
type Json = null | boolean | number | bigint | Number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

class QueryError extends Error {}

/** Bounds that keep the header's int arithmetic free of overflow (the oracle's kSizeMax / kCountMax). */
const SIZE_MAX = 2 ** 28;
const COUNT_MAX = 2 ** 16;

const PROP_FIELDS: ReadonlyArray<keyof DeviceProps> = [
  'computeMajor',
  'computeMinor',
  'maxThreadsPerBlock',
  'maxThreadsPerMultiprocessor',
  'regsPerBlock',
  'regsPerMultiprocessor',
  'warpSize',
  'sharedMemPerBlock',
  'sharedMemPerMultiprocessor',
  'numSms',
  'sharedMemPerBlockOptin',
  'reservedSharedMemPerBlock',
];
const SIZE_FIELDS = new Set<string>([
  'sharedMemPerBlock',
  'sharedMemPerMultiprocessor',
  'sharedMemPerBlockOptin',
  'reservedSharedMemPerBlock',
]);

const COMMON_KEYS = new Set([
  'id',
  'mode',
  'arch',
  'device',
  'verbose',
  'maxThreadsPerBlock',
  'numRegs',
  'regsPerThread',
  'sharedSizeBytes',
  'staticSmemBytes',
  'partitionedGCConfig',
  'shmemLimitConfig',
  'maxDynamicSharedSizeBytes',
  'numBlockBarriers',
  'virtualResourceCount',
  'cacheConfig',
  'carveout',
  'carveoutConfig',
]);

const MODES = 'occupancy, maxPotentialBlockSize, availableDynamicSmem, archInfo, listArchs, version';

// ---------------------------------------------------------------------------
// Reading fields
// ---------------------------------------------------------------------------

/** A field's value; null and absent both mean "not given". */
function field(q: JsonObject, name: string): Json | undefined {
  const v = Object.prototype.hasOwnProperty.call(q, name) ? q[name] : undefined;
  return v === null ? undefined : v;
}

function asInt(v: Json, name: string, lo: number, hi: number): number {
  // Integer literals, and integral float literals (256.0) below 9e15, are integers (see parseJsonLikeOracle).
  if (!(typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))))
    throw new QueryError(`field "${name}" must be an integer`);
  if (v < lo || v > hi) throw new QueryError(`field "${name}" = ${v} is outside [${lo}, ${hi}]`);
  return Number(v) + 0; // + 0: no -0
}

/** An integer that may be spelled under two names; both given and different is an error. */
function intAlias(q: JsonObject, a: string, b: string | null, lo: number, hi: number): number | undefined {
  const va = field(q, a);
  const vb = b === null ? undefined : field(q, b);
  if (va !== undefined && vb !== undefined) {
    const x = asInt(va, a, lo, hi);
    const y = asInt(vb, b!, lo, hi);
    if (x !== y) throw new QueryError(`fields "${a}" and "${b}" disagree`);
    return x;
  }
  if (va !== undefined) return asInt(va, a, lo, hi);
  if (vb !== undefined) return asInt(vb, b!, lo, hi);
  return undefined;
}

function enumField<T extends string>(q: JsonObject, name: string, dflt: T, names: ReadonlyArray<T>): T {
  const v = field(q, name);
  if (v === undefined) return dflt;
  if (typeof v === 'string' && names.includes(v as T)) return v as T;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < names.length) return names[v];
  throw new QueryError(`field "${name}" must be one of ${names.map((n, i) => `${n}/${i}`).join(', ')}`);
}

/** The oracle's arch-name reader: `sm_90`, `sm_90a`, `sm_100f`, `compute_90`, `90`, `9.0` (case as written). */
function parseOracleArchName(text: string): { major: number; minor: number } | undefined {
  let s = text;
  for (const prefix of ['sm_', 'compute_', 'SM_', 'sm', 'SM']) {
    if (s.startsWith(prefix)) {
      s = s.slice(prefix.length);
      break;
    }
  }
  if (s.endsWith('a') || s.endsWith('f')) s = s.slice(0, -1);
  const dotted = /^(\d+)\.(\d)$/.exec(s);
  if (dotted) return { major: Number(dotted[1]), minor: Number(dotted[2]) };
  if (s.includes('.') || !/^\d{2,3}$/.test(s)) return undefined;
  const n = Number(s);
  return { major: Math.floor(n / 10), minor: n % 10 };
}

interface Inputs {
  label: string;
  row: ArchRow | undefined;
  query: Omit<OccupancyQuery, 'blockSize'>;
}

function buildInputs(q: JsonObject): Inputs {
  const archV = field(q, 'arch');
  const devV = field(q, 'device');
  if (devV !== undefined && (typeof devV !== 'object' || Array.isArray(devV) || devV instanceof Number))
    throw new QueryError('field "device" must be an object');
  let row: ArchRow | undefined;
  let device: DeviceProps | undefined;
  let label = '';
  if (archV !== undefined) {
    if (typeof archV !== 'string') throw new QueryError('field "arch" must be a string such as "sm_90"');
    const cc = parseOracleArchName(archV);
    if (!cc) throw new QueryError(`cannot read arch "${archV}"`);
    row = archByCapability(cc.major, cc.minor);
    if (!row) {
      throw new QueryError(
        `arch "${archV}" (${cc.major}.${cc.minor}) is not in archs.json; give every cudaOccDeviceProp field in "device" instead`,
      );
    }
    device = { ...row.device };
    label = archName(row);
  } else if (devV === undefined) {
    throw new QueryError('give "arch" (e.g. "sm_90") or a full "device" object');
  }
  if (devV !== undefined) {
    const fields = devV as JsonObject;
    const given: Partial<DeviceProps> = { ...device };
    const seen = new Set<string>();
    for (const [key, value] of Object.entries(fields)) {
      if (!(PROP_FIELDS as readonly string[]).includes(key)) throw new QueryError(`unknown field "device.${key}"`);
      const lo = SIZE_FIELDS.has(key) ? 0 : -COUNT_MAX;
      given[key as keyof DeviceProps] = asInt(value, `device.${key}`, lo, propFieldMax(key));
      seen.add(key);
    }
    if (archV === undefined) {
      for (const f of PROP_FIELDS) if (!seen.has(f)) throw new QueryError(`without "arch", "device" must give ${f}`);
    }
    device = given as DeviceProps;
    if (label === '' || seen.has('computeMajor') || seen.has('computeMinor'))
      label = `sm_${device.computeMajor}${device.computeMinor}`;
  }
  const dev = device!;

  const maxThreadsPerBlock = intAlias(q, 'maxThreadsPerBlock', null, -COUNT_MAX, COUNT_MAX);
  const numRegs = intAlias(q, 'numRegs', 'regsPerThread', -COUNT_MAX, COUNT_MAX);
  const sharedSizeBytes = intAlias(q, 'sharedSizeBytes', 'staticSmemBytes', 0, SIZE_MAX);
  const partitionedGCConfig = enumField<PartitionedGCConfig>(q, 'partitionedGCConfig', 'off', [
    'off',
    'on',
    'on_strict',
  ]);
  const shmemLimitConfig = enumField<ShmemLimitConfig>(q, 'shmemLimitConfig', 'default', ['default', 'optin']);
  const maxDynamicSharedSizeBytes = intAlias(q, 'maxDynamicSharedSizeBytes', null, 0, SIZE_MAX);
  const numBlockBarriers = intAlias(q, 'numBlockBarriers', null, -COUNT_MAX, COUNT_MAX);
  const virtualResourceCount = intAlias(q, 'virtualResourceCount', null, -COUNT_MAX, COUNT_MAX);
  const cacheConfig = enumField<CacheConfig>(q, 'cacheConfig', 'none', ['none', 'shared', 'l1', 'equal']);
  const carveout = intAlias(q, 'carveout', 'carveoutConfig', -COUNT_MAX, COUNT_MAX);
  return {
    label,
    row,
    query: {
      device: dev,
      maxThreadsPerBlock,
      numRegs,
      sharedSizeBytes,
      partitionedGCConfig,
      shmemLimitConfig,
      maxDynamicSharedSizeBytes,
      numBlockBarriers,
      virtualResourceCount,
      cacheConfig,
      carveout,
    },
  };
}

function propFieldMax(name: string): number {
  if (SIZE_FIELDS.has(name)) return SIZE_MAX;
  if (name === 'regsPerBlock' || name === 'regsPerMultiprocessor') return 2 ** 24;
  if (name === 'warpSize') return 2 ** 10;
  if (name === 'numSms') return 2 ** 14;
  return COUNT_MAX;
}

/** The oracle refuses inputs whose products would overflow the header's int arithmetic. */
function checkHeaderArithmetic(inputs: Inputs, maxBlockSize: number, maxDynBytes: number): void {
  const q = inputs.query;
  const ws = q.device.warpSize;
  const regs = q.numRegs ?? 0;
  if (ws > 0 && regs > 0 && maxBlockSize > 0) {
    const perWarp = Math.trunc((regs * ws + 255) / 256) * 256;
    const warps = Math.trunc((maxBlockSize + ws - 1) / ws);
    const warpsRounded = Math.trunc((warps + 3) / 4) * 4;
    if (perWarp * warpsRounded > INT_MAX)
      throw new QueryError("numRegs x blockSize too large for the header's int arithmetic");
  }
  const smem = (q.sharedSizeBytes ?? 0) + q.device.reservedSharedMemPerBlock + maxDynBytes;
  if (smem + 256 > INT_MAX) throw new QueryError("shared memory sizes too large for the header's int arithmetic");
}

function checkKeys(q: JsonObject, extra: readonly string[]): void {
  for (const key of Object.keys(q)) {
    if (!COMMON_KEYS.has(key) && !extra.includes(key)) throw new QueryError(`unknown field "${key}"`);
  }
}

function wantVerbose(q: JsonObject): boolean {
  const v = field(q, 'verbose');
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw new QueryError('field "verbose" must be true or false');
  return v;
}

// ---------------------------------------------------------------------------
// Writing answers
// ---------------------------------------------------------------------------

function headerFields(out: OracleAnswer, inputs: Inputs): void {
  out.arch = inputs.label;
  out.computeMajor = inputs.query.device.computeMajor;
  out.computeMinor = inputs.query.device.computeMinor;
}

function occupancyFields(out: OracleAnswer, r: OccupancyResult): void {
  out.activeBlocksPerMultiprocessor = r.activeBlocksPerMultiprocessor;
  out.activeWarps = r.activeWarps;
  out.activeThreads = r.activeThreads;
  out.warpsPerBlock = r.warpsPerBlock;
  out.maxWarpsPerMultiprocessor = r.maxWarpsPerMultiprocessor;
  out.occupancy = r.occupancy;
  out.limitingFactors = [...r.limitingFactors];
  out.limitingFactorsMask = r.limitingFactorsMask;
  out.blockLimitRegs = r.blockLimitRegs;
  out.blockLimitSharedMem = r.blockLimitSharedMem;
  out.blockLimitWarps = r.blockLimitWarps;
  out.blockLimitBlocks = r.blockLimitBlocks;
  out.blockLimitBarriers = r.blockLimitBarriers;
  out.blockLimitVirtual = r.blockLimitVirtual;
  out.allocatedRegistersPerBlock = r.allocatedRegistersPerBlock;
  out.allocatedSharedMemPerBlock = r.allocatedSharedMemPerBlock;
  out.partitionedGCConfig = r.partitionedGCConfig;
}

function headerConstantsJson(h: HeaderArchConstants): OracleAnswer {
  const out: OracleAnswer = {};
  if (h.error !== null) out.error = h.error;
  Object.assign(out, {
    smemAllocationGranularity: h.smemAllocationGranularity,
    regAllocationGranularity: h.regAllocationGranularity,
    regAllocationScope: 'warp',
    maxRegsPerThread: h.maxRegsPerThread,
    subPartitionsPerMultiprocessor: h.subPartitionsPerMultiprocessor,
    maxBlocksPerMultiprocessor: h.maxBlocksPerMultiprocessor,
    maxVirtualResourcesPerMultiprocessor: h.maxVirtualResourcesPerMultiprocessor,
    partitionedGlobalCachingSupported: h.partitionedGlobalCachingSupported,
    barriersPerBlockSlot: h.barriersPerBlockSlot,
    barrierLimitApplied: h.barrierLimitApplied,
    carveoutConfigurable: h.carveoutConfigurable,
    sharedMemCarveoutKB: h.sharedMemCarveoutKB,
    defaultSharedMemPerMultiprocessor: h.defaultSharedMemPerMultiprocessor,
  });
  return out;
}

/** The oracle's `effective` object: what was passed to the header, and its constants. */
function effective(inputs: Inputs, smemUsed?: { value?: number; error?: string }): OracleAnswer {
  const a = resolveAttributes(inputs.query);
  const s = resolveState(inputs.query);
  const header = headerConstantsJson(headerArchConstants(inputs.query.device));
  if (smemUsed?.value !== undefined) header.sharedMemPerMultiprocessorUsed = smemUsed.value;
  else if (smemUsed?.error !== undefined) header.sharedMemPerMultiprocessorUsedError = smemUsed.error;
  const device: OracleAnswer = {};
  for (const f of PROP_FIELDS) device[f] = inputs.query.device[f];
  return {
    device,
    attributes: { ...a },
    state: { cacheConfig: s.cacheConfig, carveout: s.carveout },
    header,
  };
}

function modeOccupancy(q: JsonObject, out: OracleAnswer): OracleAnswer {
  checkKeys(q, ['blockSize', 'dynamicSmemBytes', 'dynamicSMemSize']);
  const inputs = buildInputs(q);
  const blockSize = intAlias(q, 'blockSize', null, -COUNT_MAX, COUNT_MAX);
  if (blockSize === undefined) throw new QueryError('field "blockSize" is required');
  const dyn = intAlias(q, 'dynamicSmemBytes', 'dynamicSMemSize', 0, SIZE_MAX) ?? 0;
  checkHeaderArithmetic(inputs, blockSize, dyn);
  headerFields(out, inputs);
  out.blockSize = blockSize;
  out.dynamicSmemBytes = dyn;
  const query: OccupancyQuery = { ...inputs.query, blockSize, dynamicSmemBytes: dyn };
  const r = occupancy(query);
  if (!r.ok) {
    out.ok = false;
    out.error = r.error;
    if (wantVerbose(q)) out.effective = effective(inputs);
    return out;
  }
  out.ok = true;
  out.error = null;
  occupancyFields(out, r.value);
  if (wantVerbose(q)) {
    const used = sharedMemPerMultiprocessorUsed(query, r.value.allocatedSharedMemPerBlock);
    out.effective = effective(inputs, used.ok ? { value: used.value } : { error: used.error });
  }
  return out;
}

function modeMaxPotentialBlockSize(q: JsonObject, out: OracleAnswer): OracleAnswer {
  checkKeys(q, ['dynamicSmemBytes', 'dynamicSMemSize', 'dynamicSmemPerThreadBytes']);
  const inputs = buildInputs(q);
  const dyn = intAlias(q, 'dynamicSmemBytes', 'dynamicSMemSize', 0, SIZE_MAX) ?? 0;
  const perThread = intAlias(q, 'dynamicSmemPerThreadBytes', null, 0, 2 ** 14) ?? 0;
  const device = inputs.query.device;
  const attrs = resolveAttributes(inputs.query);
  const ws = device.warpSize > 0 ? device.warpSize : 1;
  const maxBs = Math.trunc((Math.max(device.maxThreadsPerBlock, attrs.maxThreadsPerBlock) + ws - 1) / ws) * ws;
  checkHeaderArithmetic(inputs, maxBs, dyn + perThread * maxBs);
  headerFields(out, inputs);
  out.dynamicSmemBytes = dyn;
  if (perThread) out.dynamicSmemPerThreadBytes = perThread;
  const r = maxPotentialBlockSize({ ...inputs.query, dynamicSmemBytes: dyn, dynamicSmemPerThreadBytes: perThread });
  if (!r.ok) {
    out.ok = false;
    out.error = r.error;
    if (wantVerbose(q)) out.effective = effective(inputs);
    return out;
  }
  out.ok = true;
  out.error = null;
  out.blockSize = r.value.blockSize;
  out.minGridSize = r.value.minGridSize;
  if (r.value.blockSize > 0) {
    const dynAt = dyn + perThread * r.value.blockSize;
    const at = occupancy({ ...inputs.query, blockSize: r.value.blockSize, dynamicSmemBytes: dynAt });
    if (at.ok) {
      const atOut: OracleAnswer = { dynamicSmemBytes: dynAt };
      occupancyFields(atOut, at.value);
      out.atBlockSize = atOut;
    }
  }
  if (wantVerbose(q)) out.effective = effective(inputs);
  return out;
}

function modeAvailableDynamicSmem(q: JsonObject, out: OracleAnswer): OracleAnswer {
  checkKeys(q, ['blockSize', 'numBlocks']);
  const inputs = buildInputs(q);
  const blockSize = intAlias(q, 'blockSize', null, -COUNT_MAX, COUNT_MAX);
  if (blockSize === undefined) throw new QueryError('field "blockSize" is required');
  const numBlocks = intAlias(q, 'numBlocks', null, -COUNT_MAX, COUNT_MAX);
  if (numBlocks === undefined) throw new QueryError('field "numBlocks" is required');
  checkHeaderArithmetic(inputs, blockSize, 0);
  headerFields(out, inputs);
  out.blockSize = blockSize;
  out.numBlocks = numBlocks;
  const r = availableDynamicSmem({ ...inputs.query, blockSize, numBlocks });
  if (r.ok) {
    out.ok = true;
    out.error = null;
    out.dynamicSmemBytes = r.value;
  } else {
    out.ok = false;
    out.error = r.error;
  }
  if (wantVerbose(q)) out.effective = effective(inputs);
  return out;
}

function modeArchInfo(q: JsonObject, out: OracleAnswer): OracleAnswer {
  checkKeys(q, []);
  const inputs = buildInputs(q);
  headerFields(out, inputs);
  const h = headerArchConstants(inputs.query.device);
  out.ok = h.error === null;
  out.error = h.error;
  const device: OracleAnswer = {};
  for (const f of PROP_FIELDS) device[f] = inputs.query.device[f];
  out.device = device;
  out.header = headerConstantsJson(h);
  const mismatches: string[] = [];
  if (inputs.row) {
    const row = inputs.row;
    out.table = {
      maxBlocksPerMultiprocessor: row.maxBlocksPerMultiprocessor,
      carveoutConfigurable: row.carveoutConfigurable,
      sharedMemCarveoutKB: [...row.sharedMemCarveoutKB],
    };
    if (row.maxBlocksPerMultiprocessor !== h.maxBlocksPerMultiprocessor) mismatches.push('maxBlocksPerMultiprocessor');
    if (row.sharedMemCarveoutKB.join(',') !== h.sharedMemCarveoutKB.join(',')) mismatches.push('sharedMemCarveoutKB');
    if (row.carveoutConfigurable !== h.carveoutConfigurable) mismatches.push('carveoutConfigurable');
    if (h.defaultSharedMemPerMultiprocessor !== inputs.query.device.sharedMemPerMultiprocessor) {
      mismatches.push('defaultSharedMemPerMultiprocessor');
    }
  }
  out.consistent = h.error === null && mismatches.length === 0;
  out.mismatches = mismatches;
  return out;
}

function modeListArchs(q: JsonObject, out: OracleAnswer): OracleAnswer {
  checkKeys(q, []);
  out.ok = true;
  out.error = null;
  out.archs = ARCHS.map(archName);
  return out;
}

function modeVersion(q: JsonObject, out: OracleAnswer): OracleAnswer {
  checkKeys(q, []);
  out.ok = true;
  out.error = null;
  out.header = 'cuda-occupancy-lens: TypeScript re-implementation of cuda_occupancy.h (CUDA 13.0)';
  out.cudaOccMaxComputeMajor = 12;
  out.cudaOccMaxComputeMinor = 1;
  out.archCount = ARCHS.length;
  return out;
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/** Answers one parsed query the way the oracle answers it. Never throws on bad input. */
export function answerQuery(query: unknown): OracleAnswer {
  if (typeof query !== 'object' || query === null || Array.isArray(query) || query instanceof Number) {
    return { mode: '?', ok: false, error: 'bad query: each line must be a JSON object' };
  }
  const q = query as JsonObject;
  const hasId = Object.prototype.hasOwnProperty.call(q, 'id');
  const out: OracleAnswer = {};
  // A bigint id (beyond 2^53) is echoed as the nearest double: JSON.stringify cannot write a bigint.
  const id = typeof q.id === 'bigint' ? Number(q.id) : q.id;
  if (hasId) out.id = id;
  let mode = 'occupancy';
  try {
    const m = field(q, 'mode');
    if (m !== undefined) {
      if (typeof m !== 'string') throw new QueryError('field "mode" must be a string');
      mode = m;
    }
    out.mode = mode;
    switch (mode) {
      case 'occupancy':
        return modeOccupancy(q, out);
      case 'maxPotentialBlockSize':
        return modeMaxPotentialBlockSize(q, out);
      case 'availableDynamicSmem':
        return modeAvailableDynamicSmem(q, out);
      case 'archInfo':
        return modeArchInfo(q, out);
      case 'listArchs':
        return modeListArchs(q, out);
      case 'version':
        return modeVersion(q, out);
      default:
        throw new QueryError(`unknown mode "${mode}" (${MODES})`);
    }
  } catch (e) {
    if (!(e instanceof QueryError)) throw e;
    const err: OracleAnswer = {};
    if (hasId) err.id = id;
    err.mode = mode;
    err.ok = false;
    err.error = `bad query: ${e.message}`;
    return err;
  }
}

/** True for lines the protocol skips without an answer: blank, `#...` and `//...`. */
export function isSkippedLine(line: string): boolean {
  const t = line.replace(/^[ \t]+/, '').replace(/\r$/, '');
  return t === '' || t.startsWith('#') || t.startsWith('//');
}

/** Parses and answers one protocol line (which must not be a skipped line). */
export function answerQueryLine(line: string): OracleAnswer {
  let parsed: unknown;
  try {
    parsed = parseJsonLikeOracle(line.replace(/\r$/, ''));
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    return { mode: '?', ok: false, error: `bad query: ${e.message}` };
  }
  return answerQuery(parsed);
}

// ---------------------------------------------------------------------------
// The oracle's JSON reader
// ---------------------------------------------------------------------------

class JsonSyntaxError extends Error {}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Parses one line as the oracle's own JSON reader does, so that the same lines are refused
 * with the same message (byte offsets included) and numbers keep the oracle's notion of
 * "integer": an integer literal is one (beyond 2^53 it becomes a BigInt; beyond 64 bits it
 * is an error), a literal with a fraction or exponent is one only if integral and below
 * 9e15 (larger ones become boxed Numbers, which no integer field accepts). Duplicate keys
 * and nesting deeper than 64 are refused.
 */
function parseJsonLikeOracle(text: string): unknown {
  const t = encoder.encode(text);
  let p = 0;
  const fail = (msg: string): never => {
    throw new JsonSyntaxError(`JSON parse error at offset ${p}: ${msg}`);
  };
  const describeByte = (b: number): string =>
    b >= 0x20 && b < 0x7f ? `'${String.fromCharCode(b)}'` : `byte 0x${b.toString(16).toUpperCase().padStart(2, '0')}`;
  const skipWs = (): void => {
    while (p < t.length && (t[p] === 0x20 || t[p] === 0x09 || t[p] === 0x0a || t[p] === 0x0d)) p++;
  };
  const peek = (): number => (p < t.length ? t[p] : 0);
  const isDigit = (b: number): boolean => b >= 0x30 && b <= 0x39;
  const expect = (c: string): void => {
    if (peek() !== c.charCodeAt(0)) fail(`expected '${c}'`);
    p++;
  };
  const consumeWord = (w: string): boolean => {
    for (let k = 0; k < w.length; k++) if (t[p + k] !== w.charCodeAt(k)) return false;
    p += w.length;
    return true;
  };
  const utf8Length = (): number => {
    const u = t[p];
    const n = u >= 0xf0 && u <= 0xf4 ? 4 : u >= 0xe0 ? 3 : u >= 0xc2 && u <= 0xdf ? 2 : 0;
    if (n === 0 || u > 0xf4 || p + n > t.length) return 0;
    for (let k = 1; k < n; k++) if ((t[p + k] & 0xc0) !== 0x80) return 0;
    return n;
  };
  const hex4 = (): number => {
    if (p + 4 > t.length) fail('truncated \\u escape');
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const h = t[p++];
      v <<= 4;
      if (isDigit(h)) v |= h - 0x30;
      else if (h >= 0x61 && h <= 0x66) v |= h - 0x61 + 10;
      else if (h >= 0x41 && h <= 0x46) v |= h - 0x41 + 10;
      else fail('bad hex digit in \\u escape');
    }
    return v;
  };
  const parseString = (): string => {
    expect('"');
    const out: number[] = [];
    for (;;) {
      if (p >= t.length) fail('unterminated string');
      if (t[p] >= 0x80) {
        const n = utf8Length();
        if (n === 0) fail('invalid UTF-8 in string');
        for (let k = 0; k < n; k++) out.push(t[p++]);
        continue;
      }
      const c = t[p++];
      if (c === 0x22) break;
      if (c < 0x20) fail('control character in string');
      if (c !== 0x5c) {
        out.push(c);
        continue;
      }
      if (p >= t.length) fail('unterminated escape');
      const e = t[p++];
      const simple: Record<number, number> = {
        0x22: 0x22,
        0x5c: 0x5c,
        0x2f: 0x2f,
        0x62: 8,
        0x66: 12,
        0x6e: 10,
        0x72: 13,
        0x74: 9,
      };
      if (simple[e] !== undefined) {
        out.push(simple[e]);
      } else if (e === 0x75) {
        let cp = hex4();
        if (cp >= 0xd800 && cp <= 0xdbff) {
          if (t[p] !== 0x5c || t[p + 1] !== 0x75) fail('lone high surrogate');
          p += 2;
          const lo = hex4();
          if (lo < 0xdc00 || lo > 0xdfff) fail('bad low surrogate');
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        }
        if (cp < 0x80) out.push(cp);
        else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
        else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
        else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
      } else {
        fail(`bad escape \\${describeByte(e)}`);
      }
    }
    return decoder.decode(new Uint8Array(out));
  };
  const parseNumber = (): unknown => {
    const start = p;
    let isFloat = false;
    if (peek() === 0x2d) p++;
    if (peek() === 0x30) p++;
    else if (peek() >= 0x31 && peek() <= 0x39) while (isDigit(peek())) p++;
    else fail('bad number');
    if (peek() === 0x2e) {
      isFloat = true;
      p++;
      if (!isDigit(peek())) fail("bad number: digit expected after '.'");
      while (isDigit(peek())) p++;
    }
    if (peek() === 0x65 || peek() === 0x45) {
      isFloat = true;
      p++;
      if (peek() === 0x2b || peek() === 0x2d) p++;
      if (!isDigit(peek())) fail('bad number: digit expected in exponent');
      while (isDigit(peek())) p++;
    }
    const tok = decoder.decode(t.subarray(start, p));
    if (!isFloat) {
      const big = BigInt(tok);
      if (big > 9223372036854775807n || big < -9223372036854775808n) fail(`integer out of range: ${tok}`);
      return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
    }
    const d = Number(tok);
    // strtod reports ERANGE for overflow and for results that underflow to subnormal or zero.
    const underflow = Math.abs(d) < 2.2250738585072014e-308 && /[1-9]/.test(tok.split(/[eE]/)[0]);
    if (!Number.isFinite(d) || underflow) fail(`number out of range: ${tok}`);
    return Number.isInteger(d) && Math.abs(d) >= 9.0e15 ? new Number(d) : d;
  };
  const parseValue = (depth: number): unknown => {
    if (depth > 64) fail('nesting too deep');
    skipWs();
    const c = peek();
    if (c === 0x7b) {
      p++;
      const obj: Record<string, unknown> = {};
      skipWs();
      if (peek() === 0x7d) {
        p++;
        return obj;
      }
      for (;;) {
        skipWs();
        if (peek() !== 0x22) fail('expected a string key');
        const key = parseString();
        if (Object.prototype.hasOwnProperty.call(obj, key)) fail(`duplicate key "${key}"`);
        skipWs();
        expect(':');
        Object.defineProperty(obj, key, {
          value: parseValue(depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        skipWs();
        if (peek() === 0x2c) {
          p++;
          continue;
        }
        if (peek() === 0x7d) {
          p++;
          break;
        }
        fail("expected ',' or '}' in object");
      }
      return obj;
    }
    if (c === 0x5b) {
      p++;
      const arr: unknown[] = [];
      skipWs();
      if (peek() === 0x5d) {
        p++;
        return arr;
      }
      for (;;) {
        arr.push(parseValue(depth + 1));
        skipWs();
        if (peek() === 0x2c) {
          p++;
          continue;
        }
        if (peek() === 0x5d) {
          p++;
          break;
        }
        fail("expected ',' or ']' in array");
      }
      return arr;
    }
    if (c === 0x22) return parseString();
    if (c === 0x2d || isDigit(c)) return parseNumber();
    if (consumeWord('true')) return true;
    if (consumeWord('false')) return false;
    if (consumeWord('null')) return null;
    return fail(p < t.length ? `unexpected character ${describeByte(c)}` : 'unexpected end of input');
  };
  skipWs();
  const value = parseValue(0);
  skipWs();
  if (p !== t.length) fail('trailing characters after the JSON value');
  return value;
}
