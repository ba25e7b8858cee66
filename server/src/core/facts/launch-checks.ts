/**
 * Findings about launches that need no compiler: more threads than the
 * kernel's `__launch_bounds__`, block shapes the hardware rejects, blocks that
 * leave lanes of their last warp idle, dynamic shared memory that needs an
 * opt-in or exceeds the architecture's maximum, launches whose kernel or
 * values cannot be known. Plain `Finding`s with stable codes.
 */
import type { Finding, Kernel, Launch, LaunchBounds, RelatedLocation, SmemOptIn } from '../types';
import { oneLineOfCode } from '../text/one-line';

export const LAUNCH_CHECK_CODES = {
  exceedsBounds: 'launch-exceeds-bounds',
  blockTooLarge: 'block-too-large',
  notWarpMultiple: 'block-not-warp-multiple',
  smemNeedsOptIn: 'dynamic-smem-needs-opt-in',
  smemOverLimit: 'dynamic-smem-over-limit',
  unresolvedKernel: 'launch-unresolved-kernel',
} as const;

/** Without `cudaFuncAttributeMaxDynamicSharedMemorySize`, a block gets at most 48 KB of shared memory. */
export const DEFAULT_SMEM_LIMIT_BYTES = 48 * 1024;
export const MAX_THREADS_PER_BLOCK = 1024;
export const MAX_BLOCK_DIM = { x: 1024, y: 1024, z: 64 } as const;
const WARP = 32;

/** One target architecture's opt-in maximum of shared memory per block (`sharedMemPerBlockOptin`). */
export interface ArchSmemLimit {
  arch: string;
  maxOptInSmemBytes: number;
}

/** What the launch starts, as the caller resolved it (see WorkspaceIndex.findKernel / launchBoundsFor). */
export interface LaunchTarget {
  kernel: Kernel | null;
  /** The index path of the file holding the kernel's `__launch_bounds__` (for related information), or null for this document. */
  kernelUri: string | null;
  /** The kernel's launch bounds resolved for this launch's template arguments. */
  launchBounds: LaunchBounds | null;
  /**
   * The index path of the file the kernel is written in (its definition's when the workspace knows
   * it), or null with no kernel: whose compiled figures the launch reads.
   */
  kernelPath?: string | null;
  /** How the kernel was found, or why not. */
  note: string;
  /** The kernel is a parameter of the function the launch is in (a wrapper): each call's launch is read at the call. */
  parametric?: boolean;
}

export interface LaunchCheckInput {
  launch: Launch;
  target: LaunchTarget;
  /** The opt-in calls in view (this file and its includes). */
  smemOptIns: readonly SmemOptIn[];
  /** Target architectures; without them the over-limit check is skipped. */
  archs?: readonly ArchSmemLimit[];
}

export function checkLaunch({ launch, target, smemOptIns, archs = [] }: LaunchCheckInput): Finding[] {
  const findings: Finding[] = [];
  const name = displayName(launch);
  if (!target.kernel && !target.parametric) {
    findings.push({
      code: LAUNCH_CHECK_CODES.unresolvedKernel,
      severity: 'info',
      message: `Cannot tell which kernel this launch of ${name} starts (${target.note}); its launch bounds and resources are not checked.`,
      span: launch.nameSpan,
      related: [],
    });
  }
  const block = launch.block.value;
  if (block) {
    const threads = block.x * block.y * block.z;
    const tooLarge: string[] = [];
    if (threads > MAX_THREADS_PER_BLOCK)
      tooLarge.push(`${threads} threads per block (at most ${MAX_THREADS_PER_BLOCK})`);
    for (const axis of ['x', 'y', 'z'] as const)
      if (block[axis] > MAX_BLOCK_DIM[axis])
        tooLarge.push(`block.${axis} = ${block[axis]} (at most ${MAX_BLOCK_DIM[axis]})`);
    if (tooLarge.length) {
      findings.push({
        code: LAUNCH_CHECK_CODES.blockTooLarge,
        severity: 'error',
        message: `${name} is launched with ${formatBlock(block)}: ${tooLarge.join(', ')}. Every CUDA GPU rejects this launch with cudaErrorInvalidConfiguration.`,
        span: launch.span,
        related: [],
      });
    }
    const max = target.launchBounds?.maxThreadsPerBlock ?? null;
    if (max !== null && threads > max && target.launchBounds) {
      findings.push({
        code: LAUNCH_CHECK_CODES.exceedsBounds,
        severity: 'error',
        message: `${name} is launched with ${threads} threads per block, but its \`${compact(target.launchBounds.text)}\` allows at most ${max}: this launch fails with cudaErrorInvalidValue / too many resources requested.`,
        span: launch.span,
        related: [
          {
            uri: target.kernelUri,
            span: target.launchBounds.span,
            message: `\`${compact(target.launchBounds.text)}\` of ${target.kernel?.name ?? name}`,
          },
        ],
      });
    }
    if (threads > 0 && threads % WARP !== 0 && threads <= MAX_THREADS_PER_BLOCK) {
      const used = threads % WARP;
      const warps = Math.ceil(threads / WARP);
      const down = threads - used;
      const up = down + WARP;
      const suggestion = down > 0 ? `${down} or ${up}` : `${up}`;
      findings.push({
        code: LAUNCH_CHECK_CODES.notWarpMultiple,
        severity: threads < WARP ? 'info' : 'warning',
        message: `${name} is launched with ${threads} thread${threads === 1 ? '' : 's'} per block (${warps} warp${warps === 1 ? '' : 's'}): the last warp runs with ${used} of 32 lanes, ${WARP - used} idle. A multiple of 32 (${suggestion}) uses every lane.`,
        span: launch.span,
        related: [],
      });
    }
  }
  findings.push(...checkSharedMemory(launch, target, smemOptIns, archs));
  return findings;
}

/** Launches a line lists at most by name in one joined finding (a macro's use may write a dozen). */
const MAX_LISTED = 6;

/**
 * One `block-not-warp-multiple` finding per place: a macro's use (or a wrapper's call) that launches
 * a kernel at several block sizes says so once, listing each, instead of once per launch. `findings`
 * are each launch's, in the launches' order.
 */
export function joinWarpMultipleFindings(launches: readonly Launch[], findings: readonly Finding[][]): Finding[] {
  const byPlace = new Map<string, Array<{ launch: Launch; finding: Finding }>>();
  launches.forEach((launch, k) => {
    for (const finding of findings[k]) {
      if (finding.code !== LAUNCH_CHECK_CODES.notWarpMultiple) continue;
      const s = finding.span;
      const key = `${s.start.line}:${s.start.character}:${s.end.line}:${s.end.character}`;
      const group = byPlace.get(key) ?? [];
      group.push({ launch, finding });
      byPlace.set(key, group);
    }
  });
  const out: Finding[] = [];
  const said = new Set<Finding>();
  findings.forEach((list) => {
    for (const finding of list) {
      if (finding.code !== LAUNCH_CHECK_CODES.notWarpMultiple) {
        out.push(finding);
        continue;
      }
      if (said.has(finding)) continue;
      const s = finding.span;
      const group = byPlace.get(`${s.start.line}:${s.start.character}:${s.end.line}:${s.end.character}`)!;
      for (const g of group) said.add(g.finding);
      out.push(group.length === 1 ? finding : joined(group));
    }
  });
  return out;
}

function joined(group: ReadonlyArray<{ launch: Launch; finding: Finding }>): Finding {
  const items: string[] = [];
  for (const { launch } of group) {
    const b = launch.block.value!;
    const threads = b.x * b.y * b.z;
    const item = `${displayName(launch)} with ${threads} (${WARP - (threads % WARP)} idle)`;
    if (!items.includes(item)) items.push(item);
  }
  const listed = items.slice(0, MAX_LISTED).join(', ');
  const more = items.length > MAX_LISTED ? `, and ${items.length - MAX_LISTED} more` : '';
  return {
    ...group[0].finding,
    severity: group.some((g) => g.finding.severity === 'warning') ? 'warning' : group[0].finding.severity,
    message: `${items.length} launches here have blocks that are not a multiple of 32 threads, so the last warp of each runs with lanes idle: ${listed}${more}. A multiple of 32 uses every lane.`,
  };
}

function checkSharedMemory(
  launch: Launch,
  target: LaunchTarget,
  smemOptIns: readonly SmemOptIn[],
  archs: readonly ArchSmemLimit[],
): Finding[] {
  const dynamic = launch.dynamicSmem.value;
  if (dynamic === null || dynamic <= 0) return [];
  const name = displayName(launch);
  const staticBytes = target.kernel?.staticSharedBytes ?? 0;
  const total = dynamic + staticBytes;
  const withStatic = staticBytes > 0 ? ` plus ${formatBytes(staticBytes)} static` : '';
  const findings: Finding[] = [];
  const over = archs.filter((a) => total > a.maxOptInSmemBytes);
  if (over.length) {
    findings.push({
      code: LAUNCH_CHECK_CODES.smemOverLimit,
      severity: 'error',
      message: `${name} asks for ${formatBytes(dynamic)} of dynamic shared memory${withStatic}, more than a block can have on ${over.map((a) => `${a.arch} (${formatBytes(a.maxOptInSmemBytes)})`).join(', ')} even with the opt-in: this launch fails there.`,
      span: launch.span,
      related: [],
    });
  }
  if (total > DEFAULT_SMEM_LIMIT_BYTES) {
    const optIns = smemOptIns.filter((o) => sameKernel(o, launch));
    const sufficient = optIns.some((o) => o.bytes.value === null || o.bytes.value >= dynamic);
    if (!sufficient) {
      const related: RelatedLocation[] = optIns.map((o) => ({
        uri: null,
        span: o.span,
        message: `opts in to ${formatBytes(o.bytes.value ?? 0)} only`,
      }));
      const kernelArg = launch.kernelName + (launch.templateArgs ? `<${launch.templateArgs.join(', ')}>` : '');
      findings.push({
        code: LAUNCH_CHECK_CODES.smemNeedsOptIn,
        severity: 'error',
        message: optIns.length
          ? `${name} asks for ${formatBytes(dynamic)} of dynamic shared memory${withStatic}, but cudaFuncSetAttribute raises its limit to ${formatBytes(Math.max(...optIns.map((o) => o.bytes.value ?? 0)))} only: this launch fails with cudaErrorInvalidValue.`
          : `${name} asks for ${formatBytes(dynamic)} of dynamic shared memory${withStatic}, above the 48 KB a block gets by default, and no \`cudaFuncSetAttribute(${kernelArg}, cudaFuncAttributeMaxDynamicSharedMemorySize, ${dynamic})\` is in view: this launch fails with cudaErrorInvalidValue.`,
        span: launch.span,
        related,
      });
    }
  }
  return findings;
}

function sameKernel(optIn: SmemOptIn, launch: Launch): boolean {
  if (optIn.kernelName === launch.kernelName) return true;
  const a = optIn.kernelName.split('::');
  const b = launch.kernelName.split('::');
  return a[a.length - 1] === b[b.length - 1] && (a.length === 1 || b.length === 1);
}

function displayName(launch: Launch): string {
  return launch.kernelName + (launch.templateArgs ? `<${launch.templateArgs.join(', ')}>` : '');
}

function formatBlock(block: { x: number; y: number; z: number }): string {
  return block.y === 1 && block.z === 1 ? `${block.x} threads per block` : `a ${block.x}×${block.y}×${block.z} block`;
}

function compact(text: string): string {
  return oneLineOfCode(text).replace(/\(\s+/g, '(').replace(/\s+\)/g, ')');
}

/** `1024 B`, `48 KB`, `100.5 KB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const kb = bytes / 1024;
  return `${Number.isInteger(kb) ? kb : kb.toFixed(1)} KB`;
}
