/**
 * Where a kernel's register and shared-memory figures come from, in order of
 * trust: ptxas run on the saved file, a build log, an annotation in a comment
 * above the kernel (`// occupancy: regs=64 smem=8192`); else unknown.
 * `generation` changes whenever figures change, so cached reports are rebuilt.
 */
import type { Kernel, Launch } from '../types';
import { UNKNOWN_FIGURES, type FiguresFor, type KernelFigures } from '../report/launch-analysis';
import {
  parseResourceAnnotation,
  pickInstance,
  preferResources,
  resourcesForArch,
  type KernelResources,
  type MapKernelResourcesResult,
} from './kernel-resources';

/** Template arguments of a launch as the demangler spells them, numbers resolved where the source allows. */
export function launchTemplateArgs(launch: Launch | null): string[] | null {
  if (!launch?.templateArgs) return null;
  return launch.templateArgs.map((text, k) => (launch.templateArgValues?.[k] != null ? String(launch.templateArgValues[k]) : text));
}

export class FiguresRegistry {
  /** Compiled figures per source file (key: path or URI), from ptxas or a log. */
  private readonly compiled = new Map<string, { kernels: Array<KernelResources<Kernel>>; stale: boolean; note: string | null }>();
  private readonly logs = new Map<string, Array<KernelResources<Kernel>>>();
  generation = 0;

  /** Figures from ptxas for the kernels of one file. */
  setCompiled(key: string, result: MapKernelResourcesResult<Kernel>): void {
    this.compiled.set(key, { kernels: result.kernels, stale: false, note: null });
    this.generation++;
  }

  /** Keep the last figures of a file but mark them stale (a failed compile, a changed file). */
  markStale(key: string, note: string | null): void {
    const entry = this.compiled.get(key);
    if (!entry) return;
    this.compiled.set(key, { ...entry, stale: true, note });
    this.generation++;
  }

  forget(key: string): void {
    if (this.compiled.delete(key)) this.generation++;
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

  readonly figuresFor: FiguresFor = (kernel, launch, arch) => {
    if (!kernel) return { ...UNKNOWN_FIGURES, note: 'kernel not found' };
    let best: KernelFigures | null = null;
    for (const entry of this.compiled.values()) {
      const figures = this.fromResources(entry.kernels, kernel, launch, arch);
      if (figures) best = preferResources(best, entry.stale ? { ...figures, stale: true, note: entry.note } : figures);
    }
    for (const kernels of this.logs.values()) best = preferResources(best, this.fromResources(kernels, kernel, launch, arch));
    const annotation = parseResourceAnnotation(kernel.leadingComment);
    if (annotation) best = preferResources(best, resourcesForArch(annotation.resources, arch));
    return best ?? UNKNOWN_FIGURES;
  };

  private fromResources(kernels: ReadonlyArray<KernelResources<Kernel>>, kernel: Kernel, launch: Launch | null, arch: string): KernelFigures | null {
    const match = kernels.find((k) => k.kernel.qualifiedName === kernel.qualifiedName && k.instances.length > 0);
    if (!match) return null;
    const instance = pickInstance(match.instances, launchTemplateArgs(launch));
    return instance ? resourcesForArch(instance.resources, arch) : null;
  }
}
