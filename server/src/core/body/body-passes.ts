/**
 * The passes over one kernel's body, guarded: code nested thousands of levels deep (generated or
 * half-typed) overflows the stack, and that pass then gives its fallback while the rest stands.
 */
import type { Tree } from 'web-tree-sitter';
import type { Kernel, MemoryParallelism } from '../types';
import type { SourceText } from '../text/source-text';
import type { Lookup } from '../text/const-eval';
import { estimateMemoryParallelism } from './memory-parallelism';

/** The kernel's memory-level parallelism (see memory-parallelism.ts), or a note that its body nests too deeply to follow. */
export function memoryParallelismOf(kernel: Kernel, tree: Tree, source: SourceText, lookup: Lookup): MemoryParallelism {
  return withinStack(
    () => estimateMemoryParallelism(kernel, tree, source, { lookup }),
    () => tooDeep(kernel),
  );
}

/**
 * The tree passes recurse over the syntax tree; code nested thousands of
 * levels deep (generated or half-typed) overflows the stack. That pass then
 * gives its fallback and the rest of the facts stand.
 */
export function withinStack<T>(run: () => T, fallback: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof RangeError && /call stack/i.test(error.message)) return fallback();
    throw error;
  }
}

function tooDeep(kernel: Kernel): MemoryParallelism {
  const reason = 'the body nests too deeply to follow';
  return {
    kernel: kernel.name,
    p: 0,
    loads: [],
    stop: kernel.bodySpan ? { span: kernel.bodySpan, reason } : null,
    reasoning: [`Counting stops: ${reason}.`],
    source: 'source',
  };
}
