/**
 * A worker thread of `check` (check-workers.ts starts it and says what to do): one tree-sitter
 * parser; first the index entries of the files it is handed, then the whole index the main
 * thread assembled from every worker's entries, then the analysis of the files it is handed, each
 * sent back as plain pieces of the output.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as path from 'node:path';
import { createAnalyzer, DEFAULT_REPORT_SETTINGS } from '../core/analyzer';
import { readGrammarBytes } from '../files/grammar-files';
import { toIndexPath } from '../files/workspace-files';
import { contentHash } from '../nvcc/compile-ptx';
import {
  analyseSource,
  checkedFile,
  checkFileOf,
  configureUnits,
  failedFile,
  includeDirsFromDatabase,
  indexFile,
  ownFailure,
  textsOf,
} from './check-analysis';
import type { FromWorker, ToWorker, WorkerInput } from './check-workers';

/** Tests only: the checked file whose analysis throws (`throw:NAME`) or ends the thread (`exit:NAME`). */
const FAIL_ON = process.env.CUDA_OCCUPANCY_TEST_WORKER_FAIL ?? '';

async function serve(port: NonNullable<typeof parentPort>, input: WorkerInput): Promise<void> {
  const post = (message: FromWorker) => port.postMessage(message);
  const analyzer = await createAnalyzer({
    grammar: readGrammarBytes(),
    indexKey: toIndexPath,
    contentHash,
    surface: 'cli',
  });
  const texts = textsOf(input.sources);
  // Entries are built apart from the analyzer's index, which gets the whole index in the files' order.
  const scratch = analyzer.index.emptyLike();
  const answer = (message: ToWorker): FromWorker => {
    switch (message.type) {
      case 'index':
        return {
          type: 'indexed',
          index: message.index,
          entry: indexFile(scratch, input.plan.files[message.index], texts),
        };
      case 'load':
        analyzer.index.load(message.entries);
        analyzer.index.setIncludeDirs(includeDirsFromDatabase(input.database));
        configureUnits(analyzer, {
          database: input.database,
          roots: input.roots,
          cwd: input.cwd,
          extraFlags: input.extraFlags,
          toolchain: input.toolchain,
        });
        analyzer.configure({ archs: input.archs, gpus: input.gpus, divergence: true, report: DEFAULT_REPORT_SETTINGS });
        if (input.log) {
          try {
            analyzer.setLog(input.log.name, input.log.text, input.log.producedAt);
          } catch (error) {
            return { type: 'usage', message: (error as Error).message };
          }
        }
        return { type: 'loaded' };
      case 'analyse': {
        const source = input.sources[message.index];
        const [mode, name] = FAIL_ON.split(':');
        if (name && path.basename(source.file) === name) {
          if (mode === 'exit') process.exit(3);
          throw new Error(`a test asked this file's analysis to fail`);
        }
        const result = ownFailure(() =>
          checkedFile(
            source.file,
            checkFileOf(analyzer, source.file, analyseSource(analyzer, source), input.cwd),
            input,
          ),
        );
        return { type: 'done', index: message.index, checked: result.value ?? failedFile(source.file, result.error!) };
      }
    }
  };
  port.on('message', (message: ToWorker) => {
    try {
      post(answer(message));
    } catch (error) {
      const index = message.type === 'load' ? -1 : message.index;
      const round = message.type === 'load' ? 'start' : message.type;
      post({ type: 'failed', index, round, message: (error as Error)?.message ?? String(error) });
    }
  });
  post({ type: 'ready' });
}

if (parentPort) {
  const port = parentPort;
  serve(port, workerData as WorkerInput).catch((error: unknown) =>
    port.postMessage({
      type: 'failed',
      index: -1,
      round: 'start',
      message: (error as Error)?.message ?? String(error),
    } satisfies FromWorker),
  );
}
