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
}

const spec = <T>(s: SettingSpec<T>) => s;

export const SETTINGS_SCHEMA = {
  architectures: spec<string[]>({
    default: [],
    type: 'array',
    description: 'Target architectures (sm_80, sm_90, 9.0, ...). Empty: taken from compile_commands.json (-arch/-gencode) or CMake\'s CUDA_ARCHITECTURES, else sm_80 and sm_90.',
  }),
  'nvcc.enabled': spec<boolean>({ default: true, type: 'boolean', description: 'Run nvcc in the background after each save to read register and shared-memory figures from ptxas.' }),
  'nvcc.path': spec<string>({ default: '', type: 'string', description: 'Path to nvcc. Empty: $CUDA_HOME/bin, /usr/local/cuda/bin, then PATH.', runsCode: true }),
  'nvcc.args': spec<string[]>({ default: [], type: 'array', description: 'Extra nvcc arguments, one per item (e.g. -maxrregcount=64, --expt-relaxed-constexpr).', runsCode: true }),
  'nvcc.includePaths': spec<string[]>({ default: [], type: 'array', description: 'Include directories passed as -I when the file has no compile_commands.json entry.', runsCode: true }),
  'nvcc.defines': spec<string[]>({ default: [], type: 'array', description: 'Macros passed as -D (NAME or NAME=VALUE) when the file has no compile_commands.json entry.', runsCode: true }),
  'nvcc.std': spec<string>({ default: '', type: 'string', description: 'C++ standard for nvcc (-std=c++17). Empty: nvcc\'s default.', runsCode: true }),
  'nvcc.timeoutSeconds': spec<number>({ default: 60, type: 'number', minimum: 1, maximum: 600, description: 'Stop an nvcc run after this many seconds.' }),
  'nvcc.maxParallel': spec<number>({ default: 2, type: 'number', minimum: 1, maximum: 16, description: 'At most this many nvcc runs at once.' }),
  compileCommandsDir: spec<string>({ default: '', type: 'string', description: 'Directory holding compile_commands.json. Empty: the workspace root, then build/.', runsCode: true }),
  ptxasLog: spec<string>({ default: '', type: 'string', description: 'A build log holding `nvcc -Xptxas -v` output to read figures from (e.g. build/ptxas.log).' }),
  latencyCycles: spec<number>({ default: 0, type: 'number', minimum: 0, maximum: 10000, description: 'Global-memory latency in cycles for the latency-hiding estimate. 0: the per-architecture default from published microbenchmarks.' }),
  occupancyWarningBelow: spec<number>({ default: 0, type: 'number', minimum: 0, maximum: 100, description: 'Report launches whose occupancy is below this percentage (a hint). 0: off.' }),
  'divergence.enabled': spec<boolean>({ default: true, type: 'boolean', description: 'Find branches that diverge inside a warp on threadIdx.' }),
  'divergence.minCost': spec<number>({ default: 4, type: 'number', minimum: 0, maximum: 100000, description: 'Warn on a divergent branch only when a split warp spends at least this many issue slots with lanes idle (from the PTX when nvcc has compiled the file, else estimated from the syntax). Below the threshold it is a hint.' }),
  'divergence.minShare': spec<number>({ default: 8, type: 'number', minimum: 0, maximum: 100, description: 'Warn on a divergent branch only when the issue slots a split warp spends with lanes idle are at least this percentage of its kernel\'s (one pass, loops counted once). Below it the branch is a hint, and its hover still explains it.' }),
  'codeLens.enabled': spec<boolean>({ default: true, type: 'boolean', description: 'Show occupancy code lenses over kernels and launches.' }),
};

export type SettingKey = keyof typeof SETTINGS_SCHEMA;
export type Settings = { [K in SettingKey]: (typeof SETTINGS_SCHEMA)[K]['default'] };

export const DEFAULT_SETTINGS: Settings = Object.fromEntries(
  Object.entries(SETTINGS_SCHEMA).map(([key, s]) => [key, s.default]),
) as Settings;

/**
 * Settings from a client's `workspace/configuration` answer (nested objects or
 * dotted keys), each checked against the schema: a wrong type falls back to the
 * default and is reported, never thrown.
 */
export function readSettings(raw: unknown): { settings: Settings; problems: string[] } {
  const problems: string[] = [];
  const settings: Record<string, unknown> = { ...DEFAULT_SETTINGS };
  const flat = flatten(raw);
  for (const [key, s] of Object.entries(SETTINGS_SCHEMA) as Array<[SettingKey, SettingSpec<unknown>]>) {
    if (!(key in flat) || flat[key] === null || flat[key] === undefined) continue;
    const value = flat[key];
    if (isOfType(value, s)) settings[key] = s.type === 'number' ? clamp(value as number, s) : value;
    else problems.push(`cudaOccupancy.${key}: expected ${s.type}${s.type === 'array' ? ' of strings' : ''}, got ${JSON.stringify(value)}; using ${JSON.stringify(s.default)}`);
  }
  return { settings: settings as Settings, problems };
}

/** Settings that may not come from an untrusted workspace's own files. */
export function trustedOnlyKeys(): SettingKey[] {
  return (Object.keys(SETTINGS_SCHEMA) as SettingKey[]).filter((k) => (SETTINGS_SCHEMA[k] as SettingSpec<unknown>).runsCode);
}

function isOfType(value: unknown, s: SettingSpec<unknown>): boolean {
  switch (s.type) {
    case 'boolean': return typeof value === 'boolean';
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'string': return typeof value === 'string';
    case 'array': return Array.isArray(value) && value.every((v) => typeof v === 'string');
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
      const entry: Record<string, unknown> = { type: spec.type, default: spec.default, markdownDescription: spec.description };
      if (spec.type === 'array') entry.items = { type: 'string' };
      if (spec.minimum !== undefined) entry.minimum = spec.minimum;
      if (spec.maximum !== undefined) entry.maximum = spec.maximum;
      if (spec.runsCode) entry.scope = 'machine-overridable';
      return [`cudaOccupancy.${key}`, entry];
    }),
  );
}
