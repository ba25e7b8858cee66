/** Which kernel a launch starts: by qualified name, then by its last component. */
import type { Kernel, Launch } from './types';

export function findKernelForLaunch(launch: Pick<Launch, 'kernelName'>, kernels: readonly Kernel[]): Kernel | null {
  const wanted = launch.kernelName.replace(/^::/, '');
  const byQualified = kernels.filter((k) => k.qualifiedName === wanted || k.qualifiedName.endsWith(`::${wanted}`));
  const base = wanted.split('::').pop() ?? wanted;
  const candidates = byQualified.length ? byQualified : kernels.filter((k) => k.name === base && !wanted.includes('::'));
  if (candidates.length === 0) return null;
  // A definition says more than a declaration; among several, the first that carries attributes.
  const definitions = candidates.filter((k) => k.isDefinition);
  const pool = definitions.length ? definitions : candidates;
  const names = new Set(pool.map((k) => k.qualifiedName));
  if (names.size > 1) return null; // ambiguous: the same name in two namespaces
  return pool.find((k) => k.launchBounds) ?? pool[0];
}

export function launchesOfKernel(kernel: Kernel, launches: readonly Launch[], kernels: readonly Kernel[]): Launch[] {
  return launches.filter((l) => findKernelForLaunch(l, kernels)?.qualifiedName === kernel.qualifiedName);
}
