import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { compileResources, type ArchFigures } from '../../server/src/nvcc/compile-resources';
import { runNvcc } from '../../server/src/nvcc/nvcc-runner';
import {
  collectIncludeStamps,
  includePathsOf,
  ResourceCache,
  resourceCacheKey,
} from '../../server/src/nvcc/resource-cache';
import { realNvccOrSkip } from '../support/nvcc';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/ptxas');

const isArchFigures = (value: unknown): value is ArchFigures =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ArchFigures).arch === 'string' &&
  Array.isArray((value as ArchFigures).entries);

describe('resource cache', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'resource-cache-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('changes the key with content, include stamps, flags, arch and nvcc version', () => {
    const base = {
      content: 'a',
      includes: [{ path: '/x.h', mtimeMs: 1, size: 2 }],
      flags: ['-DA'],
      arch: 'sm_90',
      nvccPath: 'nvcc',
      nvccVersion: 'V13.0.88',
    };
    const key = resourceCacheKey(base);
    assert.match(key, /^[0-9a-f]{64}$/);
    assert.equal(resourceCacheKey({ ...base }), key);
    for (const change of [
      { content: 'b' },
      { includes: [{ path: '/x.h', mtimeMs: 2, size: 2 }] },
      { flags: ['-DB'] },
      { arch: 'sm_80' },
      { nvccVersion: 'V12.9.0' },
    ]) {
      assert.notEqual(resourceCacheKey({ ...base, ...change }), key, JSON.stringify(change));
    }
  });

  it('follows quoted and -I includes transitively, and notes the missing ones', async () => {
    fs.mkdirSync(path.join(dir, 'inc'));
    fs.writeFileSync(path.join(dir, 'a.cuh'), '#include "b.cuh"\n');
    fs.writeFileSync(path.join(dir, 'b.cuh'), '#include <lib.h>\n#include "a.cuh"\n');
    fs.writeFileSync(path.join(dir, 'inc', 'lib.h'), '');
    const stamps = await collectIncludeStamps({
      filePath: path.join(dir, 'k.cu'),
      text: '#include "a.cuh"\n  #  include <cstdio>\n#include "gone.h"\n',
      includePaths: includePathsOf(['-I', 'inc'], dir),
    });
    assert.deepEqual(stamps.map((s) => (s.mtimeMs === null ? s.path : path.basename(s.path))).sort(), [
      'a.cuh',
      'b.cuh',
      `gone.h (from ${path.join(dir, 'k.cu')})`,
      'lib.h',
    ]);
  });

  it('survives a restart through its directory and ignores invalid files there', async () => {
    const key = 'a'.repeat(64);
    const value: ArchFigures = {
      arch: 'sm_90',
      entries: [],
      functions: [],
      modules: [],
      diagnostics: [],
      producedAt: 1,
      nvccVersion: 'V1',
    };
    await new ResourceCache<ArchFigures>({ dir, validate: isArchFigures }).set(key, value);
    assert.deepEqual(await new ResourceCache<ArchFigures>({ dir, validate: isArchFigures }).get(key), value);
    fs.writeFileSync(path.join(dir, `${'b'.repeat(64)}.json`), '{"arch": 5}');
    fs.writeFileSync(path.join(dir, `${'c'.repeat(64)}.json`), 'not json');
    const fresh = new ResourceCache<ArchFigures>({ dir, validate: isArchFigures });
    assert.equal(await fresh.get('b'.repeat(64)), undefined);
    assert.equal(await fresh.get('c'.repeat(64)), undefined);
    assert.equal(await fresh.get('../../etc/passwd'), undefined);
  });

  it('keeps at most maxEntries in memory', async () => {
    const cache = new ResourceCache<number>({ maxEntries: 2, validate: (v): v is number => typeof v === 'number' });
    await cache.set('1', 1);
    await cache.set('2', 2);
    await cache.get('1');
    await cache.set('3', 3);
    assert.deepEqual([await cache.get('1'), await cache.get('2'), await cache.get('3')], [1, undefined, 3]);
  });
});

describe('compile resources with the real nvcc', function () {
  this.timeout(120_000);
  const nvcc = realNvccOrSkip();
  let scratch: string;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'compile-resources-'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  /** Registers per kernel as `nvcc -Xptxas -v` prints them for one arch, read with a plain regex. */
  async function registersFromNvcc(file: string, arch: string, flags: string[] = []): Promise<Map<string, number>> {
    const run = await runNvcc({
      nvccPath: nvcc,
      args: [...flags, `-arch=${arch}`, '-Xptxas', '-v', '-cubin', '-o', path.join(scratch, `${arch}.cubin`), file],
      timeoutMs: 60_000,
    });
    assert.equal(run.exitCode, 0, run.stderr);
    const out = new Map<string, number>();
    for (const m of run.stderr.matchAll(
      /Compiling entry function '([^']+)' for '[^']+'\n(?:.*\n)*?.*Used (\d+) registers/g,
    ))
      out.set(m[1], Number(m[2]));
    return out;
  }

  it('reports the registers nvcc -Xptxas -v prints, for every kernel and arch, from one invocation, then from the cache', async () => {
    const file = path.join(FIXTURES, 'templates.cu');
    const cache = new ResourceCache<ArchFigures>({ dir: path.join(scratch, 'cache'), validate: isArchFigures });
    const tempRoot = path.join(scratch, 'tmp');
    fs.mkdirSync(tempRoot);
    const archs = ['sm_80', 'sm_90'];
    const result = await compileResources({
      nvccPath: nvcc,
      filePath: file,
      archs,
      timeoutMs: 60_000,
      cache,
      tempRoot,
    });
    assert.equal(result.status, 'ok', result.firstError?.text);
    assert.equal(result.invocations, 1);
    assert.deepEqual(fs.readdirSync(tempRoot), []);
    for (const arch of archs) {
      const expected = await registersFromNvcc(file, arch);
      const ours = new Map(result.perArch.find((a) => a.arch === arch)!.entries.map((e) => [e.mangledName, e.numRegs]));
      assert.equal(expected.size, 9);
      assert.deepEqual(ours, expected, arch);
    }
    console.log(
      `    templates.cu, ${archs.join('+')}: ${result.compileMs} ms in nvcc (${result.durationMs} ms in all)`,
    );

    const again = await compileResources({
      nvccPath: nvcc,
      filePath: file,
      archs,
      timeoutMs: 60_000,
      cache: new ResourceCache<ArchFigures>({ dir: path.join(scratch, 'cache'), validate: isArchFigures }),
    });
    assert.deepEqual([again.status, again.invocations, again.cacheHits], ['ok', 0, archs]);
    assert.deepEqual(again.perArch, result.perArch);
    console.log(`    cache hit after a restart: ${again.durationMs} ms`);
  });

  it("passes the file's flags (a lambda-templated kernel needs --extended-lambda)", async () => {
    const file = path.join(FIXTURES, 'lambdas.cu');
    const result = await compileResources({
      nvccPath: nvcc,
      filePath: file,
      archs: ['sm_90'],
      flags: ['--extended-lambda'],
      timeoutMs: 60_000,
    });
    assert.equal(result.status, 'ok', result.firstError?.text);
    assert.equal(result.entries.length, 4);
  });

  it("fails with ptxas's error for a kernel over the shared-memory limit", async () => {
    const result = await compileResources({
      nvccPath: nvcc,
      filePath: path.join(FIXTURES, 'too-much-smem.cu'),
      archs: ['sm_80'],
      timeoutMs: 60_000,
    });
    assert.equal(result.status, 'failed');
    assert.match(result.firstError?.message ?? '', /uses too much shared data/);
  });
});
