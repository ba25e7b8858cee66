/**
 * Parser for the resource report of `nvcc -Xptxas -v` (or `--resource-usage`) and for build logs
 * that contain it. Pure: text in, plain data out.
 *
 * Lines may carry any prefix before `ptxas info    :` (MSBuild's `1>  `, ninja's progress, timestamps),
 * may use CRLF, and may be interleaved with unrelated compiler output. Every number is checked; a line
 * whose numbers do not validate is counted in `ignoredLines` and changes nothing.
 */

/** Figures ptxas reports for one function compiled for one architecture. */
export interface PtxasFunctionFigures {
  /** The symbol as ptxas prints it: mangled, or plain for `extern "C"`. */
  readonly mangledName: string;
  /** `sm_90`, `sm_90a`...; null when the output never named one and no default was given. */
  readonly arch: string | null;
  /** True for a `__global__` entry function, false for a device function ptxas reported. */
  readonly isEntry: boolean;
  /** Registers per thread; null when ptxas printed no `Used N registers` line (device functions). */
  readonly numRegs: number | null;
  /** Named barriers used; null when the line did not say (older ptxas). */
  readonly barriers: number | null;
  /** Static shared memory, in bytes. */
  readonly sharedSizeBytes: number;
  /** `cmem[0]`, the constant bank that holds kernel parameters, in bytes (0 when not printed). */
  readonly constBytes: number;
  /** Every constant bank printed, by bank number. */
  readonly constBanks: Readonly<Record<string, number>>;
  readonly stackFrameBytes: number;
  readonly spillStoreBytes: number;
  readonly spillLoadBytes: number;
  /** `N bytes cumulative stack size` (stack of the kernel plus what it calls); null when not printed. */
  readonly cumulativeStackBytes: number | null;
  /** `N bytes lmem` of old ptxas versions (0 when not printed). */
  readonly localBytes: number;
  readonly textures: number;
  readonly samplers: number;
  readonly surfaces: number;
  /** Fields of the `Used ...` line this parser does not know, kept verbatim. */
  readonly unknownFields: readonly string[];
  /** 1-based line of the `Compiling entry function` (or `Function properties`) line. */
  readonly line: number;
}

/** Module-wide figures: the `N bytes gmem, M bytes cmem[4]` line printed once per architecture. */
export interface PtxasModuleFigures {
  readonly arch: string | null;
  readonly gmemBytes: number;
  readonly constBanks: Readonly<Record<string, number>>;
  readonly line: number;
}

export type PtxasDiagnosticKind =
  /** `Registers are spilled to local memory in function '...'` (with `-warn-spills`). */
  | 'spill'
  /** `Local memory used for function '...', size of stack frame: N bytes` (with `-warn-lmem-usage`). */
  | 'local-memory'
  /** `Value of threads per SM for entry ... is out of range. .minnctapersm will be ignored` */
  | 'launch-bounds-ignored'
  /** `adjusting per thread register count of 16 to lower bound of 24`, `Overriding global maxrregcount ...` */
  | 'register-limit-adjusted'
  /** `Too big maxrregcount value specified 300, will be ignored` */
  | 'register-limit-ignored'
  /** `Entry function '...' uses too much shared data (0x13880 bytes, 0xc000 max)` */
  | 'too-much-shared'
  /** `uses too much local data`, `uses too much parameter space`... */
  | 'too-much-resource'
  /** Any other ptxas warning or error. */
  | 'other';

export interface PtxasDiagnostic {
  readonly severity: 'info' | 'warning' | 'error';
  readonly kind: PtxasDiagnosticKind;
  /** The text after `ptxas warning :`, with any PTX file position removed. */
  readonly message: string;
  /** The function the message names, if it names one. */
  readonly mangledName: string | null;
  readonly arch: string | null;
  /** 1-based line of the first occurrence. */
  readonly line: number;
  /** How many identical messages were folded into this one. */
  readonly count: number;
  /** Byte figures the message carries: spills, stack frame, or requested/limit for `too much`. */
  readonly bytes?: {
    readonly spillStores?: number;
    readonly spillLoads?: number;
    readonly stackFrame?: number;
    readonly requested?: number;
    readonly limit?: number;
  };
}

export interface PtxasOutput {
  /** One per entry function and architecture; a later report for the same pair replaces the earlier. */
  readonly entries: readonly PtxasFunctionFigures[];
  /** Device (non-entry) functions ptxas reported, same keying. */
  readonly functions: readonly PtxasFunctionFigures[];
  readonly modules: readonly PtxasModuleFigures[];
  readonly diagnostics: readonly PtxasDiagnostic[];
  /** Architectures in order of first appearance. */
  readonly archs: readonly string[];
  /** ptxas lines that looked like resource lines but did not validate, or came without context. */
  readonly ignoredLines: number;
  /** True when any ptxas line was seen at all. */
  readonly sawPtxasOutput: boolean;
}

export interface ParsePtxasOptions {
  /** The architecture to assume when the output names none (a single-arch compile of old ptxas). */
  readonly defaultArch?: string;
}

const MAX_LINES = 2_000_000;
const MAX_LINE_LENGTH = 10_000;

const PTXAS_LINE = /ptxas(?:\s+[^\s:,]+,\s*line\s+\d+;)?\s+(info|warning|error|fatal)\s*:\s?(.*)$/;
const COMPILING = /^Compiling (entry function|function) '([^']+)' for '([A-Za-z0-9_]+)'\s*$/;
const PROPERTIES = /^Function properties for (\S+)\s*$/;
const STACK_LINE = /(?:^|\s)(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads\s*$/;
const ARCH_NAME = /^sm_\d+[a-z]?$/;

interface MutableFigures {
  mangledName: string;
  arch: string | null;
  isEntry: boolean;
  numRegs: number | null;
  barriers: number | null;
  sharedSizeBytes: number;
  constBytes: number;
  constBanks: Record<string, number>;
  stackFrameBytes: number;
  spillStoreBytes: number;
  spillLoadBytes: number;
  cumulativeStackBytes: number | null;
  localBytes: number;
  textures: number;
  samplers: number;
  surfaces: number;
  unknownFields: string[];
  line: number;
}

interface PendingDiagnostic {
  severity: PtxasDiagnostic['severity'];
  kind: PtxasDiagnosticKind;
  message: string;
  mangledName: string | null;
  arch: string | null;
  line: number;
  count: number;
  bytes?: PtxasDiagnostic['bytes'];
}

/** Parses ptxas verbose output or a whole build log. Never throws; unknown lines are skipped. */
export function parsePtxasOutput(text: string, options: ParsePtxasOptions = {}): PtxasOutput {
  const defaultArch = options.defaultArch && ARCH_NAME.test(options.defaultArch) ? options.defaultArch : null;
  const lines = typeof text === 'string' ? text.split(/\r\n|\r|\n/, MAX_LINES) : [];
  const entries = new Map<string, MutableFigures>();
  const functions = new Map<string, MutableFigures>();
  const modules: Array<PtxasModuleFigures & { arch: string | null }> = [];
  const diagnostics: PendingDiagnostic[] = [];
  const archs: string[] = [];
  /** Entry compilations in order, to give warnings printed before a block the arch of that block. */
  const compileOrder: Array<{ line: number; name: string; arch: string }> = [];
  let ignoredLines = 0;
  let sawPtxasOutput = false;

  let currentArch: string | null = defaultArch;
  let current: MutableFigures | null = null; // the function a `Used` line belongs to
  let propertiesFor: MutableFigures | null = null; // the function a stack-frame line belongs to

  const noteArch = (arch: string): void => {
    if (!archs.includes(arch)) archs.push(arch);
  };

  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index];
    const lineNo = index + 1;
    if (raw.length === 0 || raw.length > MAX_LINE_LENGTH) continue;

    const stack = STACK_LINE.exec(raw);
    if (stack && !raw.includes('ptxas')) {
      const figures = [stack[1], stack[2], stack[3]].map(toCount);
      if (!propertiesFor || figures.some((n) => n === null)) {
        ignoredLines++;
        continue;
      }
      propertiesFor.stackFrameBytes = figures[0]!;
      propertiesFor.spillStoreBytes = figures[1]!;
      propertiesFor.spillLoadBytes = figures[2]!;
      propertiesFor = null;
      continue;
    }

    const match = PTXAS_LINE.exec(raw);
    if (!match) continue;
    sawPtxasOutput = true;
    const severity = match[1] === 'fatal' ? 'error' : (match[1] as 'info' | 'warning' | 'error');
    const body = match[2].trim();

    if (severity !== 'info') {
      propertiesFor = null;
      addDiagnostic(diagnostics, classifyDiagnostic(severity, body, lineNo, currentArch));
      continue;
    }

    const compiling = COMPILING.exec(body);
    if (compiling) {
      const arch = compiling[3];
      if (!ARCH_NAME.test(arch)) {
        ignoredLines++;
        current = null;
        continue;
      }
      currentArch = arch;
      noteArch(arch);
      const isEntry = compiling[1] === 'entry function';
      current = newFigures(compiling[2], arch, isEntry, lineNo);
      (isEntry ? entries : functions).set(key(compiling[2], arch), current);
      if (isEntry) compileOrder.push({ line: lineNo, name: compiling[2], arch });
      // Module lines printed before the first entry of this arch belong to it.
      for (const module of modules) if (module.arch === null && module.line < lineNo) module.arch = arch;
      propertiesFor = null;
      continue;
    }

    const properties = PROPERTIES.exec(body);
    if (properties) {
      const name = properties[1];
      if (current && current.mangledName === name) {
        propertiesFor = current;
      } else {
        const figures: MutableFigures =
          functions.get(key(name, currentArch)) ?? newFigures(name, currentArch, false, lineNo);
        functions.set(key(name, currentArch), figures);
        propertiesFor = figures;
        current = figures;
      }
      continue;
    }

    if (/^Used\s/.test(body)) {
      if (!current || !applyUsedLine(current, body)) ignoredLines++;
      continue;
    }

    if (/^\d+ bytes gmem\b/.test(body)) {
      const module = parseModuleLine(body, lineNo);
      if (module) {
        // In a multi-arch run the module line opens the next arch's block, whose name comes later.
        modules.push({ ...module, arch: null });
        current = null;
      } else {
        ignoredLines++;
      }
      continue;
    }

    if (/^Overriding global maxrregcount/.test(body)) {
      addDiagnostic(diagnostics, classifyDiagnostic('info', body, lineNo, currentArch));
      continue;
    }
    // `Compile time = ...` and anything newer: nothing to take.
  }

  for (const module of modules) if (module.arch === null) module.arch = defaultArch;
  for (const diagnostic of diagnostics) diagnostic.arch = diagnosticArch(diagnostic, compileOrder, defaultArch);

  return {
    entries: [...entries.values()].map(freeze),
    functions: [...functions.values()].map(freeze),
    modules: modules.map((m) => ({ ...m })),
    diagnostics: diagnostics.map((d) => ({ ...d })),
    archs,
    ignoredLines,
    sawPtxasOutput,
  };
}

/** The entry figures for one architecture, keyed by mangled name. */
export function entriesForArch(output: PtxasOutput, arch: string): Map<string, PtxasFunctionFigures> {
  const byName = new Map<string, PtxasFunctionFigures>();
  for (const entry of output.entries) if (entry.arch === arch) byName.set(entry.mangledName, entry);
  return byName;
}

function key(name: string, arch: string | null): string {
  return `${arch ?? ''}\u0000${name}`;
}

/** A function's figures before any line about it is read: what ptxas prints nothing for is 0 or unknown. */
export function newFigures(mangledName: string, arch: string | null, isEntry: boolean, line: number): MutableFigures {
  return {
    mangledName,
    arch,
    isEntry,
    numRegs: null,
    barriers: null,
    sharedSizeBytes: 0,
    constBytes: 0,
    constBanks: {},
    stackFrameBytes: 0,
    spillStoreBytes: 0,
    spillLoadBytes: 0,
    cumulativeStackBytes: null,
    localBytes: 0,
    textures: 0,
    samplers: 0,
    surfaces: 0,
    unknownFields: [],
    line,
  };
}

function freeze(figures: MutableFigures): PtxasFunctionFigures {
  return { ...figures, constBanks: { ...figures.constBanks }, unknownFields: [...figures.unknownFields] };
}

/** A non-negative safe integer from decimal digits, else null. */
function toCount(digits: string | undefined): number | null {
  if (digits === undefined || !/^\d{1,15}$/.test(digits)) return null;
  const value = Number(digits);
  return Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** `a` or `a+b` (old ptxas splits user and system shared memory). */
function toSum(text: string): number | null {
  const parts = text.split('+').map(toCount);
  if (parts.some((p) => p === null)) return null;
  const sum = (parts as number[]).reduce((a, b) => a + b, 0);
  return Number.isSafeInteger(sum) ? sum : null;
}

/**
 * `Used 40 registers, used 1 barriers, 4096 bytes smem, 400 bytes cmem[0], 1 textures, ...`.
 * Returns false (and changes nothing) when a known field does not validate.
 */
function applyUsedLine(target: MutableFigures, body: string): boolean {
  const update: Partial<MutableFigures> = {};
  const banks: Record<string, number> = { ...target.constBanks };
  const unknown: string[] = [];
  for (const field of body
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)) {
    let m: RegExpExecArray | null;
    if ((m = /^Used (\S+) registers?$/.exec(field))) {
      const n = toCount(m[1]);
      if (n === null || n > 65536) return false;
      update.numRegs = n;
    } else if ((m = /^used (\S+) barriers?$/.exec(field))) {
      const n = toCount(m[1]);
      if (n === null) return false;
      update.barriers = n;
    } else if ((m = /^(\S+) bytes smem$/.exec(field))) {
      const n = toSum(m[1]);
      if (n === null) return false;
      update.sharedSizeBytes = n;
    } else if ((m = /^(\S+) bytes cmem\[(\d+)\]$/.exec(field))) {
      const n = toCount(m[1]);
      if (n === null) return false;
      banks[m[2]] = n;
      if (m[2] === '0') update.constBytes = n;
    } else if ((m = /^(\S+) bytes lmem$/.exec(field))) {
      const n = toSum(m[1]);
      if (n === null) return false;
      update.localBytes = n;
    } else if ((m = /^(\S+) bytes cumulative stack size$/.exec(field))) {
      const n = toCount(m[1]);
      if (n === null) return false;
      update.cumulativeStackBytes = n;
    } else if ((m = /^(\S+) (textures|samplers|surfaces)$/.exec(field))) {
      const n = toCount(m[1]);
      if (n === null) return false;
      update[m[2] as 'textures' | 'samplers' | 'surfaces'] = n;
    } else {
      unknown.push(field);
    }
  }
  if (update.numRegs === undefined) return false;
  Object.assign(target, update);
  target.constBanks = banks;
  target.unknownFields = unknown;
  return true;
}

function parseModuleLine(body: string, line: number): Omit<PtxasModuleFigures, 'arch'> | null {
  let gmemBytes: number | null = null;
  const constBanks: Record<string, number> = {};
  for (const field of body
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean)) {
    let m: RegExpExecArray | null;
    if ((m = /^(\S+) bytes gmem$/.exec(field))) gmemBytes = toCount(m[1]);
    else if ((m = /^(\S+) bytes cmem\[(\d+)\]$/.exec(field))) {
      const n = toCount(m[1]);
      if (n === null) return null;
      constBanks[m[2]] = n;
    }
  }
  return gmemBytes === null ? null : { gmemBytes, constBanks, line };
}

function addDiagnostic(list: PendingDiagnostic[], diagnostic: PendingDiagnostic): void {
  const same = list.find(
    (d) => d.severity === diagnostic.severity && d.message === diagnostic.message && d.arch === diagnostic.arch,
  );
  if (same) same.count++;
  else list.push(diagnostic);
}

function classifyDiagnostic(
  severity: PtxasDiagnostic['severity'],
  body: string,
  line: number,
  arch: string | null,
): PendingDiagnostic {
  const base = { severity, message: body, line, count: 1, arch };
  let m: RegExpExecArray | null;
  if (
    (m =
      /^Registers are spilled to local memory in function '([^']+)', (\d+) bytes spill stores, (\d+) bytes spill loads/.exec(
        body,
      ))
  ) {
    const spillStores = toCount(m[2]);
    const spillLoads = toCount(m[3]);
    return { ...base, kind: 'spill', mangledName: m[1], bytes: validBytes({ spillStores, spillLoads }) };
  }
  if ((m = /^Local memory used for function '([^']+)', size of stack frame: (\d+) bytes/.exec(body))) {
    return { ...base, kind: 'local-memory', mangledName: m[1], bytes: validBytes({ stackFrame: toCount(m[2]) }) };
  }
  if ((m = /^Value of threads per (?:SM|block) for entry (\S+) is out of range/.exec(body))) {
    return { ...base, kind: 'launch-bounds-ignored', mangledName: m[1] };
  }
  if (/adjusting per thread register count|^Overriding global maxrregcount/.test(body)) {
    const profile = /For profile (sm_\d+[a-z]?)/.exec(body);
    return { ...base, kind: 'register-limit-adjusted', mangledName: null, arch: profile ? profile[1] : arch };
  }
  if (/maxrregcount value .* will be ignored|Too big maxrregcount/.test(body)) {
    return { ...base, kind: 'register-limit-ignored', mangledName: null };
  }
  if (
    (m =
      /^Entry function '([^']+)' uses too much shared data \((0x[0-9a-fA-F]+|\d+) bytes, (0x[0-9a-fA-F]+|\d+) max\)/.exec(
        body,
      ))
  ) {
    return {
      ...base,
      kind: 'too-much-shared',
      mangledName: m[1],
      bytes: validBytes({ requested: parseHexOrDecimal(m[2]), limit: parseHexOrDecimal(m[3]) }),
    };
  }
  if ((m = /^Entry function '([^']+)' uses too much (\w[\w ]*?) (?:data|space)\b/.exec(body))) {
    return { ...base, kind: 'too-much-resource', mangledName: m[1] };
  }
  const named = /'([A-Za-z_$][\w$.]*)'/.exec(body) ?? /\bentry (?:function )?([A-Za-z_$][\w$]*)/.exec(body);
  return { ...base, kind: 'other', mangledName: named ? named[1] : null };
}

function parseHexOrDecimal(text: string): number | null {
  const value = /^0x/i.test(text) ? parseInt(text.slice(2), 16) : toCount(text);
  return value !== null && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

function validBytes(bytes: Record<string, number | null>): PtxasDiagnostic['bytes'] {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(bytes)) if (value !== null) out[name] = value;
  return out;
}

/**
 * ptxas prints its warnings for a compilation before that compilation's info block, so a warning that
 * names a function takes the arch of that function's next block, else of its last one, else the arch
 * that was current when it was printed.
 */
function diagnosticArch(
  diagnostic: PendingDiagnostic,
  order: ReadonlyArray<{ line: number; name: string; arch: string }>,
  fallback: string | null,
): string | null {
  if (diagnostic.kind === 'register-limit-adjusted' && diagnostic.arch && /For profile/.test(diagnostic.message))
    return diagnostic.arch;
  const named = diagnostic.mangledName;
  if (named) {
    const next = order.find((c) => c.name === named && c.line > diagnostic.line);
    if (next) return next.arch;
    const previous = [...order].reverse().find((c) => c.name === named && c.line < diagnostic.line);
    if (previous) return previous.arch;
  }
  if (diagnostic.arch) return diagnostic.arch;
  const following = order.find((c) => c.line > diagnostic.line);
  return following ? following.arch : fallback;
}
