/**
 * The ptxas figures cache is the user's own and is not believed blindly (issue 25, case 6): it lives in a
 * per-user directory checked for owner and mode, its entries carry a schema version, their key and a
 * checksum, and their numbers are validated; a planted, corrupt or special entry is dropped and the file is
 * compiled again.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CACHE_SCHEMA,
  defaultCacheDir,
  privateDirectoryProblem,
  ResourceCache,
} from '../../server/src/nvcc/resource-cache';
import { isValidArchFigures } from '../../server/src/nvcc/cache-validation';
import { compileResources, type ArchFigures } from '../../server/src/nvcc/compile-resources';
import { fakeNvcc } from '../support/nvcc';

const KEY = 'a'.repeat(64);

function figures(overrides: Record<string, unknown> = {}): ArchFigures {
  return {
    arch: 'sm_90',
    entries: [
      {
        mangledName: '_Z1kPf',
        arch: 'sm_90',
        isEntry: true,
        numRegs: 32,
        barriers: 1,
        sharedSizeBytes: 4096,
        constBytes: 360,
        constBanks: { 0: 360 },
        stackFrameBytes: 0,
        spillStoreBytes: 0,
        spillLoadBytes: 0,
        cumulativeStackBytes: null,
        localBytes: 0,
        textures: 0,
        samplers: 0,
        surfaces: 0,
        unknownFields: [],
        line: 3,
        ...overrides,
      },
    ],
    functions: [],
    modules: [],
    diagnostics: [],
    producedAt: Date.now() - 60_000,
    nvccVersion: 'V13.0.88',
  } as ArchFigures;
}

/** An entry file as a planter with the format in hand would write it (a valid checksum). */
function plant(dir: string, key: string, value: unknown, schema = CACHE_SCHEMA): string {
  const json = JSON.stringify(value);
  const file = path.join(dir, `${key}.json`);
  fs.writeFileSync(
    file,
    `{"schema":${schema},"key":"${key}","checksum":"${createHash('sha256').update(json).digest('hex')}","value":${json}}`,
  );
  return file;
}

const cacheIn = (dir: string, problems: string[] = []) =>
  new ResourceCache<ArchFigures>({
    dir,
    validate: (v): v is ArchFigures => isValidArchFigures(v),
    onProblem: (m) => problems.push(m),
  });

describe('ptxas figures cache', function () {
  this.timeout(20_000);
  let scratch: string;
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-cache-'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('lives in $XDG_CACHE_HOME or ~/.cache, never in the shared temporary directory', () => {
    assert.equal(defaultCacheDir({ XDG_CACHE_HOME: '/home/u/.xdg-cache' }), '/home/u/.xdg-cache/cuda-occupancy-lens');
    assert.equal(
      defaultCacheDir({ XDG_CACHE_HOME: 'relative' }),
      path.join(os.homedir(), '.cache', 'cuda-occupancy-lens'),
    );
    assert.equal(defaultCacheDir({}), path.join(os.homedir(), '.cache', 'cuda-occupancy-lens'));
  });

  it('creates its directory with mode 0700, and writes entries 0600 with schema, key and checksum', async () => {
    const dir = path.join(scratch, 'xdg', 'cuda-occupancy-lens');
    await cacheIn(dir).set(KEY, figures());
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    const file = path.join(dir, `${KEY}.json`);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const entry = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.deepEqual([entry.schema, entry.key], [CACHE_SCHEMA, KEY]);
    assert.equal(entry.checksum, createHash('sha256').update(JSON.stringify(entry.value)).digest('hex'));
    assert.deepEqual(await cacheIn(dir).get(KEY), entry.value, 'read back after a restart');
  });

  if (process.platform !== 'win32') {
    it("uses no directory that others may write (a shared /tmp-style one), a link, or another user's", async () => {
      const open = path.join(scratch, 'shared');
      fs.mkdirSync(open);
      fs.chmodSync(open, 0o1777);
      plant(open, KEY, figures({ numRegs: 255, spillStoreBytes: 8192, spillLoadBytes: 8192 }));
      const problems: string[] = [];
      assert.equal(
        await cacheIn(open, problems).get(KEY),
        undefined,
        'a planted entry in a directory others can write is never read',
      );
      assert.match(problems[0], /is open to other users \(mode 777\): not used/);
      assert.match((await privateDirectoryProblem(open)) ?? '', /open to other users/);
      const link = path.join(scratch, 'link');
      fs.mkdirSync(path.join(scratch, 'real'), { mode: 0o700 });
      fs.symlinkSync(path.join(scratch, 'real'), link);
      assert.match((await privateDirectoryProblem(link)) ?? '', /is a symbolic link/);
      if (process.getuid?.() === 0)
        assert.match((await privateDirectoryProblem('/')) ?? '', /open to other users|not used/);
      else assert.match((await privateDirectoryProblem('/')) ?? '', /another user/);
    });
  }

  const bad: Array<[string, (dir: string) => string]> = [
    ['negative registers', (dir) => plant(dir, KEY, figures({ numRegs: -1 }))],
    ['more registers than a thread can have', (dir) => plant(dir, KEY, figures({ numRegs: 300 }))],
    ['1e308 bytes of shared memory', (dir) => plant(dir, KEY, figures({ sharedSizeBytes: 1e308 }))],
    ['a fractional register count', (dir) => plant(dir, KEY, figures({ numRegs: 12.5 }))],
    [
      'a time of production in the future',
      (dir) => plant(dir, KEY, { ...figures(), producedAt: Date.now() + 10 * 365 * 24 * 3600 * 1000 }),
    ],
    ["another architecture's entries", (dir) => plant(dir, KEY, { ...figures(), arch: 'sm_80' })],
    ['an older schema', (dir) => plant(dir, KEY, figures(), CACHE_SCHEMA - 1)],
    [
      'another key',
      (dir) => {
        const file = plant(dir, 'b'.repeat(64), figures());
        fs.renameSync(file, path.join(dir, `${KEY}.json`));
        return path.join(dir, `${KEY}.json`);
      },
    ],
    [
      'a wrong checksum',
      (dir) => {
        const file = plant(dir, KEY, figures());
        fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"numRegs":32', '"numRegs":64'));
        return file;
      },
    ],
    [
      'the old format (the bare value)',
      (dir) => {
        fs.writeFileSync(path.join(dir, `${KEY}.json`), JSON.stringify(figures()));
        return path.join(dir, `${KEY}.json`);
      },
    ],
    [
      'a truncated file',
      (dir) => {
        const file = plant(dir, KEY, figures());
        fs.truncateSync(file, 100);
        return file;
      },
    ],
  ];
  if (process.platform !== 'win32') {
    bad.push([
      'a FIFO',
      (dir) => {
        execFileSync('mkfifo', [path.join(dir, `${KEY}.json`)]);
        return path.join(dir, `${KEY}.json`);
      },
    ]);
  }
  for (const [name, make] of bad) {
    it(`drops an entry with ${name}, at once, and deletes it`, async () => {
      const dir = path.join(scratch, 'private');
      fs.mkdirSync(dir, { mode: 0o700 });
      const file = make(dir);
      const started = Date.now();
      assert.equal(await cacheIn(dir).get(KEY), undefined);
      assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
      assert.equal(fs.existsSync(file), false);
    });
  }

  it('accepts what a real compile writes', () => {
    assert.equal(isValidArchFigures(figures()), true);
    assert.equal(isValidArchFigures(figures({ numRegs: null, barriers: null, cumulativeStackBytes: 128 })), true);
  });

  it("compiles a file again when its entry was bad, and shows the compiler's figures, not the planted ones", async () => {
    const dir = path.join(scratch, 'private');
    const source = path.join(scratch, 'k.cu');
    fs.writeFileSync(source, '__global__ void kernel(float* p) { p[0] = 1; }\n');
    const first = await compileResources({
      nvccPath: fakeNvcc('nvcc-ok'),
      filePath: source,
      archs: ['sm_90'],
      timeoutMs: 10_000,
      cache: cacheIn(dir),
    });
    assert.deepEqual([first.status, first.cacheHits], ['ok', []]);
    const [entryFile] = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
    const key = entryFile.replace(/\.json$/, '');
    plant(dir, key, { ...first.perArch[0], entries: first.perArch[0].entries.map((e) => ({ ...e, numRegs: -1 })) });
    const again = await compileResources({
      nvccPath: fakeNvcc('nvcc-ok'),
      filePath: source,
      archs: ['sm_90'],
      timeoutMs: 10_000,
      cache: cacheIn(dir),
    });
    assert.deepEqual([again.status, again.cacheHits, again.invocations], ['ok', [], 1]);
    assert.equal(again.entries[0].numRegs, first.entries[0].numRegs);
    const third = await compileResources({
      nvccPath: fakeNvcc('nvcc-ok'),
      filePath: source,
      archs: ['sm_90'],
      timeoutMs: 10_000,
      cache: cacheIn(dir),
    });
    assert.deepEqual(third.cacheHits, ['sm_90'], 'the recompiled entry is cached again');
  });
});
