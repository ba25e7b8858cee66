/**
 * Recursion is bounded wherever input can nest (issue 34, case 4). A macro chain 1,000 deep (`#define M5 M4` ...)
 * used in a launch ended `check` with "Maximum call stack size exceeded", exit 2, for every file of the folder, and
 * stopped the server's workspace index. Each generated form below nests several thousand deep; `check` analyses
 * its folder, gives the number where it follows the chain to its end and unknown where it stops (never another
 * number), and prints every file. And when one file's analysis or indexing
 * throws all the same, that file gets one line and the others their whole output.
 */
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runCli } from '../support/cli-run';
import * as analyzerModule from '../../server/src/core/analyzer';
import { WorkspaceIndex } from '../../server/src/core/facts/workspace-index';
import { indexWorkspace } from '../../server/src/files/workspace-files';

const N = 3000;
const KERNEL = '__global__ void k(float* p) { p[threadIdx.x] = 1; }\n';
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);
const launch = (block: string) => `${KERNEL}void run(float* p) { k<<<1, ${block}>>>(p); }\n`;

/** Each form: its file's text, and the block size the launch line must show (a number, or the text as unknown). */
const FORMS: Record<string, { text: string; block: RegExp }> = {
  'an object-like macro chain': {
    text: `#define M0 32\n${range(1, N)
      .map((i) => `#define M${i} (M${i - 1})`)
      .join('\n')}\n${launch(`M${N}`)}`,
    block: /k: (?:32 threads|block size `M3000`[^\n]* not known statically)/,
  },
  'a chain of constants': {
    text: `const int c0 = 32;\n${range(1, N)
      .map((i) => `const int c${i} = c${i - 1} + 0;`)
      .join('\n')}\n${launch(`c${N}`)}`,
    block: /k: (?:32 threads|block size `c3000`[^\n]* not known statically)/,
  },
  'a chain of constexpr locals': {
    text: `${KERNEL}void run(float* p) {\n  constexpr int c0 = 32;\n${range(1, N)
      .map((i) => `  constexpr int c${i} = c${i - 1};`)
      .join('\n')}\n  k<<<1, c${N}>>>(p);\n}\n`,
    block: /k: (?:32 threads|block size `c3000`[^\n]* not known statically)/,
  },
  'a chain of enumerators': {
    text: `enum E { e0 = 32, ${range(1, N)
      .map((i) => `e${i} = e${i - 1}`)
      .join(', ')} };\n${launch(`e${N}`)}`,
    block: /launch line 3/,
  },
  'a chain of dim3 copies': {
    text: `${KERNEL}void run(float* p) {\n  dim3 b0(32);\n${range(1, 2000)
      .map((i) => `  dim3 b${i}(b${i - 1});`)
      .join('\n')}\n  k<<<1, b2000>>>(p);\n}\n`,
    block: /k: (?:32 threads|block size `b2000`[^\n]* not known statically)/,
  },
  'a dim3 made from itself': {
    text: `${KERNEL}void run(float* p) { dim3 a(a); k<<<1, a>>>(p); }\n`,
    block: /block size `a`[^\n]* not known statically/,
  },
  'two dim3s made from each other': {
    text: `${KERNEL}void run(float* p) { dim3 a(b); dim3 b(a); k<<<1, a>>>(p); }\n`,
    block: /block size `a`[^\n]* not known statically/,
  },
  'a chain of function-like macros': {
    text: `#define F0(x) (x)\n${range(1, N)
      .map((i) => `#define F${i}(x) F${i - 1}(x)`)
      .join('\n')}\n${launch(`F${N}(32)`)}`,
    block: /k: (?:32 threads|block size `F3000\(32\)`[^\n]* not known statically)/,
  },
  'nested parentheses': { text: launch(`${'('.repeat(N)}32${')'.repeat(N)}`), block: /not known statically/ },
  'nested macro calls': {
    text: `#define M(x) (x)\n${launch(`${'M('.repeat(N)}32${')'.repeat(N)}`)}`,
    block: /not known statically/,
  },
  'a __launch_bounds__ macro chain': {
    text: `#define B0 32\n${range(1, N)
      .map((i) => `#define B${i} (B${i - 1})`)
      .join(
        '\n',
      )}\n__global__ void __launch_bounds__(B${N}) k(float* p) { p[0] = 1; }\nvoid run(float* p) { k<<<1, 32>>>(p); }\n`,
    block: /32 threads/,
  },
  'a chain of device functions': {
    text: `__device__ int f0(int x) { return x; }\n${range(1, N)
      .map((i) => `__device__ int f${i}(int x) { return f${i - 1}(x); }`)
      .join(
        '\n',
      )}\n__global__ void k(float* p) { if (f${N}(threadIdx.x) > 3) p[0] = 1; }\nvoid run(float* p) { k<<<1, 32>>>(p); }\n`,
    block: /32 threads/,
  },
  'nested blocks': {
    text: `__global__ void k(float* p) { ${'{'.repeat(N)}p[threadIdx.x] = 1;${'}'.repeat(N)} }\nvoid run(float* p) { k<<<1, 32>>>(p); }\n`,
    block: /32 threads/,
  },
  'nested ifs': {
    text: `__global__ void k(float* p) { ${'if (threadIdx.x > 1) '.repeat(N)}p[0] = 1; }\nvoid run(float* p) { k<<<1, 32>>>(p); }\n`,
    block: /32 threads/,
  },
  'a nested expression': {
    text: `__global__ void k(float* p) { int i = threadIdx.x; p[i] = ${'(i + '.repeat(N)}1${')'.repeat(N)}; }\nvoid run(float* p) { k<<<1, 32>>>(p); }\n`,
    block: /32 threads/,
  },
};

describe('input nested thousands deep', function () {
  this.timeout(120_000);
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cuda-occ-deep-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  for (const [name, form] of Object.entries(FORMS)) {
    it(`analyses ${name}, unknown where it must be, without exceeding the stack`, async () => {
      const dir = path.join(root, name.replace(/\W+/g, '-'));
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'deep.cu'), form.text);
      writeFileSync(path.join(dir, 'plain.cu'), launch('128'));
      const run = await runCli(['check', '--no-nvcc', '--verbose', '--fail-on', 'never', dir], root);
      assert.equal(run.code, 0, run.err);
      assert.doesNotMatch(run.err, /internal error|not analysed/);
      assert.match(run.out, /deep\.cu: 1 kernel, 1 launch/);
      assert.match(run.out, form.block);
      assert.match(run.out, /plain\.cu: 1 kernel, 1 launch\n[^]*128 threads/);
    });
  }

  it('reads 40,000 nested parentheses, one a line, in time linear in their number', async () => {
    // Stripping one pair at a time took 17 s here; one pass takes about one.
    const dir = path.join(root, 'parentheses-over-lines');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'deep.cu'), launch(`${'(\n'.repeat(40_000)}32${')\n'.repeat(40_000)}`));
    const started = Date.now();
    const run = await runCli(['check', '--no-nvcc', '--verbose', '--fail-on', 'never', dir], root);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /deep\.cu: 1 kernel, 1 launch/);
    assert.ok(Date.now() - started < 8000, `took ${Date.now() - started} ms`);
  });

  it('indexes a chain of 3,000 headers, each including the next, and reads the constant through it as unknown', async () => {
    const dir = path.join(root, 'include-chain');
    mkdirSync(dir);
    for (const i of range(0, N - 1))
      writeFileSync(path.join(dir, `h${i}.cuh`), `#include "h${i + 1}.cuh"\nconst int H${i} = H${i + 1};\n`);
    writeFileSync(path.join(dir, `h${N}.cuh`), 'const int H3000 = 32;\n');
    writeFileSync(path.join(dir, 'main.cu'), `#include "h0.cuh"\n${launch('H0')}`);
    const run = await runCli(['check', '--no-nvcc', '--fail-on', 'never', path.join(dir, 'main.cu')], root);
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, /block size `H0` not known statically/);
  });

  describe("one file's failure is that file's", () => {
    let restore: () => void;
    afterEach(() => restore?.());

    /** Makes the analyzer `check` creates throw for `bad.cu` (`where`: its analysis, or its indexing). */
    function failFor(where: 'analysis' | 'index'): void {
      const original = analyzerModule.createAnalyzer;
      const module = analyzerModule as { createAnalyzer: typeof original };
      module.createAnalyzer = async (...args) => {
        const analyzer = await original(...args);
        const target = where === 'analysis' ? analyzer : analyzer.index;
        const method = where === 'analysis' ? 'analyzeFile' : 'update';
        const real = (target as unknown as Record<string, (...a: unknown[]) => unknown>)[method].bind(target);
        (target as unknown as Record<string, unknown>)[method] = (...a: unknown[]) => {
          const named = where === 'analysis' ? (a[0] as { uri: string }).uri : (a[0] as string);
          if (named.endsWith('/bad.cu')) throw new RangeError('Maximum call stack size exceeded');
          return real(...a);
        };
        return analyzer;
      };
      restore = () => (module.createAnalyzer = original);
    }

    for (const where of ['analysis', 'index'] as const) {
      it(`prints every other file whole, and one line for a file whose ${where === 'analysis' ? 'analysis' : 'indexing'} throws`, async () => {
        const dir = path.join(root, `fails-${where}`);
        mkdirSync(dir);
        writeFileSync(path.join(dir, 'a.cu'), launch('64'));
        writeFileSync(path.join(dir, 'bad.cu'), launch('128'));
        writeFileSync(path.join(dir, 'c.cu'), launch('256'));
        failFor(where);
        const run = await runCli(['check', '--no-nvcc', '--verbose', '--jobs', '1', '--fail-on', 'never', dir], root);
        assert.equal(run.code, 0, run.err);
        assert.match(run.out, /a\.cu: 1 kernel, 1 launch[^]*64 threads/);
        assert.match(run.out, /c\.cu: 1 kernel, 1 launch[^]*256 threads/);
        if (where === 'analysis') {
          assert.doesNotMatch(run.out, /bad\.cu/);
          assert.match(
            run.err,
            /^cuda-occupancy: [^\n]*bad\.cu: not analysed: internal error: Maximum call stack size exceeded$/m,
          );
        } else assert.match(run.out, /bad\.cu: 1 kernel, 1 launch/, 'its own analysis needs no index entry of its own');
      });
    }

    it("keeps indexing the workspace when one file's indexing throws, and says which (the server's index)", () => {
      const dir = path.join(root, 'index-boundary');
      mkdirSync(dir);
      for (const name of ['a.cuh', 'bad.cu', 'c.cuh']) writeFileSync(path.join(dir, name), 'const int N = 4;\n');
      class Failing extends WorkspaceIndex {
        override update(file: string, text: string) {
          if (file.endsWith('/bad.cu')) throw new RangeError('Maximum call stack size exceeded');
          return super.update(file, text);
        }
      }
      const errors: string[] = [];
      const { index } = indexWorkspace([dir], {
        index: new Failing(),
        onError: (file, message) => errors.push(`${path.basename(file)}: ${message}`),
      });
      assert.deepEqual(
        index.paths().map((p) => path.basename(p)),
        ['a.cuh', 'c.cuh'],
      );
      assert.deepEqual(errors, ['bad.cu: Maximum call stack size exceeded']);
    });
  });
});
