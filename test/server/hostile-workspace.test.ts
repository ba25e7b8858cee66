/**
 * The shipped server in a repository built to attack it (issue 25): opening a file runs no program the
 * repository names, no file or setting hangs it, documents over the size limits get one information
 * diagnostic, and in an untrusted workspace the workspace's build log is not read.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { CodeLens } from 'vscode-languageserver-protocol';
import { LspSession, fileUri } from '../support/lsp-session';
import { findNvcc } from '../support/nvcc';

const KERNEL =
  '__global__ void __launch_bounds__(64) k(float* p) { p[threadIdx.x] = 1; }\nvoid run(float* p) { k<<<1, 128>>>(p); }\n';
const PTXAS_LOG =
  "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'\nptxas info    : Used 77 registers, used 0 barriers, 360 bytes cmem[0]\n";

async function within<T>(what: string, ms: number, work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)),
  ]);
}

async function waitFor(what: string, test: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a hostile workspace', function () {
  this.timeout(120_000);
  if (process.platform === 'win32') return;
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cuda-occ-hostile-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  describe('a compile_commands.json that names a compiler, -keep and --run', () => {
    let repo: string;
    let marker: string;
    before(() => {
      repo = path.join(root, 'ccbin');
      mkdirSync(path.join(repo, 'tools'), { recursive: true });
      marker = path.join(repo, 'ran');
      const evil = path.join(repo, 'tools', 'gcc');
      writeFileSync(evil, `#!/bin/sh\necho "$@" >> '${marker}'\nexec gcc "$@"\n`);
      chmodSync(evil, 0o755);
      writeFileSync(path.join(repo, 'k.cu'), KERNEL);
      writeFileSync(
        path.join(repo, 'compile_commands.json'),
        JSON.stringify([
          {
            directory: repo,
            file: 'k.cu',
            command: `nvcc -ccbin ${evil} --compiler-bindir=${evil} -keep -keep-dir ${repo} -c k.cu -o k.o`,
          },
        ]),
      );
    });

    it('runs none of it when the file is opened, and logs one line per dropped option', async function () {
      const nvcc = findNvcc();
      if (!nvcc) this.skip();
      const before = readdirSync(repo).sort();
      const session = await LspSession.start({
        rootDir: repo,
        initializationOptions: { cacheDir: null },
        settings: { nvcc: { path: nvcc, args: ['-keep', '--run', `--keep-dir=${repo}`] }, architectures: ['sm_80'] },
      });
      try {
        const uri = fileUri(path.join(repo, 'k.cu'));
        session.open(uri, KERNEL);
        await waitFor('the compile', () => session.logs.some((l) => /^nvcc (ok|failed)/.test(l)));
        assert.ok(
          session.logs.some((l) => l.startsWith('nvcc ok')),
          session.logs.join('\n'),
        );
        assert.equal(existsSync(marker), false, 'the compiler named by compile_commands.json ran');
        assert.deepEqual(readdirSync(repo).sort(), before, 'nvcc wrote into the workspace');
        const dropped = session.logs.filter((l) => l.startsWith('dropped nvcc option'));
        assert.deepEqual(dropped, [
          `dropped nvcc option \`-ccbin ${path.join(repo, 'tools', 'gcc')}\` from compile_commands.json: the compiler it names is not in cudaOccupancy.nvcc.allowedCompilers`,
          `dropped nvcc option \`--compiler-bindir=${path.join(repo, 'tools', 'gcc')}\` from compile_commands.json: the compiler it names is not in cudaOccupancy.nvcc.allowedCompilers`,
          'dropped nvcc option `-keep` from user settings: it writes files outside the temporary directory',
          'dropped nvcc option `--run` from user settings: it runs the program',
          `dropped nvcc option \`--keep-dir=${repo}\` from user settings: it writes files outside the temporary directory`,
        ]);
      } finally {
        await session.stop();
      }
    });

    it("ignores an allow-list the workspace sets, and honours the user's", async function () {
      const nvcc = findNvcc();
      if (!nvcc) this.skip();
      const allow = [path.join(repo, 'tools', '*')];
      const fromWorkspace = await LspSession.start({
        rootDir: repo,
        initializationOptions: { cacheDir: null },
        settings: {
          nvcc: { path: nvcc, allowedCompilers: allow },
          architectures: ['sm_80'],
          $workspaceKeys: ['nvcc.allowedCompilers'],
        },
      });
      try {
        fromWorkspace.open(fileUri(path.join(repo, 'k.cu')), KERNEL);
        await waitFor('the compile', () => fromWorkspace.logs.some((l) => /^nvcc (ok|failed)/.test(l)));
        assert.equal(existsSync(marker), false);
        assert.ok(
          fromWorkspace.logs.includes(
            'cudaOccupancy.nvcc.allowedCompilers is set in the workspace settings: ignored (user settings only)',
          ),
          fromWorkspace.logs.join('\n'),
        );
      } finally {
        await fromWorkspace.stop();
      }
      const fromUser = await LspSession.start({
        rootDir: repo,
        initializationOptions: { cacheDir: null },
        settings: { nvcc: { path: nvcc, allowedCompilers: allow }, architectures: ['sm_80'] },
      });
      try {
        fromUser.open(fileUri(path.join(repo, 'k.cu')), KERNEL);
        await waitFor('the compile', () => fromUser.logs.some((l) => /^nvcc (ok|failed)/.test(l)));
        assert.equal(existsSync(marker), true, 'the user allowed it');
      } finally {
        await fromUser.stop();
      }
    });
  });

  describe('build logs that are not files', () => {
    let repo: string;
    before(() => {
      repo = path.join(root, 'logs');
      mkdirSync(repo);
      execFileSync('mkfifo', [path.join(repo, 'ptxas.log')]);
      writeFileSync(path.join(repo, 'k.cu'), KERNEL);
    });

    for (const [name, log] of [
      ['a FIFO', 'ptxas.log'],
      ['/dev/zero', '/dev/zero'],
    ]) {
      it(`stays responsive, and shuts down, with cudaOccupancy.ptxasLog set to ${name}`, async () => {
        const session = await LspSession.start({
          rootDir: repo,
          initializationOptions: { cacheDir: null },
          settings: { ptxasLog: log, nvcc: { enabled: false } },
        });
        const uri = fileUri(path.join(repo, 'k.cu'));
        session.open(uri, KERNEL);
        await within(
          'diagnostics',
          10_000,
          session.waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'launch-exceeds-bounds')),
        );
        assert.ok(await within('a hover', 5000, session.hover(uri, { line: 1, character: 22 })));
        assert.ok(
          session.logs.some((l) => /cannot read ptxas log .*: a (FIFO|character device), not a regular file/.test(l)),
          session.logs.join('\n'),
        );
        await within('shutdown', 5000, session.request('shutdown', null));
        await session.stop();
      });
    }
  });

  describe('trust', () => {
    let repo: string;
    before(() => {
      repo = path.join(root, 'trust');
      mkdirSync(repo);
      writeFileSync(path.join(repo, 'ptxas.log'), PTXAS_LOG);
      writeFileSync(path.join(repo, 'k.cu'), KERNEL.replace('__launch_bounds__(64) ', ''));
    });

    const lensWithLog = async (
      trusted: boolean,
      workspaceKeys?: string[],
    ): Promise<{ lenses: CodeLens[] | null; logs: string[] }> => {
      const settings: Record<string, unknown> = {
        ptxasLog: 'ptxas.log',
        nvcc: { enabled: false },
        architectures: ['sm_80'],
      };
      if (workspaceKeys) settings.$workspaceKeys = workspaceKeys;
      const session = await LspSession.start({
        rootDir: repo,
        initializationOptions: { cacheDir: null, workspaceTrusted: trusted },
        settings,
      });
      try {
        const uri = fileUri(path.join(repo, 'k.cu'));
        session.open(uri, KERNEL.replace('__launch_bounds__(64) ', ''));
        await session.waitForDiagnostics(uri);
        return { lenses: await session.codeLenses(uri), logs: session.logs };
      } finally {
        await session.stop();
      }
    };

    it("reads the workspace's ptxasLog only in a trusted workspace", async () => {
      const trusted = await lensWithLog(true);
      assert.match(trusted.lenses?.[0].command?.title ?? '', /77\/thread/);
      const untrusted = await lensWithLog(false);
      assert.doesNotMatch(untrusted.lenses?.[0].command?.title ?? '', /77/);
      assert.ok(
        untrusted.logs.includes('cudaOccupancy.ptxasLog is ignored in an untrusted workspace'),
        untrusted.logs.join('\n'),
      );
      const fromUser = await lensWithLog(false, []);
      assert.match(fromUser.lenses?.[0].command?.title ?? '', /77\/thread/, 'a log the user set is read');
    });
  });

  describe('a workspace with link loops and a link to /', () => {
    it('indexes it at once', async () => {
      const repo = path.join(root, 'loops');
      mkdirSync(path.join(repo, 'loop'), { recursive: true });
      symlinkSync('.', path.join(repo, 'loop', 'a'));
      symlinkSync('.', path.join(repo, 'loop', 'b'));
      symlinkSync('/', path.join(repo, 'root'));
      writeFileSync(path.join(repo, 'loop', 'config.h'), '#define THREADS 128\n');
      writeFileSync(
        path.join(repo, 'k.cu'),
        '#include "loop/config.h"\n__global__ void __launch_bounds__(64) k(float* p) {}\nvoid run(float* p) { k<<<1, THREADS>>>(p); }\n',
      );
      const started = Date.now();
      const session = await LspSession.start({
        rootDir: repo,
        initializationOptions: { cacheDir: null },
        settings: { nvcc: { enabled: false } },
      });
      try {
        const uri = fileUri(path.join(repo, 'k.cu'));
        session.open(
          uri,
          '#include "loop/config.h"\n__global__ void __launch_bounds__(64) k(float* p) {}\nvoid run(float* p) { k<<<1, THREADS>>>(p); }\n',
        );
        await within(
          'diagnostics',
          15_000,
          session.waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'launch-exceeds-bounds')),
        );
        assert.ok(Date.now() - started < 15_000);
        assert.ok(
          session.logs.some((l) => l === 'indexed 2 CUDA files'),
          session.logs.join('\n'),
        );
      } finally {
        await session.stop();
      }
    });
  });

  describe('documents over the size limits', () => {
    let session: LspSession;
    before(async () => {
      session = await LspSession.start({
        rootDir: root,
        initializationOptions: { cacheDir: null },
        settings: { nvcc: { enabled: false } },
      });
    });
    after(() => session.stop());

    const cases: Array<[string, () => string, RegExp]> = [
      [
        'a 30 MB document',
        () =>
          `__global__ void k(float* p) {}\n${'float table_entry = 0.000000f; // a generated table of values\n'.repeat(520_000)}`,
        /^too large to analyse: 3\d MB, over the 4 MB limit/,
      ],
      [
        'a 3.4 MB line with 200,000 launches',
        () => `__global__ void k(float* p) {}\nvoid f(float* p) { ${'k<<<1, 32>>>(p); '.repeat(200_000)} }\n`,
        /^too large to analyse: line 2 is 3,400,021 characters long/,
      ],
    ];
    for (const [name, text, says] of cases) {
      it(`gives ${name} one information diagnostic at once, and analyses it once it fits`, async () => {
        const uri = fileUri(path.join(root, `${name.replace(/\W+/g, '-')}.cu`));
        const started = Date.now();
        session.open(uri, text());
        const [only] = await within(
          'diagnostics',
          20_000,
          session.waitForDiagnostics(uri, (d) => d.length === 1 && d[0].code === 'too-large-to-analyse'),
        );
        assert.equal(only.severity, 3);
        assert.match(only.message, says);
        assert.ok((await within('a hover', 5000, session.hover(uri, { line: 1, character: 22 }))) === null);
        assert.deepEqual(await within('lenses', 5000, session.codeLenses(uri)), []);
        assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms`);
        session.change(uri, [
          { text: '__global__ void __launch_bounds__(64) k(float* p) {}\nvoid f(float* p) { k<<<1, 128>>>(p); }\n' },
        ]);
        await within(
          'diagnostics',
          10_000,
          session.waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'launch-exceeds-bounds')),
        );
        session.close(uri);
      });
    }
  });
});
