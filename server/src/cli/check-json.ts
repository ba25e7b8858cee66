/**
 * `cuda-occupancy check --format json`: the shape docs/cli-json.md promises,
 * built from document reports. Lines and columns are 1-based here.
 */
import type { DocumentReport } from '../core/analyzer';
import type { Kernel, Launch, Span } from '../core/types';
import type { InstanceSpread, KernelFigures } from '../core/analyzer';
import type { Branch, BranchKind } from '../core/analyzer';
import type { LaunchOnGpu } from '../core/analyzer';
import { kernelPressureJson } from './check-pressure';
import { nextStepsJson } from './check-fixes';

export interface CheckFile {
  path: string;
  report: DocumentReport;
  /** Per kernel: compiled instances with their figures per arch (from ptxas, a log or an annotation). */
  instances: (kernel: Kernel) => CheckInstance[];
  branches?: unknown[];
  /** Per launch (same order as report.analyses): the latency estimate per arch, or null. */
  latency?: Array<Record<string, unknown> | null>;
  /** Another file's path as the output writes it (relative to the working folder). */
  displayPath?: (path: string) => string;
}

export interface CheckInstance {
  mangledName: string | null;
  signature: string | null;
  resources: Record<string, KernelFigures>;
}

/** The wrapper or macro a launch is read through; a wrapper another unit defines names its file. */
function throughJson(through: Launch['through'], displayPath?: (path: string) => string): Launch['through'] {
  if (!through?.definedIn || !displayPath) return through ?? null;
  return { ...through, definedIn: displayPath(through.definedIn) };
}

const at = (span: Span) => ({ line: span.start.line + 1, column: span.start.character + 1 });

export interface CheckJsonOptions {
  /** `--lines`: each kernel's register pressure per line, not only its peak. */
  pressureLines?: boolean;
  /** `--check-fixes`: each launch's register caps and what ptxas did with them (`launches[].nextSteps`). */
  nextSteps?: boolean;
}

export function checkJson(archs: string[], files: CheckFile[], options: CheckJsonOptions = {}): object {
  return checkJsonOf(
    archs,
    files.map((file) => checkJsonFile(file, options)),
  );
}

/** The whole object from each file's entry (checkJsonFile): the files may have been analysed apart. */
export function checkJsonOf(archs: string[], files: object[]): object {
  return { version: 1, archs, files };
}

/** One file's entry of `files`: plain data, the same wherever it was built (a worker thread or the main one). */
export function checkJsonFile(file: CheckFile, options: CheckJsonOptions = {}): object {
  const { report } = file;
  return {
    path: file.path,
    kernels: report.facts.kernels.map((k) => ({
      name: k.name,
      qualifiedName: k.qualifiedName,
      ...at(k.nameSpan),
      isDefinition: k.isDefinition,
      templateParams: k.templateParams?.map((p) => p.name) ?? null,
      launchBounds: k.launchBounds
        ? {
            maxThreadsPerBlock: k.launchBounds.maxThreadsPerBlock,
            minBlocksPerMultiprocessor: k.launchBounds.minBlocksPerMultiprocessor,
            maxBlocksPerCluster: k.launchBounds.maxBlocksPerCluster,
            text: k.launchBounds.text,
          }
        : null,
      maxnreg: k.maxnreg,
      staticSharedBytes: k.staticSharedBytes,
      instances: file.instances(k).map((i) => ({
        mangledName: i.mangledName,
        signature: i.signature,
        resources: Object.fromEntries(Object.entries(i.resources).map(([arch, f]) => [arch, resourceJson(f)])),
      })),
      // From the PTX of the file (null without it): an estimate before register allocation.
      pressure: kernelPressureJson(report, k, options.pressureLines === true),
    })),
    launches: report.analyses.map((a, index) => ({
      ...at(a.launch.span),
      kernel: a.launch.kernelName,
      templateArgs: a.launch.templateArgs,
      via: a.launch.via,
      inMacro: a.launch.inMacro,
      grid: a.launch.grid.value,
      gridExpr: a.launch.grid.text || null,
      block: a.launch.block.value,
      blockExpr: a.launch.block.text || null,
      threadsPerBlock: a.threadsPerBlock,
      dynamicSmemBytes: a.dynamicSmemBytes,
      dynamicSmemExpr: a.launch.dynamicSmem.text || null,
      stream: a.launch.stream,
      kernelFound: a.kernel !== null,
      // upperBound: the figures were computed without the dynamic shared memory, which is not known
      // statically (each byte of it can only lower them); fails: the launch cannot run (0 blocks fit).
      occupancy: Object.fromEntries(
        a.perArch.map((p) => [
          p.arch,
          p.result
            ? {
                ok: true,
                error: null,
                ...p.result,
                figuresSource: p.figures.source,
                upperBound: p.upperBound !== null,
                upperBoundReason: p.upperBound,
                fails: p.fails,
              }
            : null,
        ]),
      ),
      launchFails: a.perArch.find((p) => p.fails)?.fails ?? null,
      // Several compiled instances could run (template arguments of the enclosing template, or deduced): their spread.
      occupancyRange: a.perArch.some((p) => p.spread)
        ? Object.fromEntries(a.perArch.map((p) => [p.arch, p.spread ? rangeJson(p.spread) : null]))
        : null,
      // No register figures, block size known: for each occupancy level, the most registers per thread that reach it.
      registerBudget: a.perArch.some((p) => p.budget)
        ? Object.fromEntries(
            a.perArch.map((p) => [
              p.arch,
              p.budget?.map((l) => ({
                occupancy: l.occupancy,
                activeBlocksPerMultiprocessor: l.activeBlocks,
                maxRegsPerThread: l.maxRegsPerThread,
              })) ?? null,
            ]),
          )
        : null,
      latency: file.latency?.[index] ?? null,
      gpus: (report.gpus[index] ?? []).map(gpuJson),
      // Each candidate is a dim3 (like `block`) with its threads and occupancy.
      blockCandidates:
        a.candidates?.map((c) => ({
          ...c.block,
          threadsPerBlock: c.threadsPerBlock,
          occupancy: Object.fromEntries(
            c.perArch.map((p) => [
              p.arch,
              p.result && !p.fails
                ? {
                    ok: true,
                    error: null,
                    ...p.result,
                    figuresSource: p.figures.source,
                    upperBound: p.upperBound !== null,
                  }
                : null,
            ]),
          ),
        })) ?? null,
      through: throughJson(a.launch.through ?? null, file.displayPath),
      ...(options.nextSteps ? { nextSteps: nextStepsJson(report, a) } : {}),
    })),
    branches: file.branches ?? [],
    diagnostics: report.findings.map((f) => ({
      ...at(f.span),
      severity: f.severity,
      code: f.code,
      message: f.message,
    })),
  };
}

/** A launch on one named GPU: waves and tail, the cluster limit, the latency range (launch-on-gpus.ts). */
function gpuJson(g: LaunchOnGpu) {
  return {
    part: g.part.name,
    arch: g.arch,
    sms: g.part.sms,
    blocksPerSm: g.blocksPerSm,
    gridBlocks: g.gridBlocks,
    waves: g.waves && {
      blocksPerWave: g.waves.blocksPerWave,
      waves: g.waves.waves,
      wavesRun: g.waves.wavesRun,
      lastWaveBlocks: g.waves.lastWaveBlocks,
      lastWaveFill: g.waves.lastWaveFill,
      idleFraction: g.waves.idleFraction,
      idleSms: g.waves.idleSms,
    },
    perElement: g.perElement,
    sizedFromDevice: g.sizedFromDevice,
    cluster: g.cluster && {
      clusterBlocks: g.cluster.clusterBlocks,
      maxActiveClusters: g.cluster.maxActiveClusters,
      estimate: true,
      assumptions: g.cluster.assumptions,
    },
    latency: g.latency && {
      warpsNeeded: g.latency.warpsNeeded,
      warpsResident: g.latency.warpsResident,
      latencyCycles: g.latency.latencyCycles,
      rate: g.latency.rate,
      independentOpsPerWarp: g.latency.independentOpsPerWarp,
      sources: g.latency.latencyNote,
    },
    registerHeadroom: g.registerHeadroom,
  };
}

function rangeJson(s: InstanceSpread) {
  return {
    instances: s.instances,
    minOccupancy: s.minOccupancy,
    maxOccupancy: s.maxOccupancy,
    minActiveBlocksPerMultiprocessor: s.minActiveBlocks,
    maxActiveBlocksPerMultiprocessor: s.maxActiveBlocks,
    minRegs: s.minRegs,
    maxRegs: s.maxRegs,
  };
}

function resourceJson(f: KernelFigures) {
  return {
    numRegs: f.numRegs,
    sharedSizeBytes: f.sharedSizeBytes,
    spillStoreBytes: f.spillStoreBytes,
    spillLoadBytes: f.spillLoadBytes,
    stackFrameBytes: f.stackFrameBytes,
    barriers: f.barriers,
    source: f.source,
    producedAt: f.producedAt ? new Date(f.producedAt).toISOString() : null,
    stale: f.stale ?? false,
    // Figures of a build's files (--from-build) say which file; others have no origin field.
    ...(f.origin
      ? {
          origin: {
            kind: f.origin.kind,
            ...(f.origin.via ? { via: f.origin.via } : {}),
            path: f.origin.path,
            modifiedAt: f.origin.modifiedAt ? new Date(f.origin.modifiedAt).toISOString() : null,
            files: f.origin.files,
          },
        }
      : {}),
    ...(f.conflict ? { conflict: f.conflict } : {}),
  };
}

export interface CliBranch {
  line: number;
  column: number;
  kind: BranchKind;
  condition: string;
  efficiency: number;
  /** Issue slots per warp a split warp spends with lanes idle (0 unless divergent). */
  idleIssueSlots: number;
  /** Issue slots of one pass of the kernel the branch is in (what `idleIssueSlots` is weighed against). */
  kernelIssueSlots: number;
  /** `syntax-estimate` or `ptx`. */
  costSource: string;
  /**
   * Of a divergent branch: `thread-index` when the thread indices and the block shape prove the
   * split, `run-time-value` when it happens only for some values of a uniform unknown (a kernel
   * argument), `data` when the lanes split where their per-lane data differ.
   */
  splitBy?: 'thread-index' | 'run-time-value' | 'data';
}

/** `branches` of `cuda-occupancy check --format json`: 1-based positions, one per branch (the worst verdict when a device function is reached from several kernels). */
export function branchesForCli(branches: readonly Branch[]): CliBranch[] {
  const byPosition = new Map<string, CliBranch>();
  for (const b of branches) {
    const entry: CliBranch = {
      line: b.span.start.line + 1,
      column: b.span.start.character + 1,
      kind: b.kind,
      condition: b.condition,
      efficiency: b.efficiency,
      idleIssueSlots: b.idleIssueSlots,
      kernelIssueSlots: b.kernelIssueSlots,
      costSource: b.costSource,
      ...(b.kind === 'divergent' ? { splitBy: splitBy(b) } : {}),
    };
    const key = `${entry.line}:${entry.column}:${b.construct}`;
    const prior = byPosition.get(key);
    if (
      !prior ||
      BRANCH_RANK[entry.kind] > BRANCH_RANK[prior.kind] ||
      (entry.kind === prior.kind &&
        (entry.efficiency < prior.efficiency ||
          (entry.efficiency === prior.efficiency && entry.idleIssueSlots > prior.idleIssueSlots)))
    )
      byPosition.set(key, entry);
  }
  return [...byPosition.values()].sort((a, b) => a.line - b.line || a.column - b.column);
}

function splitBy(b: Branch): NonNullable<CliBranch['splitBy']> {
  if (b.split?.dataDependent) return 'data';
  return (b.split?.onlyFor?.length ?? 0) > 0 ? 'run-time-value' : 'thread-index';
}

const BRANCH_RANK: Record<BranchKind, number> = { 'warp-uniform': 0, tail: 1, divergent: 2 };
