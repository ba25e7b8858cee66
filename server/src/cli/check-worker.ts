/**
 * A worker thread of `check` (check-workers.ts starts them): one tree-sitter parser, the whole
 * workspace index built as the main thread would build it, then the files it is handed one at a
 * time, each sent back as plain pieces of the output.
 */
import { parentPort, workerData } from 'node:worker_threads';
import * as path from 'node:path';
import { createAnalyzer, DEFAULT_REPORT_SETTINGS } from '../core/analyzer';
import { readGrammarBytes } from '../files/grammar-files';
import { toIndexPath } from '../files/workspace-files';
import { contentHash } from '../nvcc/compile-ptx';
import { analyseSource, checkedFile, checkFileOf, indexSources } from './check-analysis';
import type { FromWorker, ToWorker, WorkerInput } from './check-workers';

/** Tests only: the file whose analysis throws (`throw:NAME`) or ends the thread (`exit:NAME`). */
const FAIL_ON = process.env.CUDA_OCCUPANCY_TEST_WORKER_FAIL ?? '';

async function serve(port: NonNullable<typeof parentPort>, input: WorkerInput): Promise<void> {
  const post = (message: FromWorker) => port.postMessage(message);
  const analyzer = await createAnalyzer({
    grammar: readGrammarBytes(),
    indexKey: toIndexPath,
    contentHash,
    surface: 'cli',
  });
  indexSources(analyzer.index, input);
  analyzer.configure({ archs: input.archs, gpus: input.gpus, divergence: true, report: DEFAULT_REPORT_SETTINGS });
  if (input.log) {
    try {
      analyzer.setLog(input.log.name, input.log.text, input.log.producedAt);
    } catch (error) {
      post({ type: 'usage', message: (error as Error).message });
      return;
    }
  }
  port.on('message', (message: ToWorker) => {
    const source = input.sources[message.index];
    try {
      const [mode, name] = FAIL_ON.split(':');
      if (name && path.basename(source.file) === name) {
        if (mode === 'exit') process.exit(3);
        throw new Error(`a test asked this file's analysis to fail`);
      }
      const facts = analyseSource(analyzer, source);
      const checked = checkedFile(source.file, checkFileOf(analyzer, source.file, facts, input.cwd), input);
      post({ type: 'done', index: message.index, checked });
    } catch (error) {
      post({ type: 'failed', index: message.index, message: (error as Error)?.message ?? String(error) });
    }
  });
  post({ type: 'ready' });
}

if (parentPort) {
  const port = parentPort;
  serve(port, workerData as WorkerInput).catch((error: unknown) =>
    port.postMessage({ type: 'failed', index: -1, message: (error as Error)?.message ?? String(error) }),
  );
}
