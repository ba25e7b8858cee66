/**
 * Occupancy baselines: `cuda-occupancy baseline write FILE` records, per compiled kernel instance
 * and architecture, registers, spills and shared memory, and per launch the occupancy and active
 * blocks; `check --baseline FILE` reports what got worse. Pure: works on the `check --format json`
 * object only.
 *
 * Nothing is keyed by line. A kernel instance is its file, qualified name and signature (mangled
 * name when ptxas gave no signature); a launch is its file, kernel, template arguments, block and
 * dynamic shared memory. Identical keys in one file get an ordinal in source order. When a key is
 * not found (the file moved, or the check ran from another directory), an entry whose key without
 * the file is unique on both sides is taken.
 */
import type { CheckJson, CheckJsonLaunch, CheckJsonOccupancy, CheckJsonResources } from './check-json-types';

export const BASELINE_FORMAT = 'cuda-occupancy-baseline';
export const BASELINE_VERSION = 1;

export interface Baseline {
  format: typeof BASELINE_FORMAT;
  version: typeof BASELINE_VERSION;
  /** The tool version that wrote it (informational). */
  generator?: string;
  archs: string[];
  kernels: BaselineKernel[];
  launches: BaselineLaunch[];
}

export interface BaselineKernel {
  file: string;
  qualifiedName: string;
  signature: string | null;
  mangledName: string | null;
  ordinal: number;
  archs: Record<string, BaselineKernelFigures>;
}

export interface BaselineKernelFigures {
  numRegs: number | null;
  spillStoreBytes: number | null;
  spillLoadBytes: number | null;
  sharedSizeBytes: number | null;
  stackFrameBytes: number | null;
  source: string;
}

export interface BaselineLaunch {
  file: string;
  kernel: string;
  templateArgs: string[] | null;
  /** `256x1x1`, or the expression as written when it is not known statically. */
  block: string;
  /** Bytes, or the expression as written when it is not known statically. */
  dynamicSmem: string;
  ordinal: number;
  /** Per arch; null when no occupancy could be claimed. */
  archs: Record<string, BaselineLaunchOccupancy | null>;
}

export interface BaselineLaunchOccupancy {
  occupancy: number;
  activeBlocksPerMultiprocessor: number;
  activeWarps: number | null;
  limitingFactors: string[];
}

export type RegressionCode =
  'baseline-more-registers' | 'baseline-new-spill' | 'baseline-lower-occupancy' | 'baseline-launch-no-longer-fits';

/** Something that got worse since the baseline, placed where it is now. */
export interface Regression {
  code: RegressionCode;
  severity: 'error' | 'warning';
  /** The current file, line and column (1-based) of the kernel or launch. */
  file: string;
  line: number;
  column: number;
  arch: string;
  /** The kernel instance or launch it is about, as a reader would name it. */
  subject: string;
  before: string;
  after: string;
  message: string;
}

/** A baseline file that cannot be used; the message says why. */
export class BaselineError extends Error {}

// ---------------------------------------------------------------------------
// Writing

export function writeBaseline(check: CheckJson, { generator }: { generator?: string } = {}): Baseline {
  const kernels = currentKernels(check).map(({ entry }) => entry);
  const launches = currentLaunches(check).map(({ entry }) => entry);
  const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  return {
    format: BASELINE_FORMAT,
    version: BASELINE_VERSION,
    ...(generator ? { generator } : {}),
    archs: [...check.archs],
    kernels: kernels
      .map((entry) => ({ key: kernelKey(entry, true), entry }))
      .sort(byKey)
      .map((x) => x.entry),
    launches: launches
      .map((entry) => ({ key: launchKey(entry, true), entry }))
      .sort(byKey)
      .map((x) => x.entry),
  };
}

interface Located<T> {
  entry: T;
  file: string;
  line: number;
  column: number;
}

function currentKernels(check: CheckJson): Located<BaselineKernel>[] {
  const out: Located<BaselineKernel>[] = [];
  for (const file of check.files) {
    const counts = new Map<string, number>();
    for (const kernel of file.kernels) {
      for (const instance of kernel.instances) {
        const entry: BaselineKernel = {
          file: normalizePath(file.path),
          qualifiedName: kernel.qualifiedName,
          signature: instance.signature ?? null,
          mangledName: instance.mangledName ?? null,
          ordinal: 0,
          archs: Object.fromEntries(Object.entries(instance.resources).map(([arch, r]) => [arch, kernelFigures(r)])),
        };
        entry.ordinal = nextOrdinal(counts, kernelKey(entry, false));
        out.push({ entry, file: file.path, line: kernel.line, column: kernel.column });
      }
    }
  }
  return out;
}

function currentLaunches(check: CheckJson): Located<BaselineLaunch>[] {
  const out: Located<BaselineLaunch>[] = [];
  for (const file of check.files) {
    const counts = new Map<string, number>();
    for (const launch of file.launches) {
      const entry: BaselineLaunch = {
        file: normalizePath(file.path),
        kernel: launch.kernel,
        templateArgs: launch.templateArgs ? [...launch.templateArgs] : null,
        block: blockText(launch),
        dynamicSmem:
          launch.dynamicSmemBytes !== null && launch.dynamicSmemBytes !== undefined
            ? String(launch.dynamicSmemBytes)
            : (launch.dynamicSmemExpr ?? '?'),
        ordinal: 0,
        archs: Object.fromEntries(
          Object.entries(launch.occupancy ?? {}).map(([arch, o]) => [arch, launchOccupancy(o)]),
        ),
      };
      entry.ordinal = nextOrdinal(counts, launchKey(entry, false));
      out.push({ entry, file: file.path, line: launch.line, column: launch.column });
    }
  }
  return out;
}

function kernelFigures(r: CheckJsonResources): BaselineKernelFigures {
  return {
    numRegs: r.numRegs ?? null,
    spillStoreBytes: r.spillStoreBytes ?? null,
    spillLoadBytes: r.spillLoadBytes ?? null,
    sharedSizeBytes: r.sharedSizeBytes ?? null,
    stackFrameBytes: r.stackFrameBytes ?? null,
    source: r.source,
  };
}

function launchOccupancy(o: CheckJsonOccupancy | null): BaselineLaunchOccupancy | null {
  if (!o || typeof o.occupancy !== 'number' || typeof o.activeBlocksPerMultiprocessor !== 'number') return null;
  return {
    occupancy: o.occupancy,
    activeBlocksPerMultiprocessor: o.activeBlocksPerMultiprocessor,
    activeWarps: typeof o.activeWarps === 'number' ? o.activeWarps : null,
    limitingFactors: Array.isArray(o.limitingFactors) ? [...o.limitingFactors] : [],
  };
}

function blockText(launch: CheckJsonLaunch): string {
  const b = launch.block;
  return b ? `${b.x}x${b.y}x${b.z}` : (launch.blockExpr ?? '?');
}

function nextOrdinal(counts: Map<string, number>, key: string): number {
  const n = counts.get(key) ?? 0;
  counts.set(key, n + 1);
  return n;
}

const SEP = '\u0000';

export function kernelKey(k: BaselineKernel, withFile: boolean): string {
  return [withFile ? k.file : '', k.qualifiedName, k.signature ?? k.mangledName ?? ''].join(SEP);
}

export function launchKey(l: BaselineLaunch, withFile: boolean): string {
  return [withFile ? l.file : '', l.kernel, l.templateArgs?.join(',') ?? '', l.block, l.dynamicSmem].join(SEP);
}

const normalizePath = (p: string) => p.replace(/\\/g, '/').replace(/^\.\//, '');

// ---------------------------------------------------------------------------
// Comparing

/** What got worse in `check` compared with `baseline`, in file order. */
export function compareToBaseline(check: CheckJson, baseline: Baseline): Regression[] {
  const regressions: Regression[] = [];
  const kernels = currentKernels(check);
  const kernelMatches = match(
    baseline.kernels,
    kernels,
    (k, withFile) => `${kernelKey(k, withFile)}${SEP}${k.ordinal}`,
  );
  kernels.forEach((current, i) => {
    const before = kernelMatches[i];
    if (before) regressions.push(...kernelRegressions(current, before));
  });
  const launches = currentLaunches(check);
  const launchMatches = match(
    baseline.launches,
    launches,
    (l, withFile) => `${launchKey(l, withFile)}${SEP}${l.ordinal}`,
  );
  launches.forEach((current, i) => {
    const before = launchMatches[i];
    if (before) regressions.push(...launchRegressions(current, before));
  });
  const fileOrder = new Map(check.files.map((f, i) => [f.path, i]));
  return regressions
    .map((r, i) => ({ r, i }))
    .sort(
      (a, b) =>
        (fileOrder.get(a.r.file) ?? 0) - (fileOrder.get(b.r.file) ?? 0) ||
        a.r.line - b.r.line ||
        a.r.column - b.r.column ||
        a.i - b.i,
    )
    .map(({ r }) => r);
}

/**
 * The baseline entry of each current entry: the same key first; else, for entries left over on
 * both sides, the same key without the file when it is unique among the left-overs of each side.
 */
function match<T>(
  baseline: readonly T[],
  current: ReadonlyArray<Located<T>>,
  key: (entry: T, withFile: boolean) => string,
): Array<T | undefined> {
  const exact = new Map(baseline.map((e) => [key(e, true), e]));
  const result: Array<T | undefined> = current.map(({ entry }) => exact.get(key(entry, true)));
  const used = new Set(result.filter((e): e is T => e !== undefined));
  const group = <U>(items: Array<[string, U]>) => {
    const map = new Map<string, U[]>();
    for (const [k, item] of items) map.set(k, [...(map.get(k) ?? []), item]);
    return map;
  };
  const leftBefore = group(baseline.filter((e) => !used.has(e)).map((e) => [key(e, false), e] as [string, T]));
  const leftNow = group(
    current.flatMap(({ entry }, i) => (result[i] === undefined ? [[key(entry, false), i] as [string, number]] : [])),
  );
  for (const [k, indices] of leftNow) {
    const candidates = leftBefore.get(k) ?? [];
    if (indices.length === 1 && candidates.length === 1) result[indices[0]] = candidates[0];
  }
  return result;
}

function kernelRegressions(current: Located<BaselineKernel>, before: BaselineKernel): Regression[] {
  const out: Regression[] = [];
  const subject = instanceName(current.entry);
  for (const [arch, now] of Object.entries(current.entry.archs)) {
    const then = before.archs[arch];
    if (!then) continue;
    const where = { file: current.file, line: current.line, column: current.column, arch, subject };
    if (then.numRegs !== null && now.numRegs !== null && now.numRegs > then.numRegs) {
      out.push({
        ...where,
        code: 'baseline-more-registers',
        severity: 'warning',
        before: `${then.numRegs} registers`,
        after: `${now.numRegs} registers`,
        message: `${subject} on ${arch} uses ${now.numRegs} registers per thread, ${now.numRegs - then.numRegs} more than the baseline's ${then.numRegs}.`,
      });
    }
    const spillThen = spillBytes(then);
    const spillNow = spillBytes(now);
    if (spillThen !== null && spillNow !== null && spillNow > spillThen) {
      out.push({
        ...where,
        code: 'baseline-new-spill',
        severity: 'warning',
        before: spillText(then),
        after: spillText(now),
        message:
          spillThen === 0
            ? `${subject} on ${arch} now spills registers (${spillText(now)}); the baseline had no spills.`
            : `${subject} on ${arch} spills more: ${spillText(now)}, was ${spillText(then)} in the baseline.`,
      });
    }
  }
  return out;
}

function launchRegressions(current: Located<BaselineLaunch>, before: BaselineLaunch): Regression[] {
  const out: Regression[] = [];
  const subject = launchName(current.entry);
  for (const [arch, now] of Object.entries(current.entry.archs)) {
    const then = before.archs[arch];
    if (!then || !now) continue;
    const where = { file: current.file, line: current.line, column: current.column, arch, subject };
    if (then.activeBlocksPerMultiprocessor > 0 && now.activeBlocksPerMultiprocessor === 0) {
      out.push({
        ...where,
        code: 'baseline-launch-no-longer-fits',
        severity: 'error',
        before: occupancyText(then),
        after: occupancyText(now),
        message: `${subject} no longer fits on an ${arch} SM${limitedBy(now)}: not one block can be resident, so the launch fails. The baseline had ${occupancyText(then)}.`,
      });
    } else if (now.occupancy < then.occupancy - 1e-9) {
      out.push({
        ...where,
        code: 'baseline-lower-occupancy',
        severity: 'warning',
        before: occupancyText(then),
        after: occupancyText(now),
        message: `${subject} on ${arch} reaches ${occupancyText(now)}, down from ${occupancyText(then)} in the baseline.`,
      });
    }
  }
  return out;
}

function spillBytes(f: BaselineKernelFigures): number | null {
  if (f.spillStoreBytes === null && f.spillLoadBytes === null) return null;
  return (f.spillStoreBytes ?? 0) + (f.spillLoadBytes ?? 0);
}

function spillText(f: BaselineKernelFigures): string {
  const stores = f.spillStoreBytes ?? 0;
  const loads = f.spillLoadBytes ?? 0;
  return stores === 0 && loads === 0 ? 'no spills' : `${stores} bytes spill stores, ${loads} bytes spill loads`;
}

function occupancyText(o: BaselineLaunchOccupancy): string {
  const percent = `${Math.round(o.occupancy * 1000) / 10}%`;
  const blocks = `${o.activeBlocksPerMultiprocessor} block${o.activeBlocksPerMultiprocessor === 1 ? '' : 's'}`;
  const warps = o.activeWarps !== null ? `, ${o.activeWarps} warps` : '';
  const limit = o.limitingFactors.length ? `, limited by ${o.limitingFactors.map(factorName).join(' and ')}` : '';
  return `${percent} occupancy (${blocks}${warps} per SM${limit})`;
}

function limitedBy(o: BaselineLaunchOccupancy): string {
  return o.limitingFactors.length ? ` (${o.limitingFactors.map(factorName).join(' and ')})` : '';
}

const FACTOR_NAMES: Record<string, string> = {
  registers: 'registers',
  sharedMemory: 'shared memory',
  warps: 'warps',
  blocks: 'block slots',
  barriers: 'barriers',
  virtualResources: 'virtual resources',
};
const factorName = (f: string) => FACTOR_NAMES[f] ?? f;

function instanceName(k: BaselineKernel): string {
  return k.signature ?? k.qualifiedName;
}

function launchName(l: BaselineLaunch): string {
  const args = l.templateArgs ? `<${l.templateArgs.join(', ')}>` : '';
  return `The launch ${l.kernel}${args}<<<..., ${l.block}${l.dynamicSmem !== '0' ? `, ${l.dynamicSmem}` : ''}>>>`;
}

// ---------------------------------------------------------------------------
// Findings and exit status

/** The check object with each regression added to its file's diagnostics (with before, after and arch). */
export function withRegressions(check: CheckJson, regressions: readonly Regression[]): CheckJson {
  return {
    ...check,
    files: check.files.map((file) => {
      const mine = regressions.filter((r) => r.file === file.path);
      if (!mine.length) return file;
      const added = mine.map((r) => ({
        line: r.line,
        column: r.column,
        severity: r.severity,
        code: r.code,
        message: r.message,
        arch: r.arch,
        before: r.before,
        after: r.after,
      }));
      return {
        ...file,
        diagnostics: [...file.diagnostics, ...added].sort((a, b) => a.line - b.line || a.column - b.column),
      };
    }),
  };
}

/** Whether the regressions alone make `check --fail-on LEVEL` exit 1. */
export function regressionsFail(
  regressions: readonly Regression[],
  failOn: 'error' | 'warning' | 'never' | string,
): boolean {
  if (failOn === 'never') return false;
  if (failOn === 'warning') return regressions.length > 0;
  return regressions.some((r) => r.severity === 'error');
}

// ---------------------------------------------------------------------------
// Reading

/** Parse and validate a baseline file's text; throws BaselineError saying what is wrong. */
export function parseBaseline(text: string): Baseline {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new BaselineError(`not JSON (${(error as Error).message})`);
  }
  if (!isObject(data) || data.format !== BASELINE_FORMAT) {
    throw new BaselineError(
      `not a cuda-occupancy baseline (it has no "format": "${BASELINE_FORMAT}"); write one with \`cuda-occupancy baseline write FILE ...\``,
    );
  }
  if (data.version !== BASELINE_VERSION) {
    throw new BaselineError(
      typeof data.version === 'number' && data.version > BASELINE_VERSION
        ? `baseline version ${data.version} is newer than this cuda-occupancy reads (${BASELINE_VERSION}); update cuda-occupancy`
        : `unsupported baseline version ${JSON.stringify(data.version)} (expected ${BASELINE_VERSION})`,
    );
  }
  const v = new Validator();
  v.stringArray(data.archs, 'archs');
  v.array(data.kernels, 'kernels', (k, at) => {
    v.string(k.file, `${at}.file`);
    v.string(k.qualifiedName, `${at}.qualifiedName`);
    v.nullableString(k.signature, `${at}.signature`);
    v.nullableString(k.mangledName, `${at}.mangledName`);
    v.count(k.ordinal, `${at}.ordinal`);
    v.record(k.archs, `${at}.archs`, (f, fat) => {
      if (!v.object(f, fat)) return;
      for (const field of ['numRegs', 'spillStoreBytes', 'spillLoadBytes', 'sharedSizeBytes', 'stackFrameBytes'])
        v.nullableCount(f[field], `${fat}.${field}`);
      v.string(f.source, `${fat}.source`);
    });
  });
  v.array(data.launches, 'launches', (l, at) => {
    v.string(l.file, `${at}.file`);
    v.string(l.kernel, `${at}.kernel`);
    if (l.templateArgs !== null) v.stringArray(l.templateArgs, `${at}.templateArgs`);
    v.string(l.block, `${at}.block`);
    v.string(l.dynamicSmem, `${at}.dynamicSmem`);
    v.count(l.ordinal, `${at}.ordinal`);
    v.record(l.archs, `${at}.archs`, (o, oat) => {
      if (o === null || !v.object(o, oat)) return;
      if (typeof o.occupancy !== 'number' || !(o.occupancy >= 0 && o.occupancy <= 1))
        v.fail(`${oat}.occupancy must be a number from 0 to 1`);
      v.count(o.activeBlocksPerMultiprocessor, `${oat}.activeBlocksPerMultiprocessor`);
      v.nullableCount(o.activeWarps, `${oat}.activeWarps`);
      v.stringArray(o.limitingFactors, `${oat}.limitingFactors`);
    });
  });
  if (v.problem) throw new BaselineError(v.problem);
  return data as unknown as Baseline;
}

type Obj = Record<string, unknown>;
const isObject = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Records the first problem only: one clear line is what the CLI prints. */
class Validator {
  problem: string | null = null;
  fail(message: string): false {
    this.problem ??= message;
    return false;
  }
  object(x: unknown, at: string): x is Obj {
    return isObject(x) || this.fail(`${at} must be an object`);
  }
  string(x: unknown, at: string): void {
    if (typeof x !== 'string') this.fail(`${at} must be a string`);
  }
  nullableString(x: unknown, at: string): void {
    if (x !== null && typeof x !== 'string') this.fail(`${at} must be a string or null`);
  }
  count(x: unknown, at: string): void {
    if (!Number.isInteger(x) || (x as number) < 0) this.fail(`${at} must be a whole number >= 0`);
  }
  nullableCount(x: unknown, at: string): void {
    if (x !== null) this.count(x, at);
  }
  stringArray(x: unknown, at: string): void {
    if (!Array.isArray(x) || x.some((s) => typeof s !== 'string')) this.fail(`${at} must be an array of strings`);
  }
  array(x: unknown, at: string, each: (item: Obj, at: string) => void): void {
    if (!Array.isArray(x)) {
      this.fail(`${at} must be an array`);
      return;
    }
    x.forEach((item, i) => {
      if (this.problem) return;
      if (this.object(item, `${at}[${i}]`)) each(item, `${at}[${i}]`);
    });
  }
  record(x: unknown, at: string, each: (value: Obj | null, at: string) => void): void {
    if (!this.object(x, at)) return;
    for (const [key, value] of Object.entries(x)) {
      if (this.problem) return;
      each(value as Obj | null, `${at}.${key}`);
    }
  }
}
