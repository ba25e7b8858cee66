/**
 * A compile that stops at a header nvcc cannot find (`fatal error: helper_cuda.h: No such file or
 * directory`) is run again with the folder where the workspace holds that header, when it holds
 * exactly one: what the programmer would add as `-I`. Only what the compiler itself could not find
 * is added, so a workspace file never shadows a header of the toolkit or the system (a vendored
 * `cuda_runtime.h` stand-in stays unread).
 */
import { dropShellWords } from './argument-policy';
import { compileResources, type CompileResourcesOptions, type CompileResourcesResult } from './compile-resources';

/** Headers found this way per compile, at most: each one costs a compile that fails early. */
const MAX_FOUND = 4;

/** The header a failed compile could not open, as its `#include` wrote it, or null. */
export function missingHeader(message: string | null | undefined): string | null {
  if (!message) return null;
  const m =
    /(?:fatal error: )?([^\s:"]+\.\w+): No such file or directory/.exec(message) ??
    /cannot open source file "([^"]+)"/.exec(message);
  return m ? m[1] : null;
}

export interface FoundIncludesResult {
  result: CompileResourcesResult;
  /** The `-I` folders added, in order. */
  added: string[];
}

/**
 * `compileResources`, run again while it fails on a missing header that `locate` finds (the folder to
 * add, or null). The folders pass the shell rule of the workspace's own settings.
 */
export async function compileFindingIncludes(
  options: CompileResourcesOptions,
  locate: (header: string) => string | null,
): Promise<FoundIncludesResult> {
  const added: string[] = [];
  let result = await compileResources(options);
  while (result.status === 'failed' && added.length < MAX_FOUND) {
    const header = missingHeader(result.firstError?.message ?? result.firstError?.text);
    const dir = header ? locate(header) : null;
    if (!dir || added.includes(dir)) break;
    const flag = dropShellWords(['-I', dir], 'workspace settings').args;
    if (flag.length === 0) break;
    added.push(dir);
    result = await compileResources({
      ...options,
      flags: [...(options.flags ?? []), ...added.flatMap((d) => ['-I', d])],
    });
  }
  return { result, added };
}

/** `flags` with the folders earlier compiles of the file found (see compileFindingIncludes) searched last. */
export function withFoundFolders(flags: readonly string[], folders: readonly string[] | undefined): string[] {
  return [...flags, ...(folders ?? []).flatMap((dir) => ['-I', dir])];
}
