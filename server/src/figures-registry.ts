/**
 * Where a kernel's register and shared-memory figures come from, in order of
 * trust: ptxas run by us on the saved file, a build log, an annotation in a
 * comment above the kernel; else unknown. Bumps `generation` whenever figures
 * change so cached reports are rebuilt.
 */
import type { Kernel, Launch } from './core/types';
import { UNKNOWN_FIGURES, type FiguresFor, type KernelFigures } from './core/launch-analysis';

export type FiguresLookup = (kernel: Kernel, launch: Launch | null, arch: string) => KernelFigures | null;

export class FiguresRegistry {
  private readonly sources: Array<{ name: string; lookup: FiguresLookup }> = [];
  generation = 0;

  /** Add a source; earlier sources win. */
  addSource(name: string, lookup: FiguresLookup): void {
    this.sources.push({ name, lookup });
    this.changed();
  }

  changed(): void {
    this.generation++;
  }

  readonly figuresFor: FiguresFor = (kernel, launch, arch) => {
    if (!kernel) return { ...UNKNOWN_FIGURES, note: 'kernel not found' };
    for (const source of this.sources) {
      const figures = source.lookup(kernel, launch, arch);
      if (figures) return figures;
    }
    return UNKNOWN_FIGURES;
  };
}
