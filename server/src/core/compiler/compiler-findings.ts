/**
 * Findings from what ptxas said about a file's kernels: spills, a
 * `__launch_bounds__` or `__maxnreg__` it could not meet, too much shared
 * memory, and launches in view that the compiled registers make impossible.
 */
import type { Finding, Kernel } from '../types';
import type { PtxasDiagnostic } from './ptxas-output';
import type { KernelResources } from './kernel-resources';
import type { LaunchAnalysis } from '../report/launch-analysis';
import { demangle } from './demangle';

export function compilerFindings(
  kernels: ReadonlyArray<KernelResources<Kernel>>,
  diagnostics: readonly PtxasDiagnostic[],
): Finding[] {
  const findings: Finding[] = [];
  for (const { kernel, instances } of kernels) {
    for (const instance of instances) {
      const spilling = Object.entries(instance.resources).filter(
        ([, f]) => (f.spillStoreBytes ?? 0) > 0 || (f.spillLoadBytes ?? 0) > 0,
      );
      if (spilling.length === 0) continue;
      const [, f] = spilling[0];
      const name = instance.signature ?? kernel.qualifiedName;
      findings.push({
        code: 'register-spill',
        severity: 'warning',
        message: `${name} spills registers to local memory on ${spilling.map(([a]) => a).join(', ')}: ${f.spillStoreBytes} B spill stores, ${f.spillLoadBytes} B spill loads per thread (ptxas). Spilled values go through L1 and DRAM; a looser register cap or fewer live values avoids it.`,
        span: kernel.nameSpan,
        related: [],
      });
    }
  }
  for (const d of diagnostics) {
    if (
      ![
        'launch-bounds-ignored',
        'register-limit-adjusted',
        'register-limit-ignored',
        'too-much-shared',
        'too-much-resource',
      ].includes(d.kind)
    )
      continue;
    const kernel = kernelNamed(kernels, d.mangledName);
    if (!kernel) continue;
    findings.push({
      code:
        d.kind === 'too-much-shared' || d.kind === 'too-much-resource'
          ? 'kernel-too-many-resources'
          : 'launch-bounds-unmet',
      severity: d.severity === 'error' || d.kind.startsWith('too-much') ? 'error' : 'warning',
      message: `ptxas${d.arch ? ` (${d.arch})` : ''}: ${d.message}`,
      span: kernel.launchBounds?.span ?? kernel.nameSpan,
      related: [],
    });
  }
  return findings;
}

/** A launch whose kernel cannot run at all at its block size with the compiled registers (`too many resources requested for launch`). */
export function impossibleLaunchFindings(analyses: readonly LaunchAnalysis[]): Finding[] {
  const findings: Finding[] = [];
  for (const a of analyses) {
    const none = a.perArch.filter(
      (p) => p.result && p.result.activeBlocksPerMultiprocessor === 0 && p.figures.source !== 'unknown',
    );
    if (none.length === 0 || a.threadsPerBlock === null || a.threadsPerBlock > 1024) continue;
    const p = none[0];
    const why =
      p.result!.blockLimitRegs === 0
        ? `${p.figures.numRegs} registers per thread × ${a.threadsPerBlock} threads exceed the register file`
        : p.result!.blockLimitSharedMem === 0
          ? 'the block needs more shared memory than one SM allows'
          : 'no block fits on one SM';
    findings.push({
      code: 'launch-too-many-resources',
      severity: 'error',
      message: `${a.launch.kernelName} cannot launch with ${a.threadsPerBlock} threads per block on ${none.map((x) => x.arch).join(', ')}: ${why} (${p.figures.source}). The launch fails with "too many resources requested for launch".`,
      span: a.launch.span,
      related: [],
    });
  }
  return findings;
}

function kernelNamed(kernels: ReadonlyArray<KernelResources<Kernel>>, mangled: string | null): Kernel | null {
  if (!mangled) return null;
  for (const k of kernels) if (k.instances.some((i) => i.mangledName === mangled)) return k.kernel;
  const plain = demangle(mangled)?.scopedName ?? mangled;
  return kernels.find((k) => k.kernel.qualifiedName === plain || k.kernel.name === plain)?.kernel ?? null;
}
