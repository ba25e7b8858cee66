/**
 * What a cache entry read back from disk must be before its figures are shown: every field of the right type,
 * every count an integer in the range the hardware and ptxas allow (a planted `numRegs: -1`, `255` with
 * megabytes of spills, or `1e308` bytes of shared memory is refused), and a time of production that is not in
 * the future. Pure.
 */
import type { ArchFigures } from './compile-resources';
import type { PtxText } from './compile-ptx';

const ARCH = /^sm_\d+[a-z]?$/;
const MAX_TEXT = 64 * 1024;
const MAX_ITEMS = 100_000;
/** Up to a day ahead of this clock: another machine's clock may run a little fast, not decades. */
const FUTURE_SLACK_MS = 24 * 3600 * 1000;

type Check = (v: unknown) => boolean;

const integer =
  (min: number, max: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const nullable =
  (check: Check): Check =>
  (v) =>
    v === null || check(v);
const text =
  (max = MAX_TEXT): Check =>
  (v) =>
    typeof v === 'string' && v.length <= max;
const oneOf =
  (...values: string[]): Check =>
  (v) =>
    typeof v === 'string' && values.includes(v);
const arch: Check = (v) => typeof v === 'string' && ARCH.test(v);
const list =
  (check: Check): Check =>
  (v) =>
    Array.isArray(v) && v.length <= MAX_ITEMS && v.every(check);
const record =
  (check: Check): Check =>
  (v) =>
    v !== null &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    Object.keys(v).length <= 64 &&
    Object.values(v).every(check);

function shape(fields: Record<string, Check>, optional: Record<string, Check> = {}): Check {
  return (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
    const o = v as Record<string, unknown>;
    for (const [key, check] of Object.entries(fields)) if (!check(o[key])) return false;
    for (const [key, check] of Object.entries(optional)) if (o[key] !== undefined && !check(o[key])) return false;
    return true;
  };
}

const BYTES_16M = integer(0, 16 * 1024 * 1024);
const LINE = integer(1, 2 ** 31);

/** ptxas's figures for one function: registers ≤ 255, shared memory ≤ 1 MiB, spills and stacks ≤ 16 MiB. */
const functionFigures = shape({
  mangledName: text(),
  arch: nullable(arch),
  isEntry: (v) => typeof v === 'boolean',
  numRegs: nullable(integer(0, 255)),
  barriers: nullable(integer(0, 16)),
  sharedSizeBytes: integer(0, 1024 * 1024),
  constBytes: integer(0, 1024 * 1024),
  constBanks: record(integer(0, 1024 * 1024)),
  stackFrameBytes: BYTES_16M,
  spillStoreBytes: BYTES_16M,
  spillLoadBytes: BYTES_16M,
  cumulativeStackBytes: nullable(BYTES_16M),
  localBytes: BYTES_16M,
  textures: integer(0, 1_000_000),
  samplers: integer(0, 1_000_000),
  surfaces: integer(0, 1_000_000),
  unknownFields: list(text(1024)),
  line: LINE,
});

const moduleFigures = shape({
  arch: nullable(arch),
  gmemBytes: integer(0, 2 ** 40),
  constBanks: record(integer(0, 1024 * 1024)),
  line: LINE,
});

const diagnostic = shape(
  {
    severity: oneOf('info', 'warning', 'error'),
    kind: oneOf(
      'spill',
      'local-memory',
      'launch-bounds-ignored',
      'register-limit-adjusted',
      'register-limit-ignored',
      'too-much-shared',
      'too-much-resource',
      'other',
    ),
    message: text(),
    mangledName: nullable(text()),
    arch: nullable(arch),
    line: LINE,
    count: integer(1, 2 ** 31),
  },
  { bytes: record(integer(0, 2 ** 40)) },
);

function producedAtOk(v: unknown, now: number): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= now + FUTURE_SLACK_MS;
}

/** A cached figures entry is well-formed and its numbers plausible. */
export function isValidArchFigures(value: unknown, now = Date.now()): value is ArchFigures {
  if (
    !shape({
      arch,
      entries: list(functionFigures),
      functions: list(functionFigures),
      modules: list(moduleFigures),
      diagnostics: list(diagnostic),
      nvccVersion: text(200),
    })(value)
  )
    return false;
  const v = value as ArchFigures;
  return producedAtOk(v.producedAt, now) && v.entries.every((e) => e.arch === null || e.arch === v.arch);
}

/** A cached PTX entry is well-formed (the caller checks that the text is PTX). */
export function isValidPtxEntry(value: unknown, now = Date.now()): value is PtxText {
  return (
    shape({ arch, text: (v) => typeof v === 'string', nvccVersion: text(200) })(value) &&
    producedAtOk((value as PtxText).producedAt, now)
  );
}
