/**
 * The one schema of our settings (section `cudaOccupancy`): defaults, types and
 * descriptions. package.json's `contributes.configuration` must list exactly
 * these keys with these defaults (a test checks it), and the server reads them
 * through `workspace/configuration`.
 */

interface SettingSpec<T> {
  default: T;
  type: 'boolean' | 'number' | 'string' | 'array';
  description: string;
  minimum?: number;
  maximum?: number;
  /** Settings that name programs or flags to run: ignored in an untrusted workspace. */
  runsCode?: boolean;
  /** Settings that name a file to read: ignored in an untrusted workspace when the workspace sets them. */
  readsFiles?: boolean;
  /**
   * The user's alone (package.json scope "machine"): a value the workspace or a folder sets is ignored,
   * whatever the trust (the allow-list of compilers, the limits that protect the machine).
   */
  userOnly?: boolean;
}

const spec = <T>(s: SettingSpec<T>) => s;

export const SETTINGS_SCHEMA = {
  architectures: spec<string[]>({
    default: [],
    type: 'array',
    description:
      "Target architectures (sm_80, sm_90, 9.0, ...). Empty: taken from compile_commands.json (-arch/-gencode) or CMake's CUDA_ARCHITECTURES, else sm_80 and sm_90.",
  }),
  'nvcc.enabled': spec<boolean>({
    default: true,
    type: 'boolean',
    description:
      'Run nvcc in the background when a file is opened and after each save to read register and shared-memory figures from ptxas.',
  }),
  'nvcc.path': spec<string>({
    default: '',
    type: 'string',
    description:
      'Path to nvcc. Empty: $CUDA_HOME/bin, /usr/local/cuda/bin, then PATH. Set in the workspace settings, it is used only when it matches `cudaOccupancy.nvcc.allowedCompilers`.',
    runsCode: true,
  }),
  'nvcc.args': spec<string[]>({
    default: [],
    type: 'array',
    description:
      'Extra nvcc arguments, one per item (e.g. -maxrregcount=64, --expt-relaxed-constexpr). Options that write files or run programs (-o, -keep, -keep-dir, --run, -odir, -MF, --options-file) are always dropped; from the workspace settings, -ccbin and host-compiler options are dropped unless the compiler matches `cudaOccupancy.nvcc.allowedCompilers`.',
    runsCode: true,
  }),
  'nvcc.allowedCompilers': spec<string[]>({
    default: [],
    type: 'array',
    description:
      'Absolute-path globs (`*`, `?`, `**`) of the compilers that compile_commands.json and workspace settings may name (`-ccbin`, `--compiler-bindir`, `cudaOccupancy.nvcc.path`), e.g. `/usr/bin/g++-*`. User settings only: a workspace cannot widen it. Empty: such options are dropped, with a log line each.',
    userOnly: true,
  }),
  'nvcc.memoryLimitMB': spec<number>({
    default: 4096,
    type: 'number',
    minimum: 256,
    maximum: 262144,
    description:
      'The address space each process of an nvcc run may use (nvcc, its front end, cicc, ptxas), in MB. User settings only.',
    userOnly: true,
  }),
  'nvcc.includePaths': spec<string[]>({
    default: [],
    type: 'array',
    description:
      'Include directories passed as -I, to nvcc and to the analysis of `#include` and `#if`, when the file has no compile_commands.json entry.',
    runsCode: true,
  }),
  'nvcc.defines': spec<string[]>({
    default: [],
    type: 'array',
    description:
      'Macros passed as -D (NAME or NAME=VALUE), to nvcc and to the analysis of `#if`, when the file has no compile_commands.json entry.',
    runsCode: true,
  }),
  'nvcc.std': spec<string>({
    default: '',
    type: 'string',
    description: "C++ standard for nvcc (-std=c++17). Empty: nvcc's default.",
    runsCode: true,
  }),
  'nvcc.timeoutSeconds': spec<number>({
    default: 60,
    type: 'number',
    minimum: 1,
    maximum: 600,
    description: 'Stop an nvcc run after this many seconds.',
  }),
  'nvcc.maxParallel': spec<number>({
    default: 2,
    type: 'number',
    minimum: 1,
    maximum: 16,
    description: 'At most this many nvcc runs at once.',
  }),
  compileCommandsDir: spec<string>({
    default: '',
    type: 'string',
    description: 'Directory holding compile_commands.json. Empty: the workspace root, then build/.',
    runsCode: true,
  }),
  ptxasLog: spec<string>({
    default: '',
    type: 'string',
    description:
      'A build log holding `nvcc -Xptxas -v` output to read figures from (e.g. build/ptxas.log). Ignored in an untrusted workspace when set in the workspace settings.',
    readsFiles: true,
  }),
  fromBuild: spec<string[]>({
    default: [],
    type: 'array',
    description:
      "Build folders to read register, shared-memory, spill and barrier figures from, without compiling (e.g. `build`): the objects, libraries and fatbins under them through the toolkit's `cuobjdump --dump-resource-usage`, and their `*.log` files for `-Xptxas -v` output. A kernel the folders' files give different figures for shows none. Ignored in an untrusted workspace when set in the workspace settings.",
    readsFiles: true,
  }),
  latencyCycles: spec<number>({
    default: 0,
    type: 'number',
    minimum: 0,
    maximum: 10000,
    description:
      'Global-memory latency in cycles for the latency-hiding estimate. 0: the per-architecture default from published microbenchmarks.',
  }),
  occupancyWarningBelow: spec<number>({
    default: 0,
    type: 'number',
    minimum: 0,
    maximum: 100,
    description: 'Report launches whose occupancy is below this percentage (a hint). 0: off.',
  }),
  'divergence.enabled': spec<boolean>({
    default: true,
    type: 'boolean',
    description: 'Find branches that diverge inside a warp on threadIdx.',
  }),
  'divergence.minCost': spec<number>({
    default: 4,
    type: 'number',
    minimum: 0,
    maximum: 100000,
    description:
      'Warn on a divergent branch only when a split warp spends at least this many issue slots with lanes idle (from the PTX when nvcc has compiled the file, else estimated from the syntax). Below the threshold it is a hint.',
  }),
  'divergence.minShare': spec<number>({
    default: 8,
    type: 'number',
    minimum: 0,
    maximum: 100,
    description:
      "Warn on a divergent branch only when the issue slots a split warp spends with lanes idle are at least this percentage of its kernel's (one pass, loops counted once). Below it the branch is a hint, and its hover still explains it.",
  }),
  'codeLens.enabled': spec<boolean>({
    default: true,
    type: 'boolean',
    description: 'Show occupancy code lenses over kernels and launches.',
  }),
  'codeLens.waves': spec<boolean>({
    default: false,
    type: 'boolean',
    description:
      "Add to each launch's code lens the waves its grid runs on the first named GPU (`1.25 waves on the A100 SXM4 40GB (last 25% full)`), where the source fixes the grid.",
  }),
  'pressure.enabled': spec<boolean>({
    default: true,
    type: 'boolean',
    description:
      'After a file compiles, compile it to PTX too (`nvcc -ptx -lineinfo`, first target architecture) and estimate the register pressure of each kernel line: in the hover, a lens on the peak line, and the heat map (CUDA Occupancy: Toggle Register Pressure Heat Map). An estimate: PTX values before ptxas allocates registers.',
  }),
  gpus: spec<string[]>({
    default: [],
    type: 'array',
    description:
      'Named GPUs to show waves, tail, cluster limits and the latency range on (`A100 SXM4 80GB`, `H100`, `RTX 4090`, ...). Empty: one common part per target architecture.',
  }),
  gridFindings: spec<boolean>({
    default: true,
    type: 'boolean',
    description:
      'Hint at grids the source fixes that leave SMs idle (`small-grid`) or run a mostly empty last wave (`tail-effect`).',
  }),
  'limits.fileMB': spec<number>({
    default: 64,
    type: 'number',
    minimum: 1,
    maximum: 1024,
    description:
      'The largest file read from disk (build log, compile_commands.json, headers of the workspace index), in MB; a larger one is skipped and reported. Only regular files are read. User settings only.',
    userOnly: true,
  }),
  'limits.documentMB': spec<number>({
    default: 4,
    type: 'number',
    minimum: 1,
    maximum: 256,
    description:
      'The analysis budget: documents larger than this (in MB) are not analysed, and get one information diagnostic instead (the CLI skips them with one line). The analysis takes about 4 s and 110 MB of memory per MB of CUDA source; real files are rarely over 0.5 MB. User settings only.',
    userOnly: true,
  }),
  'limits.lineLength': spec<number>({
    default: 100000,
    type: 'number',
    minimum: 1000,
    maximum: 10000000,
    description:
      'Documents with a line longer than this many characters (generated or minified code) are not analysed: they get one information diagnostic instead. User settings only.',
    userOnly: true,
  }),
};

export type SettingKey = keyof typeof SETTINGS_SCHEMA;
export type Settings = { [K in SettingKey]: (typeof SETTINGS_SCHEMA)[K]['default'] };

export const DEFAULT_SETTINGS: Settings = Object.fromEntries(
  Object.entries(SETTINGS_SCHEMA).map(([key, s]) => [key, s.default]),
) as Settings;

/**
 * Where a client says which settings the workspace sets: in its `workspace/configuration` answer for
 * `cudaOccupancy`, the keys (without the section) whose value comes from workspace or folder settings.
 * VS Code's client sends it (client/src/settings-origins.ts); other clients send nothing, and their
 * values count as the user's (docs/security.md says what their configurations must then keep out).
 */
export const WORKSPACE_KEYS_FIELD = '$workspaceKeys';

export interface ReadSettings {
  settings: Settings;
  problems: string[];
  /** Keys whose value comes from the workspace, or null when the client did not say. */
  fromWorkspace: ReadonlySet<SettingKey> | null;
}

/**
 * Settings from a client's `workspace/configuration` answer (nested objects or
 * dotted keys), each checked against the schema: a wrong type falls back to the
 * default and is reported, never thrown. A user-only setting the workspace sets
 * falls back to the default too (reported).
 */
export function readSettings(raw: unknown): ReadSettings {
  const problems: string[] = [];
  const settings: Record<string, unknown> = { ...DEFAULT_SETTINGS };
  const flat = flatten(raw);
  for (const [key, s] of Object.entries(SETTINGS_SCHEMA) as Array<[SettingKey, SettingSpec<unknown>]>) {
    if (!(key in flat) || flat[key] === null || flat[key] === undefined) continue;
    const value = flat[key];
    if (isOfType(value, s)) settings[key] = s.type === 'number' ? clamp(value as number, s) : value;
    else
      problems.push(
        `cudaOccupancy.${key}: expected ${s.type}${s.type === 'array' ? ' of strings' : ''}, got ${JSON.stringify(value)}; using ${JSON.stringify(s.default)}`,
      );
  }
  const fromWorkspace = workspaceKeys(raw);
  for (const key of fromWorkspace ?? []) {
    if (!(SETTINGS_SCHEMA[key] as SettingSpec<unknown>).userOnly) continue;
    settings[key] = SETTINGS_SCHEMA[key].default;
    problems.push(`cudaOccupancy.${key} is set in the workspace settings: ignored (user settings only)`);
  }
  return { settings: settings as Settings, problems, fromWorkspace };
}

/**
 * Settings as an untrusted workspace may have them: files the workspace names (a build log) are not read.
 * Keys whose origin the client did not tell count as the workspace's. Pure.
 */
export function withoutUntrustedFiles(read: ReadSettings): { settings: Settings; problems: string[] } {
  const settings: Record<string, unknown> = { ...read.settings };
  const problems: string[] = [];
  for (const key of Object.keys(SETTINGS_SCHEMA) as SettingKey[]) {
    if (!(SETTINGS_SCHEMA[key] as SettingSpec<unknown>).readsFiles) continue;
    if (JSON.stringify(settings[key]) === JSON.stringify(SETTINGS_SCHEMA[key].default)) continue;
    if (read.fromWorkspace && !read.fromWorkspace.has(key)) continue;
    settings[key] = SETTINGS_SCHEMA[key].default;
    problems.push(`cudaOccupancy.${key} is ignored in an untrusted workspace`);
  }
  return { settings: settings as Settings, problems };
}

function workspaceKeys(raw: unknown): Set<SettingKey> | null {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const listed = (raw as Record<string, unknown>)[WORKSPACE_KEYS_FIELD];
  if (!Array.isArray(listed)) return null;
  return new Set(listed.filter((k): k is SettingKey => typeof k === 'string' && k in SETTINGS_SCHEMA));
}

/** Keys the user alone may set (package.json scope "machine"). */
export function userOnlyKeys(): SettingKey[] {
  return (Object.keys(SETTINGS_SCHEMA) as SettingKey[]).filter(
    (k) => (SETTINGS_SCHEMA[k] as SettingSpec<unknown>).userOnly,
  );
}

/** Settings that may not come from an untrusted workspace's own files. */
export function trustedOnlyKeys(): SettingKey[] {
  return (Object.keys(SETTINGS_SCHEMA) as SettingKey[]).filter(
    (k) => (SETTINGS_SCHEMA[k] as SettingSpec<unknown>).runsCode,
  );
}

function isOfType(value: unknown, s: SettingSpec<unknown>): boolean {
  switch (s.type) {
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'string':
      return typeof value === 'string';
    case 'array':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
  }
}

function clamp(value: number, s: SettingSpec<unknown>): number {
  return Math.min(s.maximum ?? Infinity, Math.max(s.minimum ?? -Infinity, value));
}

function flatten(raw: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && !(key in SETTINGS_SCHEMA)) flatten(v, key, out);
    else out[key] = v;
  }
  return out;
}

/** `contributes.configuration.properties` as package.json must hold it. */
export function packageJsonProperties(): Record<string, object> {
  return Object.fromEntries(
    Object.entries(SETTINGS_SCHEMA).map(([key, s]) => {
      const spec = s as SettingSpec<unknown>;
      const entry: Record<string, unknown> = {
        type: spec.type,
        default: spec.default,
        markdownDescription: spec.description,
      };
      if (spec.type === 'array') entry.items = { type: 'string' };
      if (spec.minimum !== undefined) entry.minimum = spec.minimum;
      if (spec.maximum !== undefined) entry.maximum = spec.maximum;
      if (spec.runsCode) entry.scope = 'machine-overridable';
      if (spec.userOnly) entry.scope = 'machine';
      return [`cudaOccupancy.${key}`, entry];
    }),
  );
}
