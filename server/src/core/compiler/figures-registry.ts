/**
 * Where a kernel's register and shared-memory figures come from, in order of trust: ptxas run on
 * the translation units that compile it, a build log, an annotation in a comment above the kernel
 * (`// occupancy: regs=64 smem=8192`); else unknown, with what the compiler is doing about it
 * (running, or failed and why).
 *
 * Compiled figures are kept per translation unit (the `.cu` nvcc compiled) and per kernel
 * definition (the file a kernel is written in, and its name and parameters there): a unit's ptxas
 * entries belong to the kernels defined in it and in the headers it includes, so a header's
 * kernel gets figures from every unit that instantiates it, and a kernel never takes the figures
 * of a same-named kernel of another file. `generation` changes whenever figures or compile
 * states change, so cached reports are rebuilt.
 */
import type { Kernel, Launch } from '../types';
import {
  UNKNOWN_FIGURES,
  type CompileNote,
  type FiguresFor,
  type FigureSite,
  type KernelFigures,
} from '../report/launch-analysis';
import {
  parseResourceAnnotation,
  pickInstance,
  preferResources,
  resourcesForArch,
  type KernelInstance,
  type KernelResources,
} from './kernel-resources';
import { matchInstances } from './launch-instances';

/** Template arguments of a launch as the demangler spells them, numbers resolved where the source allows. */
export function launchTemplateArgs(launch: Launch | null): string[] | null {
  if (!launch?.templateArgs) return null;
  return launch.templateArgs.map((text, k) =>
    launch.templateArgValues?.[k] != null ? String(launch.templateArgValues[k]) : text,
  );
}

/** A kernel written in a file, with the instances one translation unit compiled of it. */
export interface CompiledKernel extends KernelResources<Kernel> {
  /** The index path of the file the kernel is written in. */
  path: string;
}

/** The identity of a kernel definition across analyses of its file: path, name and parameters. */
export function definitionKey(path: string, kernel: Pick<Kernel, 'qualifiedName' | 'parameters'>): string {
  return `${path}\u0000${kernel.qualifiedName}(${kernel.parameters.map((p) => p.replace(/\s+/g, ' ').trim()).join(',')})`;
}

/**
 * What a compile of a unit is doing: asked for (`queued`: nvcc not started yet) or running for some
 * architectures since a time, or the compile failed.
 */
export type UnitState =
  | { state: 'running'; archs: readonly string[]; since: number; queued?: boolean }
  | { state: 'failed'; message: string; hint: string | null };

interface Unit {
  kernels: Map<string, CompiledKernel>;
  stale: boolean;
  note: string | null;
  /** The unit and the files it includes. */
  covers: ReadonlySet<string>;
}

interface UnitStatus {
  state: UnitState;
  /** The unit and the files it includes: the kernels whose figures wait for it. */
  covers: ReadonlySet<string>;
}

/** Whether nvcc can compile at all: found (compiles give figures), missing, switched off, or not known yet (the server is reading its settings). */
export type CompilerStatus = 'available' | 'missing' | 'off' | 'starting';

export class FiguresRegistry {
  /** Compiled figures per translation unit (key: its index path). */
  private readonly units = new Map<string, Unit>();
  private readonly states = new Map<string, UnitStatus>();
  private readonly logs = new Map<string, Array<KernelResources<Kernel>>>();
  private compiler: CompilerStatus | null = null;
  generation = 0;

  /** Whether nvcc can give figures (null: not said, as in a CLI run without it): why figures are missing. */
  setCompilerStatus(status: CompilerStatus | null): void {
    if (status === this.compiler) return;
    this.compiler = status;
    this.generation++;
  }

  /** Figures from ptxas for a unit: the kernels of the unit and of its headers, each with the instances the unit compiled. */
  setCompiled(unit: string, kernels: readonly CompiledKernel[], covers: readonly string[] = [unit]): void {
    const byKey = new Map<string, CompiledKernel>();
    for (const k of kernels) if (k.instances.length) byKey.set(definitionKey(k.path, k.kernel), k);
    this.units.set(unit, { kernels: byKey, stale: false, note: null, covers: new Set([unit, ...covers]) });
    this.generation++;
  }

  /** Keep the last figures of a unit but mark them stale (a failed compile, a changed file). */
  markStale(unit: string, note: string | null): void {
    const entry = this.units.get(unit);
    if (!entry) return;
    this.units.set(unit, { ...entry, stale: true, note });
    this.generation++;
  }

  /** What the unit's compile is doing now (null: nothing to say: done, or never asked). */
  setState(unit: string, state: UnitState | null, covers: readonly string[] = [unit]): void {
    if (state) this.states.set(unit, { state, covers: new Set([unit, ...covers]) });
    else if (!this.states.delete(unit)) return;
    this.generation++;
  }

  /** Compiles asked for that will not run (nvcc turned out missing, or was switched off): no longer "compiling". */
  dropQueued(): void {
    let dropped = false;
    for (const [unit, s] of this.states)
      if (s.state.state === 'running' && s.state.queued) dropped = this.states.delete(unit) || dropped;
    if (dropped) this.generation++;
  }

  /** A unit that covers `path` (it, or one that includes it) last compiled without failing. */
  compiledCovering(path: string): boolean {
    for (const entry of this.units.values()) if (!entry.stale && entry.covers.has(path)) return true;
    return false;
  }

  /** Some unit has compiled figures (else no kernel has any, and reports need not ask). */
  get hasCompiled(): boolean {
    return this.units.size > 0;
  }

  stateOf(unit: string): UnitState | null {
    return this.states.get(unit)?.state ?? null;
  }

  /** The states of the units that compile the kernels of `path` (it, or a unit that includes it). */
  statesCovering(path: string): Array<{ unit: string; state: UnitState }> {
    return [...this.states].filter(([, s]) => s.covers.has(path)).map(([unit, s]) => ({ unit, state: s.state }));
  }

  forget(unit: string): void {
    const had = this.units.delete(unit);
    if (this.states.delete(unit) || had) this.generation++;
  }

  /** Figures read from a build log (replaces the previous log's). */
  setLog(key: string, kernels: Array<KernelResources<Kernel>>): void {
    this.logs.set(key, kernels);
    this.generation++;
  }

  clearLogs(): void {
    if (this.logs.size) {
      this.logs.clear();
      this.generation++;
    }
  }

  /**
   * Every compiled instance of the kernel written in `path`, over all units (one per mangled
   * name: from `preferUnit` when it compiled the kernel, else the freshest), with the unit's stale
   * mark on its figures.
   */
  instancesOf(
    path: string,
    kernel: Pick<Kernel, 'qualifiedName' | 'parameters'>,
    preferUnit: string | null = null,
  ): KernelInstance[] {
    const key = definitionKey(path, kernel);
    const preferred = preferUnit !== null ? this.units.get(preferUnit) : undefined;
    const own = preferred?.kernels.get(key);
    if (own) return own.instances.map((i) => markedInstance(i, preferred!));
    const byName = new Map<string, KernelInstance>();
    for (const unit of this.units.values()) {
      const compiled = unit.kernels.get(key);
      if (!compiled) continue;
      for (const instance of compiled.instances) {
        const marked = markedInstance(instance, unit);
        const prior = byName.get(instance.mangledName ?? '');
        byName.set(instance.mangledName ?? '', prior ? fresher(prior, marked) : marked);
      }
    }
    return [...byName.values()];
  }

  readonly figuresFor: FiguresFor = (kernel, launch, arch, site) => {
    if (!kernel) return { ...UNKNOWN_FIGURES, note: 'kernel not found' };
    let best: KernelFigures | null = site ? this.compiledFigures(kernel, launch, arch, site) : null;
    for (const kernels of this.logs.values())
      best = preferResources(best, this.fromLog(kernels, kernel, launch, arch, site)) as KernelFigures | null;
    const annotation = parseResourceAnnotation(kernel.leadingComment);
    if (annotation) best = preferResources(best, resourcesForArch(annotation.resources, arch)) as KernelFigures | null;
    const compile = site
      ? (this.compileNote(site, arch) ?? (best ? null : (this.noInstanceNote(site) ?? this.noCompileNote())))
      : null;
    if (!best) return compile ? { ...UNKNOWN_FIGURES, compile } : UNKNOWN_FIGURES;
    return compile && (compile.state === 'running' || best.source === 'unknown' || best.stale)
      ? { ...best, compile }
      : best;
  };

  /** The instance (or instances) of the launch among what the units compiled of the kernel written in `site.kernelPath`. */
  private compiledFigures(kernel: Kernel, launch: Launch | null, arch: string, site: FigureSite): KernelFigures | null {
    return launchFigures(this.instancesOf(site.kernelPath, kernel, site.unit ?? null), launch, arch, site);
  }

  /**
   * Figures of a build log (or a build folder's files): matched by name, since a log does not say
   * which file a kernel came from; the launch's instance, or the range of those that could run, as for ptxas.
   */
  private fromLog(
    kernels: ReadonlyArray<KernelResources<Kernel>>,
    kernel: Kernel,
    launch: Launch | null,
    arch: string,
    site: FigureSite | null | undefined,
  ): KernelFigures | null {
    const match = kernels.find((k) => k.kernel.qualifiedName === kernel.qualifiedName && k.instances.length > 0);
    if (!match) return null;
    if (!site) {
      const instance = pickInstance(match.instances, launchTemplateArgs(launch));
      return instance ? resourcesForArch(instance.resources, arch) : null;
    }
    return launchFigures(match.instances, launch, arch, site);
  }

  /** A unit that covers the kernel's file compiled, with no instance of it for the launch (the launching unit first). */
  private noInstanceNote(site: FigureSite): CompileNote | null {
    const own = site.unit ? this.units.get(site.unit) : undefined;
    if (own && own.covers.has(site.kernelPath)) return { state: 'no-instance', unit: site.unit! };
    for (const [unit, entry] of this.units)
      if (entry.covers.has(site.kernelPath)) return { state: 'no-instance', unit };
    return null;
  }

  /** Nothing compiled the kernel and nothing is compiling it: whether nvcc could (null: not said). */
  private noCompileNote(): CompileNote | null {
    return this.compiler === null ? null : { state: 'not-compiled', compiler: this.compiler };
  }

  /** ptxas running for the kernel's units (the launching one or one that includes the kernel's file), else the failure of every one that failed. */
  compileNote(site: FigureSite, arch: string): CompileNote | null {
    const relevant = this.statesCovering(site.kernelPath);
    const own = site.unit ? this.states.get(site.unit) : undefined;
    if (own && !relevant.some((r) => r.unit === site.unit)) relevant.push({ unit: site.unit!, state: own.state });
    const running = relevant.filter(
      (r) => r.state.state === 'running' && (r.state.archs.length === 0 || r.state.archs.includes(arch)),
    );
    if (running.length) {
      const first = running.reduce((a, b) =>
        (a.state as { since: number }).since <= (b.state as { since: number }).since ? a : b,
      );
      const state = first.state as Extract<UnitState, { state: 'running' }>;
      return { state: 'running', unit: first.unit, archs: [...state.archs], since: state.since, queued: state.queued };
    }
    const failed = relevant.filter((r) => r.state.state === 'failed');
    if (failed.length === 0) return null;
    // The launching unit's failure first: it is the one the user is looking at.
    const shown = failed.find((f) => f.unit === site.unit) ?? failed[0];
    const state = shown.state as Extract<UnitState, { state: 'failed' }>;
    return { state: 'failed', unit: shown.unit, message: state.message, hint: state.hint };
  }
}

/** The instance a launch runs among `instances`, or, when several could, the one with the most registers and all of theirs. */
function launchFigures(
  instances: readonly KernelInstance[],
  launch: Launch | null,
  arch: string,
  site: FigureSite,
): KernelFigures | null {
  const pool = instances.filter((i) => resourcesForArch(i.resources, arch));
  if (pool.length === 0) return null;
  const args = launchTemplateArgs(launch);
  const needsAliases = args?.some((a) => /[A-Za-z_]/.test(a)) ?? false;
  const { instances: matched } = matchInstances(pool, args, needsAliases && site.aliases ? site.aliases() : undefined);
  if (matched.length === 0) return null;
  const figures = matched.map((i) => ({ signature: i.signature, figures: resourcesForArch(i.resources, arch)! }));
  if (figures.length === 1) return { ...figures[0].figures, entry: matched[0].mangledName };
  // One that could run has no known registers (a build's files disagree on it): no range is claimed.
  const unknown = figures.find((f) => f.figures.numRegs === null);
  if (unknown) return unknown.figures;
  // Several could run: the figures of the one with the most registers, and all of theirs.
  const most = figures.reduce((a, b) => ((b.figures.numRegs ?? -1) > (a.figures.numRegs ?? -1) ? b : a));
  return { ...most.figures, instances: figures };
}

function markedInstance(instance: KernelInstance, unit: Unit): KernelInstance {
  if (!unit.stale) return instance;
  const resources = Object.fromEntries(
    Object.entries(instance.resources).map(([arch, f]) => [arch, { ...f, stale: true, note: unit.note }]),
  );
  return { ...instance, resources };
}

/** Of two compiles of one instance, the fresh one, else the newer. */
function fresher(a: KernelInstance, b: KernelInstance): KernelInstance {
  const fa = Object.values(a.resources)[0];
  const fb = Object.values(b.resources)[0];
  return preferResources(fa ?? null, fb ?? null) === fb ? b : a;
}
