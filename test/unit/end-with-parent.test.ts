/**
 * Every child dies with its parent (issue 34, case 3). nvcc runs in a process group of its own, so a Ctrl-C in
 * the terminal never reached it: SIGINT to `check` while nvcc was blocked left nvcc, sh, gcc and cc1plus running
 * for ever, and a temporary directory behind. Now SIGINT, SIGTERM and an uncaught error in the CLI or the server
 * kill every process of the runs in flight and remove their temporary directories.
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli-run';
import { fakeNvcc, findNvcc, running } from '../support/nvcc';
import { LspSession, fileUri } from '../support/lsp-session';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'cuda-occupancy.js');
const KERNEL = '__global__ void k(float* p) { p[threadIdx.x] = 1; }\nvoid run(float* p) { k<<<1, 128>>>(p); }\n';

/** The running processes (zombies aside) of the runs `parent` started: those carrying its run marker. */
function runProcessesOf(parent: number): number[] {
  const needle = Buffer.from(`CUDA_OCCUPANCY_LENS_RUN=${parent}-`);
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(needle) && running(Number(entry))) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

async function waitFor(what: string, test: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

describe('compiles end with their parent', function () {
  this.timeout(60_000);
  if (process.platform !== 'linux') return;
  let root: string;
  let temp: string;
  let pidFile: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cuda-occ-parent-'));
    temp = path.join(root, 'tmp');
    mkdirSync(temp);
    pidFile = path.join(root, 'pids');
    writeFileSync(path.join(root, 'k.cu'), KERNEL);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** The pids the hanging fake nvcc wrote (its own and its child's), once it has. */
  const fakePids = () => readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);

  for (const [signal, status] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`${signal} to \`check\` while nvcc hangs kills nvcc and its children, removes the temporary directory, and exits ${status}`, async () => {
      const cli = spawn(process.execPath, [CLI, 'check', '--nvcc', fakeNvcc('nvcc-hang'), 'k.cu'], {
        cwd: root,
        env: { ...process.env, TMPDIR: temp, FAKE_NVCC_PIDFILE: pidFile },
        stdio: 'ignore',
      });
      const end = exited(cli);
      await waitFor('the fake nvcc', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').includes(' '));
      assert.equal(readdirSync(temp).length, 1, 'the compile has its temporary directory');
      cli.kill(signal);
      assert.deepEqual(await end, { code: status, signal: null });
      await waitFor('the end of every process of the run', () => fakePids().every((p) => !running(p)), 3000);
      assert.deepEqual(runProcessesOf(cli.pid!), []);
      assert.deepEqual(readdirSync(temp), [], 'the temporary directory is left behind');
    });
  }

  it('SIGINT to `check` while the real nvcc is blocked on a FIFO kills nvcc, sh, gcc and cc1plus', async function () {
    const nvcc = findNvcc();
    if (!nvcc) this.skip();
    // A computed include, so that the scan of the include closure does not refuse it before nvcc starts.
    execFileSync('mkfifo', [path.join(root, 'fifo.h')]);
    writeFileSync(path.join(root, 'k.cu'), `#define Q(x) #x\n#define NAME(x) Q(x)\n#include NAME(fifo.h)\n${KERNEL}`);
    const cli = spawn(process.execPath, [CLI, 'check', '--nvcc', nvcc, 'k.cu'], {
      cwd: root,
      env: { ...process.env, TMPDIR: temp },
      stdio: 'ignore',
    });
    const end = exited(cli);
    await waitFor('cc1plus blocked on the FIFO', () =>
      runProcessesOf(cli.pid!).some((p) => readFileSync(`/proc/${p}/comm`, 'utf8').trim() === 'cc1plus'),
    );
    cli.kill('SIGINT');
    assert.deepEqual(await end, { code: 130, signal: null });
    await waitFor('the end of every process of the run', () => runProcessesOf(cli.pid!).length === 0, 3000);
    assert.deepEqual(readdirSync(temp), []);
  });

  it('SIGTERM to the server while nvcc hangs kills nvcc and its children, removes the temporary directory, and exits 143', async () => {
    const session = await LspSession.start({
      rootDir: root,
      env: { TMPDIR: temp, FAKE_NVCC_PIDFILE: pidFile },
      initializationOptions: { cacheDir: null },
      settings: { nvcc: { path: fakeNvcc('nvcc-hang') }, architectures: ['sm_80'] },
    });
    const end = exited(session.process);
    session.open(fileUri(path.join(root, 'k.cu')), KERNEL);
    await waitFor('the fake nvcc', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').includes(' '));
    session.process.kill('SIGTERM');
    assert.deepEqual(await end, { code: 143, signal: null });
    await waitFor('the end of every process of the run', () => fakePids().every((p) => !running(p)), 3000);
    assert.deepEqual(runProcessesOf(session.process.pid!), []);
    assert.deepEqual(readdirSync(temp), []);
  });

  it('SIGTERM with no run in flight ends the process at once, even in the middle of a synchronous loop', async () => {
    // A signal handler waits for the event loop: installed for good, it let a CLI that was busy analysing
    // (or hung in a bug) ignore SIGTERM. It is installed only while there is a run to clean up after.
    const script = `
      const runner = require(${JSON.stringify(path.join(REPO_ROOT, 'out', 'server', 'src', 'nvcc', 'nvcc-runner.js'))});
      runner.endRunsWithProcess({ uncaughtExitCode: 7, onUncaught: () => undefined });
      process.stdout.write('busy\\n');
      for (;;) {}
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'ignore'] });
    const end = exited(child);
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    child.kill('SIGTERM');
    const outcome = await Promise.race([end, new Promise((r) => setTimeout(() => r('still running'), 20_000))]);
    if (outcome === 'still running') child.kill('SIGKILL');
    assert.deepEqual(outcome, { code: null, signal: 'SIGTERM' });
  });

  it('an uncaught error kills the runs in flight, removes their temporary directories, and exits with the status given', async () => {
    // What the CLI and the server install (endRunsWithProcess), in a process that throws while nvcc hangs.
    const script = `
      const runner = require(${JSON.stringify(path.join(REPO_ROOT, 'out', 'server', 'src', 'nvcc', 'nvcc-runner.js'))});
      const { compileResources } = require(${JSON.stringify(path.join(REPO_ROOT, 'out', 'server', 'src', 'nvcc', 'compile-resources.js'))});
      runner.endRunsWithProcess({ uncaughtExitCode: 7, onUncaught: (e) => process.stderr.write('uncaught: ' + e.message + '\\n') });
      compileResources({ nvccPath: ${JSON.stringify(fakeNvcc('nvcc-hang'))}, filePath: ${JSON.stringify(path.join(root, 'k.cu'))}, archs: ['sm_80'], timeoutMs: 60000 });
      const wait = setInterval(() => {
        if (require('node:fs').existsSync(${JSON.stringify(pidFile)})) { clearInterval(wait); setTimeout(() => { throw new Error('boom'); }, 200); }
      }, 50);
    `;
    const child = spawn(process.execPath, ['-e', script], {
      env: { ...process.env, TMPDIR: temp, FAKE_NVCC_PIDFILE: pidFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d) => (err += String(d)));
    assert.deepEqual(await exited(child), { code: 7, signal: null });
    assert.match(err, /uncaught: boom/);
    await waitFor('the end of every process of the run', () => fakePids().every((p) => !running(p)), 3000);
    assert.deepEqual(runProcessesOf(child.pid!), []);
    assert.deepEqual(readdirSync(temp), []);
  });
});
