/**
 * The server's fresh parses on a worker thread (the bundled dist/server/fresh-parse-thread.js): the
 * shape of a fresh parse of each document's latest version asked for, and, when the thread cannot
 * run, null (the server then parses on its own thread) with one message.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { FreshParses } from '../../server/src/lsp/fresh-parses';
import { treeShape } from '../../server/src/core/syntax/cuda-parser';
import { getCudaParser } from '../support/grammar';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(ROOT, 'dist', 'server', 'fresh-parse-thread.js');
const TEXT = readFileSync(path.join(ROOT, 'test', 'fixtures', 'incremental', 'parse-error.cu'), 'utf8');

async function shapeHere(text: string): Promise<string> {
  const tree = (await getCudaParser()).parse(text);
  try {
    return treeShape(tree);
  } finally {
    tree.delete();
  }
}

describe('fresh parses on a worker thread', function () {
  this.timeout(20000);

  it('gives the shape of a fresh parse of the latest version asked for, one document at a time', async () => {
    const answers: Array<[string, number, string | null]> = [];
    const logs: string[] = [];
    let done: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const parses = new FreshParses({
      script: SCRIPT,
      log: (m) => logs.push(m),
      onShape: (uri, version, shape) => {
        answers.push([uri, version, shape]);
        if (answers.length === 2) done();
      },
    });
    try {
      parses.request('file:///a.cu', 1, TEXT);
      // While a.cu's first version is parsed: b.cu's version 1 is replaced by its version 2.
      parses.request('file:///b.cu', 1, 'int x;');
      parses.request('file:///b.cu', 2, `${TEXT}\n// more\n`);
      await finished;
      assert.deepEqual(logs, []);
      assert.deepEqual(answers, [
        ['file:///a.cu', 1, await shapeHere(TEXT)],
        ['file:///b.cu', 2, await shapeHere(`${TEXT}\n// more\n`)],
      ]);
    } finally {
      parses.dispose();
    }
  });

  it('answers null, and says so once, when the thread cannot run', async () => {
    const answers: Array<string | null> = [];
    const logs: string[] = [];
    let done: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const parses = new FreshParses({
      script: path.join(ROOT, 'no-such-thread.js'),
      log: (m) => logs.push(m),
      onShape: (_uri, _version, shape) => {
        answers.push(shape);
        if (answers.length === 2) done();
      },
    });
    try {
      parses.request('file:///a.cu', 1, TEXT);
      parses.request('file:///b.cu', 1, TEXT);
      await finished;
      assert.deepEqual(answers, [null, null]);
      assert.equal(logs.length, 1);
      assert.match(logs[0], /fresh parse thread .*incremental parses near errors are checked on the server's thread/);
    } finally {
      parses.dispose();
    }
  });
});
