/**
 * `cuda-occupancy check --format json`: the shape of ../shared/cli-contract.md,
 * built from document reports. Lines and columns are 1-based here.
 */
import type { DocumentReport } from '../core/report/document-report';
import type { Kernel, Span } from '../core/types';
import type { KernelFigures } from '../core/report/launch-analysis';
import type { Branch, BranchKind } from '../core/body/divergence';

export interface CheckFile {
  path: string;
  report: DocumentReport;
  /** Per kernel: compiled instances with their figures per arch (from ptxas, a log or an annotation). */
  instances: (kernel: Kernel) => CheckInstance[];
  branches?: unknown[];
  /** Per launch (same order as report.analyses): the latency estimate per arch, or null. */
  latency?: Array<Record<string, unknown> | null>;
}

export interface CheckInstance {
  mangledName: string | null;
  signature: string | null;
  resources: Record<string, KernelFigures>;
}

const at = (span: Span) => ({ line: span.start.line + 1, column: span.start.character + 1 });

export function checkJson(archs: string[], files: CheckFile[]): object {
  return {
    version: 1,
    archs,
    files: files.map((file) => {
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
            ? { maxThreadsPerBlock: k.launchBounds.maxThreadsPerBlock, minBlocksPerMultiprocessor: k.launchBounds.minBlocksPerMultiprocessor, maxBlocksPerCluster: k.launchBounds.maxBlocksPerCluster, text: k.launchBounds.text }
            : null,
          maxnreg: k.maxnreg,
          staticSharedBytes: k.staticSharedBytes,
          instances: file.instances(k).map((i) => ({
            mangledName: i.mangledName,
            signature: i.signature,
            resources: Object.fromEntries(Object.entries(i.resources).map(([arch, f]) => [arch, resourceJson(f)])),
          })),
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
          occupancy: Object.fromEntries(a.perArch.map((p) => [p.arch, p.result ? { ok: true, error: null, ...p.result, figuresSource: p.figures.source, upperBound: p.upperBound !== null, upperBoundReason: p.upperBound, fails: p.fails } : null])),
          launchFails: a.perArch.find((p) => p.fails)?.fails ?? null,
          latency: file.latency?.[index] ?? null,
        })),
        branches: file.branches ?? [],
        diagnostics: report.findings.map((f) => ({ ...at(f.span), severity: f.severity, code: f.code, message: f.message })),
      };
    }),
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
}

/** `branches` of `cuda-occupancy check --format json`: 1-based positions, one per branch (the worst verdict when a device function is reached from several kernels). */
export function branchesForCli(branches: readonly Branch[]): CliBranch[] {
  const byPosition = new Map<string, CliBranch>();
  for (const b of branches) {
    const entry: CliBranch = { line: b.span.start.line + 1, column: b.span.start.character + 1, kind: b.kind, condition: b.condition, efficiency: b.efficiency, idleIssueSlots: b.idleIssueSlots, kernelIssueSlots: b.kernelIssueSlots, costSource: b.costSource };
    const key = `${entry.line}:${entry.column}:${b.construct}`;
    const prior = byPosition.get(key);
    if (!prior || BRANCH_RANK[entry.kind] > BRANCH_RANK[prior.kind] || (entry.kind === prior.kind && (entry.efficiency < prior.efficiency || (entry.efficiency === prior.efficiency && entry.idleIssueSlots > prior.idleIssueSlots)))) byPosition.set(key, entry);
  }
  return [...byPosition.values()].sort((a, b) => a.line - b.line || a.column - b.column);
}

const BRANCH_RANK: Record<BranchKind, number> = { 'warp-uniform': 0, tail: 1, divergent: 2 };
