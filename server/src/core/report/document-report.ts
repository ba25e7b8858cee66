/**
 * Everything the editor shows for one document version, computed once from its
 * facts and kept until the version, the settings, the compiler figures or the
 * PTX change.
 */
import { findSuppressions, withoutSuppressed } from './suppressions';
import type { DocumentFacts } from '../facts/document-facts';
import type { Finding, Kernel, Launch, LaunchBounds, MemoryParallelism } from '../types';
import {
  analyzeLaunch,
  type FiguresFor,
  type FigureSite,
  type KernelFigures,
  type LatencyOptions,
  type LaunchAnalysis,
} from './launch-analysis';
import { findTypeAliases, type TypeAliases } from '../compiler/launch-instances';
import type { Branch } from '../body/divergence';
import { divergenceFindings, type DivergenceSeverityOptions } from './divergence-findings';
import { refineBranchesWithPtx, refineBranchesWithSass } from '../compiler/ptx-branch-costs';
import { crossCheckAccesses } from '../compiler/ptx-memory-widths';
import type { MemoryRecord } from '../body/memory-rules';
import { occupancyFindings } from './occupancy-findings';
import { memoryFindings } from './memory-findings';
import { launchConfigSpan } from './launch-config-span';
import { impossibleLaunchFindings } from '../compiler/compiler-findings';
import { gridFindings, launchOnGpus, type LaunchOnGpu } from './launch-on-gpus';
import type { GpuPart } from '../gpu/gpu-parts';
import {
  kernelPressures,
  spillLineFindings,
  type EntryFigures,
  type KernelPressureView,
  type ModulePressure,
} from './pressure-report';
import type { CapCheck } from './register-caps';
import { entryNamesKernel, parsePtx, type PtxModule } from '../compiler/ptx-line-costs';
import { ptxLoadWork, type LoadWork } from '../compiler/ptx-load-work';
import { objectTable } from '../incremental/kept-tables';
import type { LatencyWork } from '../gpu/latency';

/** A PTX parsed once per PTX the analyzer keeps: every report of a document's versions reads it. */
const keptModules = objectTable<ReportPtx, PtxModule>('parsed PTX');

function moduleOf(ptx: ReportPtx): PtxModule {
  let module = keptModules.get(ptx);
  if (!module) keptModules.set(ptx, (module = parsePtx(ptx.text)));
  return module;
}

/** The load work of each entry of a PTX (ptx-load-work.ts), read once per PTX the analyzer keeps. */
const keptLoadWork = objectTable<ReportPtx, Map<string, LoadWork | null>>('PTX load work per entry');

function loadWorkOf(ptx: ReportPtx): Map<string, LoadWork | null> {
  let works = keptLoadWork.get(ptx);
  if (!works) {
    works = new Map(
      moduleOf(ptx)
        .functions.filter((f) => f.kind === 'entry')
        .map((f) => [f.name, ptxLoadWork(f)]),
    );
    keptLoadWork.set(ptx, works);
  }
  return works;
}

/**
 * p and the work between loads for the latency estimate: from the PTX of the launch's instance when
 * the PTX has it (or has one entry of the kernel), else from the source estimate of the kernel's
 * body; none (no estimate) when neither can tell: a kernel written elsewhere, no global load seen.
 */
function latencyInputs(
  ptxEntry: LoadWork | null | undefined,
  mp: MemoryParallelism | undefined,
): { independentOpsPerWarp?: number; work: LatencyWork | null } {
  if (ptxEntry) return { independentOpsPerWarp: ptxEntry.loadsInFlight, work: ptxEntry };
  // The PTX has the kernel and it loads nothing from global memory the model counts: nothing to hide.
  if (ptxEntry === null) return { work: null };
  if (!mp || mp.p <= 0) return { work: null };
  return { independentOpsPerWarp: mp.p, work: mp.work ?? null };
}

export interface ReportSettings {
  latencyCycles: number;
  occupancyWarningBelow: number;
  divergenceMinCost: number;
  /** A divergent branch is a warning only when its idle-lane issue slots are at least this share (percent) of its kernel's. */
  divergenceMinShare: number;
  divergenceEnabled: boolean;
  /** `small-grid` and `tail-effect` hints on grids the source fixes (default on). */
  gridFindings?: boolean;
  /** Register pressure per line from the PTX, when there is PTX of the text (default on). */
  pressureEnabled?: boolean;
}

export const DEFAULT_REPORT_SETTINGS: ReportSettings = {
  latencyCycles: 0,
  occupancyWarningBelow: 0,
  divergenceMinCost: 4,
  divergenceMinShare: 8,
  divergenceEnabled: true,
};

export interface DocumentReport {
  facts: DocumentFacts;
  /** The key the workspace index knows the document by: the unit its launches are compiled in. */
  path: string;
  archs: string[];
  /** One per launch, in the order of facts.launches. */
  analyses: LaunchAnalysis[];
  /** Launch analyses per kernel of this document, in the order of its kernels. */
  byKernel: Map<Kernel, LaunchAnalysis[]>;
  findings: Finding[];
  /** facts.branches, with the divergent ones' path costs counted in the PTX when it was given. */
  branches: Branch[];
  /** facts.memory, its global accesses cross-checked against the PTX when it was given. */
  memory: MemoryRecord[];
  /** Per launch (in the order of `analyses`): the launch on each named GPU of its architectures. */
  gpus: LaunchOnGpu[][];
  /** The compiled instances of each kernel of this document (from every unit that compiled it), for kernels shown without a launch. */
  compiled: Map<Kernel, CompiledInstance[]>;
  /** The thresholds divergent branches were judged by (their hovers say so). */
  divergenceSeverity: DivergenceSeverityOptions;
  /** Register pressure per line of each kernel definition the PTX has (empty without PTX of this text). */
  pressure: Map<Kernel, KernelPressureView>;
  /** ptxas's checks of the register caps the fixes propose, by cap key (register-caps.ts), for this text. */
  capChecks: ReadonlyMap<string, CapCheck>;
}

/** A compiled instance of a kernel: its signature and its figures per target architecture. */
export interface CompiledInstance {
  /** The mangled name ptxas reported, when the caller knows it. */
  mangledName?: string | null;
  signature: string | null;
  resources: Record<string, KernelFigures>;
}

/** PTX of this document's text (`nvcc -ptx -lineinfo`); `filePath` is the file nvcc compiled. */
export interface ReportPtx {
  text: string;
  filePath: string;
}

export interface ReportInput {
  facts: DocumentFacts;
  archs: string[];
  figuresFor: FiguresFor;
  settings?: ReportSettings;
  /** Findings from the compiler's own output (spills, unmet launch bounds). */
  compilerFindings?: Finding[];
  /** Only for PTX compiled from exactly `facts.source.text`: its `.loc` lines are read against the facts' spans. */
  ptx?: ReportPtx | null;
  /** The register pressure of `ptx` (modulePressure), computed once per PTX by the caller. */
  pressure?: ModulePressure | null;
  /** Checks of register caps made on exactly `facts.source.text` (default none). */
  capChecks?: ReadonlyMap<string, CapCheck>;
  /** A SASS listing (`cuobjdump -sass`, `nvdisasm --print-line-info`) of exactly `facts.source.text`, when the caller has one (neither the server nor the CLI runs those tools yet). */
  sass?: ReportPtx | null;
  /** Analyses one launch (default: analyzeLaunch; the incremental layer passes one that reuses earlier versions' analyses). */
  analyze?: LaunchAnalyzer;
  /** Named GPUs to show each launch on (waves, clusters, the latency range); default none. */
  parts?: readonly GpuPart[];
  /** The key the workspace index knows this document by (default: its URI): the unit its launches are compiled in. */
  path?: string;
  /** The compiled instances of a kernel of this document (default: none). */
  instancesOf?: (kernel: Kernel) => CompiledInstance[];
}

export type LaunchAnalyzer = (input: LaunchAnalysisInput) => LaunchAnalysis;

export interface LaunchAnalysisInput {
  launch: Launch;
  kernel: Kernel | null;
  launchBounds: LaunchBounds | null;
  archs: readonly string[];
  figuresFor: FiguresFor;
  latency: LatencyOptions;
  /** Where the kernel is written and the launch compiled, for its figures (null without a kernel). */
  site: FigureSite | null;
}

const analyzeOne: LaunchAnalyzer = ({ launch, kernel, launchBounds, archs, figuresFor, latency, site }) =>
  analyzeLaunch(launch, kernel, launchBounds, archs, figuresFor, latency, site);

export function buildDocumentReport({
  facts,
  archs,
  figuresFor,
  settings = DEFAULT_REPORT_SETTINGS,
  compilerFindings = [],
  ptx = null,
  pressure = null,
  capChecks = new Map(),
  sass = null,
  analyze = analyzeOne,
  parts = [],
  path = facts.uri,
  instancesOf,
}: ReportInput): DocumentReport {
  let aliases: TypeAliases | undefined;
  const aliasesOf = () => (aliases ??= findTypeAliases(facts.source.text));
  const estimates = new Map<string, MemoryParallelism>();
  for (const m of facts.memoryParallelism) if (!estimates.has(m.kernel)) estimates.set(m.kernel, m);
  const estimateOf = (kernel: Kernel) => estimates.get(kernel.qualifiedName) ?? estimates.get(kernel.name);
  const definedHere = new Set(
    facts.pendingKernels > 0 ? facts.kernels.filter((k) => k.isDefinition).map((k) => k.qualifiedName) : [],
  );
  const works = ptx ? loadWorkOf(ptx) : null;
  /** The PTX entry of the instance a launch runs: undefined when the PTX cannot say which. */
  const ptxWorkOf = (kernel: Kernel, launch: Launch, site: FigureSite): LoadWork | null | undefined => {
    if (!works || archs.length === 0) return undefined;
    const entry = figuresFor(kernel, launch, archs[0], site).entry;
    if (entry && works.has(entry)) return works.get(entry);
    const named = [...works.keys()].filter((name) => entryNamesKernel(name, kernel.name));
    return named.length === 1 ? works.get(named[0]) : undefined;
  };
  const inputs: Array<ReturnType<typeof latencyInputs>> = [];
  const analyses = facts.launches.map((launch, i) => {
    const target = facts.launchTargets[i];
    const kernel = target?.kernel ?? null;
    const mp = kernel ? estimateOf(kernel) : undefined;
    const bounds = target?.launchBounds ?? kernel?.launchBounds ?? null;
    const site: FigureSite | null = kernel
      ? { kernelPath: target.kernelPath ?? path, unit: path, aliases: aliasesOf }
      : null;
    const loads = latencyInputs(kernel && site ? ptxWorkOf(kernel, launch, site) : undefined, mp);
    inputs.push(loads);
    const latency = {
      latencyCycles: settings.latencyCycles,
      ...loads,
      // A kernel of this file whose body is not analysed yet (one in another file has no estimate).
      pending:
        !mp && !loads.work && kernel !== null && target.kernelUri === null && definedHere.has(kernel.qualifiedName),
    };
    return analyze({ launch, kernel, launchBounds: bounds, archs, figuresFor, latency, site });
  });
  const gpus = analyses.map((a, i) =>
    parts.length > 0 ? launchOnGpus(a, parts, inputs[i].independentOpsPerWarp ?? null, inputs[i].work) : [],
  );
  const byName = new Map<string, LaunchAnalysis[]>();
  for (const a of analyses) {
    if (!a.kernel) continue;
    const group = byName.get(a.kernel.qualifiedName);
    if (group) group.push(a);
    else byName.set(a.kernel.qualifiedName, [a]);
  }
  const byKernel = new Map<Kernel, LaunchAnalysis[]>();
  for (const kernel of facts.kernels) byKernel.set(kernel, byName.get(kernel.qualifiedName) ?? []);
  const divergent = facts.branches.some((b) => b.kind === 'divergent');
  const fromPtx =
    ptx && divergent
      ? refineBranchesWithPtx(facts.branches, moduleOf(ptx), ptx.filePath, facts.launches)
      : facts.branches;
  const branches =
    sass && divergent ? refineBranchesWithSass(fromPtx, sass.text, sass.filePath, facts.launches) : fromPtx;
  const memory = ptx ? crossCheckAccesses(facts.memory ?? [], moduleOf(ptx), ptx.filePath) : (facts.memory ?? []);
  const divergenceSeverity = {
    minCostThreshold: settings.divergenceMinCost,
    minSharePercent: settings.divergenceMinShare,
  };
  const compiled = new Map<Kernel, CompiledInstance[]>();
  if (instancesOf) for (const kernel of facts.kernels) compiled.set(kernel, instancesOf(kernel));
  const figuresOf = (kernel: Kernel, entry: string, arch: string | null): EntryFigures | null => {
    if (!arch) return null;
    const instances = compiled.get(kernel) ?? [];
    const instance =
      instances.find((i) => i.mangledName === entry) ?? (instances.length === 1 ? instances[0] : undefined);
    const fromInstance = instance?.resources[arch];
    if (fromInstance && fromInstance.numRegs !== null && fromInstance.numRegs !== undefined)
      return {
        numRegs: fromInstance.numRegs,
        spillStoreBytes: fromInstance.spillStoreBytes ?? 0,
        spillLoadBytes: fromInstance.spillLoadBytes ?? 0,
        stackFrameBytes: fromInstance.stackFrameBytes ?? 0,
      };
    if (kernel.templateParams) return null;
    for (const a of byKernel.get(kernel) ?? []) {
      const regs = a.perArch.find((p) => p.arch === arch)?.figures.numRegs;
      // Launch figures carry no spills: the registers only.
      if (regs !== undefined && regs !== null)
        return { numRegs: regs, spillStoreBytes: 0, spillLoadBytes: 0, stackFrameBytes: 0 };
    }
    return null;
  };
  const pressureViews =
    ptx && pressure && settings.pressureEnabled !== false
      ? kernelPressures(facts.kernels, pressure, ptx.filePath, figuresOf)
      : new Map<Kernel, KernelPressureView>();
  const configSpan = (a: LaunchAnalysis) => launchConfigSpan(facts.source, a.launch);
  const findings = withoutSuppressed(
    [
      ...facts.findings,
      ...compilerFindings,
      ...(settings.divergenceEnabled ? divergenceFindings(branches, divergenceSeverity) : []),
      ...memoryFindings(memory),
      ...impossibleLaunchFindings(analyses),
      ...occupancyFindings(analyses, settings.occupancyWarningBelow, configSpan),
      ...(settings.gridFindings === false ? [] : analyses.flatMap((a, i) => gridFindings(a, gpus[i], configSpan(a)))),
      ...spillLineFindings(pressureViews),
    ],
    findSuppressions(facts.source),
  );
  return {
    facts,
    path,
    archs,
    analyses,
    byKernel,
    findings,
    branches,
    memory,
    gpus,
    compiled,
    divergenceSeverity,
    pressure: pressureViews,
    capChecks,
  };
}
