/**
 * The object `cuda-occupancy check --format json` prints (docs/cli-json.md), as the
 * modules that post-process it (SARIF, baselines) read it. Only the fields they use are typed
 * precisely; the contract lets fields be added, so every object stays open. Lines and columns
 * are 1-based.
 */

export type CheckSeverity = 'error' | 'warning' | 'info' | 'hint';
export type CheckFiguresSource = 'ptxas' | 'log' | 'annotation' | 'unknown';

export interface CheckJson {
  version: number;
  archs: string[];
  files: CheckJsonFile[];
  [extra: string]: unknown;
}

export interface CheckJsonFile {
  /** As given on the command line, relative to the working directory when it was inside it. */
  path: string;
  kernels: CheckJsonKernel[];
  launches: CheckJsonLaunch[];
  branches: unknown[];
  diagnostics: CheckJsonDiagnostic[];
  [extra: string]: unknown;
}

export interface CheckJsonKernel {
  name: string;
  qualifiedName: string;
  line: number;
  column: number;
  launchBounds: {
    maxThreadsPerBlock: number | null;
    minBlocksPerMultiprocessor: number | null;
    maxBlocksPerCluster: number | null;
    [extra: string]: unknown;
  } | null;
  instances: CheckJsonInstance[];
  [extra: string]: unknown;
}

export interface CheckJsonInstance {
  mangledName: string | null;
  signature: string | null;
  resources: Record<string, CheckJsonResources>;
  [extra: string]: unknown;
}

export interface CheckJsonResources {
  numRegs: number | null;
  sharedSizeBytes: number | null;
  spillStoreBytes: number | null;
  spillLoadBytes: number | null;
  stackFrameBytes: number | null;
  barriers: number | null;
  source: CheckFiguresSource;
  [extra: string]: unknown;
}

export interface CheckJsonDim3 {
  x: number;
  y: number;
  z: number;
}

export interface CheckJsonLaunch {
  line: number;
  column: number;
  kernel: string;
  templateArgs: string[] | null;
  via: string;
  block: CheckJsonDim3 | null;
  blockExpr?: string | null;
  threadsPerBlock: number | null;
  dynamicSmemBytes: number | null;
  dynamicSmemExpr?: string | null;
  /** Per arch: the calculator's answer, or null when no occupancy can be claimed. */
  occupancy: Record<string, CheckJsonOccupancy | null>;
  /** The launch on each named GPU of its architectures (`--gpu`, or one part per architecture). */
  gpus?: CheckJsonGpu[];
  /**
   * The wrapper (`definedIn`: in another translation unit, the file that defines it) or macro a
   * launch is read through, at its call or use; null for a launch written where it is reported.
   */
  through?: { kind: 'macro' | 'wrapper'; name: string; definedIn?: string } | null;
  [extra: string]: unknown;
}

export interface CheckJsonGpu {
  part: string;
  arch: string;
  sms: number;
  blocksPerSm: number;
  gridBlocks: number | null;
  waves: {
    blocksPerWave: number;
    waves: number;
    wavesRun: number;
    lastWaveBlocks: number;
    lastWaveFill: number;
    idleFraction: number;
    idleSms: number;
  } | null;
  perElement: { variable: string; perBlock: number; elementsPerWave: number } | null;
  sizedFromDevice: boolean;
  cluster: { clusterBlocks: number; maxActiveClusters: number; estimate: true; assumptions: string[] } | null;
  latency: {
    warpsNeeded: { low: number; high: number };
    warpsResident: number;
    latencyCycles: { low: number; high: number };
    rate: number;
    independentOpsPerWarp: number;
    sources: string;
  } | null;
  registerHeadroom: number | null;
}

export interface CheckJsonOccupancy {
  activeBlocksPerMultiprocessor: number;
  occupancy: number;
  limitingFactors: string[];
  activeWarps?: number;
  maxWarpsPerMultiprocessor?: number;
  [extra: string]: unknown;
}

export interface CheckJsonDiagnostic {
  line: number;
  column: number;
  severity: CheckSeverity;
  code: string;
  message: string;
  [extra: string]: unknown;
}
