/**
 * `cuda-occupancy calc`: the occupancy calculator on the command line.
 *
 *   calc --arch sm_90 --block 256 --regs 64 [--smem 4096] [--dyn-smem 0] [--carveout -1]
 *        [--optin] [--barriers 1] [--ilp 1] [--latency CYCLES] [--json]
 *   calc --jsonl      (oracle protocol: one JSON query per stdin line, one answer per line)
 *
 * Text output: occupancy, active blocks and warps per SM, every block limit with the
 * binding ones marked, the next step (below 100%) and the latency-hiding estimate, the
 * bandwidth-bound reading first. `--json` prints the
 * same answer the oracle protocol gives for these flags, plus `nextStep` and `latency`.
 */

import * as readline from 'node:readline';
import { archName, parseArch, type ArchRow } from '../core/analyzer';
import { latencyHiding, type LatencyEstimate, type LatencyReading } from '../core/analyzer';
import { nextStep, type NextStep } from '../core/analyzer';
import { INT_MAX, type OccupancyQuery, type OccupancyResult } from '../core/analyzer';
import { answerQuery, answerQueryLine, isSkippedLine } from './oracle-protocol';
import { issueBoundMatters } from '../core/analyzer';
import { UsageError, type CliIO } from './cli-io';

interface CalcOptions {
  arch: ArchRow;
  archText: string;
  block: number;
  regs: number;
  smem: number;
  dynSmem: number;
  carveout: number;
  optin: boolean;
  barriers: number;
  ilp: number;
  latency: number | undefined;
  json: boolean;
}

const USAGE =
  'usage: cuda-occupancy calc --arch sm_90 --block 256 --regs 64 [--smem B] [--dyn-smem B] [--carveout -1..100] [--optin] [--barriers N] [--ilp P] [--latency CYCLES] [--json] | --jsonl';

const VALUE_FLAGS = new Set([
  '--arch',
  '--block',
  '--regs',
  '--smem',
  '--dyn-smem',
  '--carveout',
  '--barriers',
  '--ilp',
  '--latency',
]);
const SWITCHES = new Set(['--optin', '--json', '--jsonl']);

export async function calcCommand(args: string[], io: CliIO): Promise<number> {
  const flags = readFlags(args);
  if (flags.has('--jsonl')) {
    if (flags.size > 1)
      throw new UsageError('calc: --jsonl reads every setting from its input lines and takes no other flag');
    await answerLines(io);
    return 0;
  }
  const options = toOptions(flags);
  const answer = answerQuery(toProtocolQuery(options));
  if (answer.ok !== true) throw new UsageError(`calc: ${String(answer.error).replace(/^bad query: /, '')}`);
  const occ = answer as unknown as OccupancyResult;
  const step = nextStep(occupancyQueryOf(options));
  const latency = latencyHiding({
    arch: options.arch,
    warpsResident: occ.activeWarps,
    independentOpsPerWarp: options.ilp,
    latencyCycles: options.latency,
  });
  if (options.json) {
    io.out(`${JSON.stringify({ ...answer, nextStep: step, latency })}\n`);
  } else {
    io.out(formatText(options, occ, step, latency));
  }
  return 0;
}

/** `--jsonl`: the oracle protocol over stdin/stdout, one answer per query line, in order. */
async function answerLines(io: CliIO): Promise<void> {
  const lines = readline.createInterface({ input: io.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (isSkippedLine(line)) continue;
    io.out(`${JSON.stringify(answerQueryLine(line))}\n`);
  }
}

function readFlags(args: string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (SWITCHES.has(name)) {
      if (name !== arg) throw new UsageError(`calc: ${name} takes no value`);
      flags.set(name, '');
    } else if (VALUE_FLAGS.has(name)) {
      let value: string | undefined;
      if (name !== arg) value = arg.slice(eq + 1);
      else value = args[++i];
      if (value === undefined) throw new UsageError(`calc: ${name} needs a value`);
      flags.set(name, value);
    } else {
      throw new UsageError(`calc: unknown argument "${arg}" (${USAGE})`);
    }
  }
  return flags;
}

function intFlag(flags: Map<string, string>, name: string, dflt: number | undefined, lo: number, hi: number): number {
  const text = flags.get(name);
  if (text === undefined) {
    if (dflt === undefined) throw new UsageError(`calc: ${name} is required (${USAGE})`);
    return dflt;
  }
  if (!/^-?\d+$/.test(text.trim())) throw new UsageError(`calc: ${name} must be an integer, got "${text}"`);
  const value = Number(text);
  if (value < lo || value > hi) throw new UsageError(`calc: ${name} must be between ${lo} and ${hi}, got ${value}`);
  return value;
}

function toOptions(flags: Map<string, string>): CalcOptions {
  const archText = flags.get('--arch');
  if (archText === undefined) throw new UsageError(`calc: --arch is required (${USAGE})`);
  const arch = parseArch(archText);
  if (!arch)
    throw new UsageError(
      `calc: unknown architecture "${archText}" (use sm_50 ... sm_121, e.g. sm_90, 9.0, compute_90)`,
    );
  const ilpText = flags.get('--ilp');
  const ilp = ilpText === undefined ? 1 : Number(ilpText);
  if (!(ilp > 0) || !Number.isFinite(ilp))
    throw new UsageError(`calc: --ilp must be a positive number, got "${ilpText}"`);
  const latency = flags.has('--latency') ? intFlag(flags, '--latency', undefined, 1, 100000) : undefined;
  return {
    arch,
    archText,
    block: intFlag(flags, '--block', undefined, 1, 65536),
    regs: intFlag(flags, '--regs', undefined, 0, 65536),
    smem: intFlag(flags, '--smem', 0, 0, 2 ** 28),
    dynSmem: intFlag(flags, '--dyn-smem', 0, 0, 2 ** 28),
    carveout: intFlag(flags, '--carveout', -1, -1, 100),
    optin: flags.has('--optin'),
    barriers: intFlag(flags, '--barriers', 1, 0, 65536),
    ilp,
    latency,
    json: flags.has('--json'),
  };
}

/** The same query in the oracle protocol's words (the arch by name instead of its device properties). */
function toProtocolQuery(o: CalcOptions): Record<string, unknown> {
  const { device: _device, ...fields } = occupancyQueryOf(o);
  return { arch: archName(o.arch), ...fields };
}

function occupancyQueryOf(o: CalcOptions): OccupancyQuery {
  return {
    device: o.arch.device,
    blockSize: o.block,
    numRegs: o.regs,
    sharedSizeBytes: o.smem,
    dynamicSmemBytes: o.dynSmem,
    carveout: o.carveout,
    shmemLimitConfig: o.optin ? 'optin' : 'default',
    numBlockBarriers: o.barriers,
  };
}

// ---------------------------------------------------------------------------
// Text output
// ---------------------------------------------------------------------------

const percent = (x: number): string => `${Math.round(x * 1000) / 10}%`;
const limitText = (n: number): string => (n === INT_MAX ? 'no limit' : String(n));

function formatText(o: CalcOptions, r: OccupancyResult, step: NextStep, latency: LatencyEstimate): string {
  const lines: string[] = [];
  lines.push(
    `${archName(o.arch)} (${o.arch.family}): ${o.block} threads/block, ${o.regs} registers/thread, ` +
      `${o.smem} B static + ${o.dynSmem} B dynamic shared memory${o.optin ? ' (opt-in)' : ''}` +
      `${o.carveout >= 0 ? `, carveout ${o.carveout}%` : ''}`,
  );
  lines.push(`Occupancy: ${percent(r.occupancy)} (${r.activeWarps} of ${r.maxWarpsPerMultiprocessor} warps per SM)`);
  lines.push(
    `Active blocks per SM: ${r.activeBlocksPerMultiprocessor} (${r.warpsPerBlock} warp${r.warpsPerBlock === 1 ? '' : 's'} each)`,
  );
  lines.push('Block limits per SM:');
  const rows: Array<[string, number, string]> = [
    ['registers', r.blockLimitRegs, 'registers'],
    ['shared memory', r.blockLimitSharedMem, 'sharedMemory'],
    ['warps', r.blockLimitWarps, 'warps'],
    ['block slots', r.blockLimitBlocks, 'blocks'],
    ['barriers', r.blockLimitBarriers, 'barriers'],
    ['virtual resources', r.blockLimitVirtual, 'virtualResources'],
  ];
  for (const [label, value, factor] of rows) {
    const binding = r.limitingFactors.includes(factor as OccupancyResult['limitingFactors'][number]);
    lines.push(`  ${label.padEnd(18)}${limitText(value).padStart(9)}${binding ? '  <- binding' : ''}`);
  }
  lines.push(
    `Allocated per block: ${r.allocatedRegistersPerBlock} registers, ${r.allocatedSharedMemPerBlock} B shared memory`,
  );

  // At 100% there is no next occupancy level to reach.
  if (r.occupancy < 1) {
    lines.push(`Next step (for ${step.registers.targetBlocks} blocks per SM):`);
    const regs = step.registers.maxRegsPerThread;
    lines.push(
      `  registers: ${regs === null ? 'fewer registers alone do not get there' : `at most ${regs} per thread`}`,
    );
    const smem = step.sharedMemory.maxSharedMemPerBlock;
    lines.push(
      `  shared memory: ${smem === null ? 'less shared memory alone does not get there' : `at most ${smem} B per block (static + dynamic)`}`,
    );
    const b = step.blockSize;
    const sizes = [b.smaller, b.larger].filter((x) => x !== null).map((x) => `${x.blockSize} (${x.activeWarps} warps)`);
    lines.push(
      `  block size: ${sizes.length > 0 ? `nearest sizes with more warps: ${sizes.join(', ')}` : 'no block size gives more resident warps'}`,
    );
  }

  // The reading that decides first: bandwidth-bound, for a memory-bound kernel. Issue-bound (a
  // load on every instruction) is the upper bound, and says so, with whether an SM could hold it.
  const l = latency.bandwidthBound.assumptions;
  const p = l.independentOpsPerWarp;
  lines.push(
    `Latency hiding, Little's law W = ceil(L x r / p) (L = ${l.latencyCycles} cycles, p = ${p} independent load${p === 1 ? '' : 's'} per warp):`,
  );
  lines.push(
    `  bandwidth-bound: ${readingText(latency.bandwidthBound)} [${l.referencePart}]: what a memory-bound kernel needs to keep DRAM busy`,
  );
  const upper = issueBoundMatters(latency.issueBound, r.maxWarpsPerMultiprocessor)
    ? 'the upper bound, for a load on every instruction'
    : `the upper bound, for a load on every instruction: more than the ${r.maxWarpsPerMultiprocessor} warps an SM holds, so only ILP closes it`;
  lines.push(`  issue-bound:     ${readingText(latency.issueBound)}: ${upper}`);
  return `${lines.join('\n')}\n`;
}

function readingText(r: LatencyReading): string {
  const rate = Math.round(r.assumptions.rate * 1000) / 1000;
  return `needs ${r.warpsNeeded} warps (r = ${rate}/cycle), ${r.warpsResident} resident, ${percent(r.coveredFraction)} covered`;
}
