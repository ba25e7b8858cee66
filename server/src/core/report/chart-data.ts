/**
 * The body of the `cudaOccupancy/chartData` request: picks the architecture and the
 * figures to chart for one kernel (and the launch the lens sits on), says what had to
 * be assumed, and asks the core for the three sweeps. Pure: the server passes what it
 * already knows (the figures callback reads its stored ptxas/log/annotation figures).
 */
import { archName, parseArch } from '../gpu/arch-table';
import { needsOptIn, occupancyFor, type FiguresFor, type KernelFigures } from './launch-analysis';
import type { DocumentReport } from './document-report';
import { maxPotentialBlockSize } from '../gpu/occupancy';
import { occupancyChartData, type ChartData } from '../gpu/occupancy-sweeps';
import { figuresLine } from './launch-report';
import { bytes } from './format';
import { wavesChart } from '../gpu/waves';

export interface ChartRequestInput {
  /** The kernel's name as shown (`ns::reduce`). */
  kernel: string;
  /** The target architectures (settings, compile_commands.json, CMake or the default), in order. */
  archs: readonly string[];
  /** The architecture the chart asks for (its picker); absent: the first target with register figures. */
  arch?: string;
  /** The kernel's figures on an architecture (for the launch charted, when there is one). */
  figuresFor: (arch: string) => KernelFigures;
  /** Threads per block of the launch charted; null: no launch with a static block size (the occupancy API's suggestion is charted). */
  threadsPerBlock: number | null;
  /** Dynamic shared memory of that launch; null: not known statically (0 is charted). */
  dynamicSmemBytes: number | null;
  /** Static `__shared__` bytes computed from the source, used when the figures carry none. */
  staticSharedBytes?: number | null;
  /** `__launch_bounds__` maximum threads, the ceiling of a suggested block size. */
  launchBoundsMaxThreads?: number | null;
  /** For "2 min ago" in the figures line. */
  now?: number;
}

const known = (f: KernelFigures): boolean => f.source !== 'unknown' && f.numRegs !== null;

/** The chart for a kernel, or null when no architecture has register figures for it (nothing to chart without claiming numbers). */
export function chartDataFor(input: ChartRequestInput): ChartData | null {
  const targets = input.archs
    .map((a) => parseArch(a))
    .filter((r) => r !== undefined)
    .map(archName);
  const notes: string[] = [];
  const requested = input.arch !== undefined ? parseArch(input.arch) : undefined;
  if (input.arch !== undefined && !requested) notes.push(`Unknown architecture \`${input.arch}\`.`);
  const withFigures = targets.find((a) => known(input.figuresFor(a)));
  const arch = requested ? archName(requested) : (withFigures ?? targets[0]);
  if (arch === undefined) return null;

  let figures = input.figuresFor(arch);
  let figuresArch = arch;
  if (!known(figures)) {
    if (withFigures === undefined) return null;
    figures = input.figuresFor(withFigures);
    figuresArch = withFigures;
    notes.push(
      `No register figures for ${arch}${targets.includes(arch) ? '' : ' (not a target architecture, so not compiled for it)'}: charted with the ${withFigures} figures.`,
    );
  }
  const row = parseArch(arch)!;
  const numRegs = figures.numRegs!;
  const sharedSizeBytes = figures.sharedSizeBytes ?? input.staticSharedBytes ?? 0;
  const numBlockBarriers = figures.barriers ?? undefined;

  const dynamicSmemBytes = input.dynamicSmemBytes ?? 0;
  if (input.dynamicSmemBytes === null)
    notes.push("The launch's dynamic shared memory is not known statically: charted with 0 bytes.");

  let blockSize = input.threadsPerBlock;
  if (blockSize === null) {
    const suggested = maxPotentialBlockSize({
      device: row.device,
      numRegs,
      sharedSizeBytes,
      dynamicSmemBytes,
      maxThreadsPerBlock: input.launchBoundsMaxThreads ?? 0,
      shmemLimitConfig: needsOptIn(row, sharedSizeBytes, dynamicSmemBytes) ? 'optin' : 'default',
      numBlockBarriers: numBlockBarriers === undefined ? 1 : Math.max(numBlockBarriers, 1),
    });
    blockSize =
      suggested.ok && suggested.value.blockSize > 0 ? suggested.value.blockSize : input.launchBoundsMaxThreads || 256;
    notes.push(
      suggested.ok && suggested.value.blockSize > 0
        ? `No launch with a static block size: charted at ${blockSize} threads, the block size with the most resident threads (as cudaOccupancyMaxPotentialBlockSize picks it).`
        : `No launch with a static block size, and no block size can run: charted at ${blockSize} threads.`,
    );
  }

  const source = figuresLine(
    [occupancyFor(figuresArch, { ...figures, sharedSizeBytes }, null, 0, null)],
    null,
    input.now,
  );
  const smemNote = dynamicSmemBytes > 0 ? ` + ${bytes(dynamicSmemBytes)} dynamic smem` : '';
  return occupancyChartData({
    arch,
    blockSize,
    numRegs,
    sharedSizeBytes,
    dynamicSmemBytes,
    numBlockBarriers,
    source: `${source}${smemNote}`,
    kernel: input.kernel,
    targets,
    notes,
  });
}

/**
 * The chart a lens or the chart panel asks for: the kernel named (or the one at or above `line`)
 * and the launch on `line` (or the kernel's first launch with a known block size).
 */
export function chartForTarget(
  report: DocumentReport,
  target: { kernel: string; line: number; arch?: string },
  figuresFor: FiguresFor,
): ChartData | null {
  const kernel =
    report.facts.kernels.find((k) => k.qualifiedName === target.kernel) ??
    [...report.facts.kernels].reverse().find((k) => k.span.start.line <= target.line) ??
    null;
  const launch =
    report.analyses.find((a) => a.launch.span.start.line === target.line && a.kernel) ??
    (kernel ? report.byKernel.get(kernel)?.find((a) => a.threadsPerBlock !== null) : undefined);
  const charted = kernel ?? launch?.kernel ?? null;
  if (!charted) return null;
  const data = chartDataFor({
    kernel: charted.qualifiedName,
    archs: report.archs,
    arch: target.arch,
    figuresFor: (arch) =>
      figuresFor(charted, launch?.launch ?? null, arch, launch?.site ?? { kernelPath: report.path, unit: report.path }),
    threadsPerBlock: launch?.threadsPerBlock ?? null,
    dynamicSmemBytes: launch?.dynamicSmemBytes ?? null,
    staticSharedBytes: charted.staticSharedBytes,
    launchBoundsMaxThreads:
      launch?.launchBounds?.maxThreadsPerBlock ?? charted.launchBounds?.maxThreadsPerBlock ?? null,
  });
  if (!data || !launch) return data;
  // A grid of ceil(n / b) blocks: its waves on the charted architecture's first named part.
  const onPart = report.gpus[report.analyses.indexOf(launch)]?.find((g) => g.perElement && g.arch === data.arch);
  const waves = onPart?.perElement
    ? wavesChart({
        part: onPart.part.name,
        variable: onPart.perElement.variable,
        perBlock: onPart.perElement.perBlock,
        blocksPerSm: onPart.blocksPerSm,
        sms: onPart.part.sms,
      })
    : null;
  return { ...data, waves };
}
