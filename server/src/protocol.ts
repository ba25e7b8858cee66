/**
 * What the server and the client share, and the only server module the client imports: custom
 * commands, requests and notifications (as vscode-eslint's customMessages.ts and rust-analyzer's
 * lsp_ext.ts), the chart data they carry, and the few display conventions the chart shares with
 * hovers (names of the limits, bytes and percentages written the same way).
 */
export type {
  ChartData,
  ChartPoint,
  ChartSweep,
  SweepId,
  WavesChart,
  WavesPoint,
  LimitingFactor,
} from './core/analyzer';
import type { ChartData, PressureResult as CorePressureResult } from './core/analyzer';

/**
 * The display conventions the chart shares with hovers, written here rather than re-exported from the
 * core, so that the client's bundle holds no core code (only types cross): a unit test checks that
 * they write what core/report/format.ts writes.
 */
export const LIMIT_NAMES: Record<string, string> = {
  registers: 'registers',
  sharedMemory: 'shared memory',
  warps: 'warp slots',
  blocks: 'block slots',
  barriers: 'barriers',
  virtualResources: 'virtual resources',
};

export function bytes(n: number): string {
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KB`;
  if (n >= 10 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${n} B`;
}

export function percent(fraction: number): string {
  const p = fraction * 100;
  return `${Number.isInteger(p) ? p : p.toFixed(1)}%`;
}
/** The settings schema, for the client's settings-origins middleware (which keys only the user may set). */
export { SETTINGS_SCHEMA, WORKSPACE_KEYS_FIELD, userOnlyKeys } from './settings';

/** Client command a lens runs: opens the occupancy chart for a kernel. Argument: ChartTarget. */
export const SHOW_CHART_COMMAND = 'cudaOccupancy.showChart';

export interface ChartTarget {
  uri: string;
  kernel: string;
  line: number;
}

/** Server → client: what the server is doing, for the status bar. */
export const STATUS_NOTIFICATION = 'cudaOccupancy/status';

export interface ServerStatus {
  state: 'ready' | 'compiling' | 'nvcc-missing' | 'nvcc-failed' | 'untrusted' | 'error';
  archs: string[];
  /** Where the architectures came from: settings, compile_commands.json, CMake, default. */
  archSource: string;
  /** The named GPUs launches are shown on (cudaOccupancy.gpus, or one per target architecture). */
  gpus?: string[];
  /** Every GPU the server knows, for the picker. */
  gpuChoices?: Array<{ name: string; arch: string }>;
  message: string;
  compilesRunning: number;
  /** Open documents whose kernel bodies are being analysed in the background (their diagnostics follow). */
  analysing: number;
  /** Translation units whose last compile failed (`message` says why and what to set). */
  compileFailures?: number;
}

/**
 * Client → server: the occupancy chart's data for a kernel (the lens's ChartTarget; an
 * empty `kernel` means the kernel at or above `line`), on `arch` or, when absent, the
 * first target architecture with register figures. Null: no kernel there, or no
 * register figures for it on any architecture.
 */
export const CHART_DATA_REQUEST = 'cudaOccupancy/chartData';

export type ChartDataParams = ChartTarget & { arch?: string };

export type ChartDataResult = ChartData | null;

/**
 * Client → server: the server process's memory (as rust-analyzer's memoryUsage), for benchmarks and
 * bug reports. `externalMb` is mostly the parser's WebAssembly memory, which never shrinks.
 */
export const MEMORY_USAGE_REQUEST = 'cudaOccupancy/memoryUsage';

export interface MemoryUsage {
  rssMb: number;
  /** The JavaScript heap: what V8 has reserved, and what live (and not yet collected) objects take of it. */
  heapTotalMb: number;
  heapUsedMb: number;
  /** The most the JavaScript heap may grow to (the `--max-old-space-size` the server runs with, plus the young generation). */
  heapLimitMb: number;
  externalMb: number;
  openDocuments: number;
  /** Full collections the server ran in idle windows (see idle-collector.ts); null when Node does not expose gc. */
  idleCollections: number | null;
  /** Of those, the ones that compacted the old generation once the server settled; null when Node does not expose gc. */
  idleCompactions: number | null;
}

/** Client command: draws (or clears) the register pressure heat map over the active editor's kernels. The peak line's lens runs it. */
export const TOGGLE_PRESSURE_HEATMAP_COMMAND = 'cudaOccupancy.togglePressureHeatmap';

/**
 * Client → server: register pressure per line of a document's kernels (an estimate from the PTX of
 * its current text: values live before ptxas allocates registers; from SASS, the registers live
 * after allocation, where the toolkit has nvdisasm), 0-based lines. Null: no PTX of
 * this text yet (the file has not compiled since its last edit, or nvcc is not available).
 */
export const PRESSURE_REQUEST = 'cudaOccupancy/pressure';

export interface PressureParams {
  uri: string;
}

export type PressureResult = CorePressureResult | null;
