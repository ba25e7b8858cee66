/**
 * `cuda-occupancy`: the command-line face of the core.
 *   cuda-occupancy check FILE_OR_DIR...   analyse sources (text, json)
 *   cuda-occupancy calc --arch sm_90 ...  the occupancy calculator (--json, --jsonl)
 *   cuda-occupancy merge FILE...          the outputs of check --shard runs joined
 * Exit status: 0 ok, 1 findings at or above --fail-on, 2 bad usage or unreadable input.
 */
import { processIO, UsageError, type CliIO } from './cli-io';
import { checkCommand, CHECK_USAGE } from './check-command';
import { calcCommand } from './calc-command';
import { baselineCommand, BASELINE_USAGE } from './baseline-command';
import { mergeCommand, MERGE_USAGE } from './merge-command';
import { VERSION } from '../version';
import { endRunsWithProcess } from '../nvcc/nvcc-runner';

const USAGE = `usage: cuda-occupancy <command> [options]

commands:
  check FILE_OR_DIR...   kernels, launches, occupancy and findings
  calc                   occupancy of one configuration (--jsonl: the oracle's protocol on stdin)
  baseline write FILE    record registers, spills and occupancy, for check --baseline FILE
  merge FILE...          join the JSON, SARIF or baselines of check --shard K/N runs into one

${CHECK_USAGE}
${BASELINE_USAGE}
${MERGE_USAGE}
usage: cuda-occupancy calc --arch sm_90 --block 256 --regs 64 [--smem 4096] [--dyn-smem 0] [--carveout -1] [--optin] [--barriers 1] [--json | --jsonl]
`;

export async function main(argv: string[], io: CliIO): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'check':
        return await checkCommand(rest, io);
      case 'calc':
        return await calcCommand(rest, io);
      case 'baseline':
        return await baselineCommand(rest, io);
      case 'merge':
        return await mergeCommand(rest, io);
      case '--version':
      case 'version':
        io.out(`cuda-occupancy ${VERSION}\n`);
        return 0;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)} (try: check, calc, baseline, merge, --help)`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`cuda-occupancy: ${error.message.split('\n')[0]}\n`);
      return 2;
    }
    io.err(`cuda-occupancy: internal error: ${error instanceof Error ? error.message : String(error)}\n`);
    if (process.env.CUDA_OCCUPANCY_DEBUG) io.err(`${error instanceof Error ? error.stack : ''}\n`);
    return 2;
  }
}

if (require.main === module) {
  // Ctrl-C, a kill or an uncaught error ends the compiles in flight too (their processes and temporary directories).
  endRunsWithProcess({
    uncaughtExitCode: 2,
    onUncaught: (error) => process.stderr.write(`cuda-occupancy: internal error: ${String(error)}\n`),
  });
  main(process.argv.slice(2), processIO()).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`cuda-occupancy: internal error: ${String(error)}\n`);
      process.exitCode = 2;
    },
  );
}
