import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { compileResources } from '../../server/src/nvcc/compile-resources';
import { CompileScheduler, type CompileFunction, type DocumentFigures } from '../../server/src/nvcc/compile-scheduler';

const FAKE = path.resolve(__dirname, '../../../test/fixtures/fake-nvcc');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Start and end events the fake nvcc logged: [kind, pid, ms]. */
function readLog(file: string): Array<[string, number, number]> {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [kind, pid, ms] = l.split(' ');
      return [kind, Number(pid), Number(ms)];
    });
}

function until(predicate: () => boolean, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (predicate()) resolve();
      else if (Date.now() - started > timeoutMs) reject(new Error('condition not reached'));
      else setTimeout(tick, 20);
    };
    tick();
  });
}

describe('compile scheduler', function () {
  this.timeout(30_000);
  if (process.platform === 'win32') return;
  let scratch: string;
  let tempRoot: string;
  let log: string;
  let files: string[];
  let scheduler: CompileScheduler | null = null;
  let calls: number;

  /** compileResources on the fake nvcc, with a per-test temp root and log. */
  const compileWith =
    (nvcc: string, delayMs: number): CompileFunction =>
    (request, signal) => {
      calls++;
      return compileResources({
        nvccPath: path.join(FAKE, nvcc),
        filePath: request.path,
        archs: ['sm_90'],
        timeoutMs: 10_000,
        signal,
        tempRoot,
        env: { ...process.env, FAKE_NVCC_LOG: log, FAKE_NVCC_DELAY_MS: String(delayMs) },
      });
    };

  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'scheduler-test-'));
    tempRoot = path.join(scratch, 'tmp');
    fs.mkdirSync(tempRoot);
    log = path.join(scratch, 'nvcc.log');
    files = [0, 1, 2, 3, 4].map((i) => {
      const file = path.join(scratch, `k${i}.cu`);
      fs.writeFileSync(file, '__global__ void kernel(float* p) {}\n');
      return file;
    });
    calls = 0;
  });
  afterEach(() => {
    scheduler?.dispose();
    scheduler = null;
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('runs at most maxParallel compiles at once and removes every temporary directory', async () => {
    const results: DocumentFigures[] = [];
    scheduler = new CompileScheduler({ compile: compileWith('nvcc-ok', 400), debounceMs: 10, maxParallel: 2 });
    scheduler.onResult((r) => results.push(r));
    files.forEach((file, i) => scheduler!.request(`file:///k${i}.cu`, { path: file }));
    await until(() => results.length === 5);
    const events = readLog(log).sort((a, b) => a[2] - b[2] || (a[0] === 'end' ? -1 : 1));
    let running = 0;
    let peak = 0;
    for (const [kind] of events) {
      running += kind === 'start' ? 1 : -1;
      peak = Math.max(peak, running);
    }
    assert.equal(events.length, 10);
    assert.equal(peak, 2);
    assert.ok(results.every((r) => !r.stale && r.perArch[0].entries[0].numRegs === 16));
    assert.deepEqual(fs.readdirSync(tempRoot), []);
  });

  it('debounces repeated saves into one compile', async () => {
    scheduler = new CompileScheduler({ compile: compileWith('nvcc-ok', 0), debounceMs: 150 });
    const results: DocumentFigures[] = [];
    scheduler.onResult((r) => results.push(r));
    for (let i = 0; i < 5; i++) {
      scheduler.request('file:///a.cu', { path: files[0] });
      await sleep(30);
    }
    await until(() => results.length === 1);
    await sleep(300);
    assert.equal(calls, 1);
    assert.equal(results.length, 1);
  });

  it('cancels the run in flight when a newer save arrives, and reports only the newer', async () => {
    scheduler = new CompileScheduler({ compile: compileWith('nvcc-ok', 1500), debounceMs: 10 });
    const results: DocumentFigures[] = [];
    scheduler.onResult((r) => results.push(r));
    scheduler.request('file:///a.cu', { path: files[0] });
    await until(() => readLog(log).length === 1); // the first run has started
    scheduler.request('file:///a.cu', { path: files[0] });
    await until(() => results.length === 1);
    const events = readLog(log);
    assert.deepEqual(
      events.map((e) => e[0]),
      ['start', 'start', 'end'],
      'the first run was killed before its end',
    );
    assert.equal(calls, 2);
    assert.deepEqual(fs.readdirSync(tempRoot), []);
  });

  it('compiles nothing for a closed document, and cancel stops a pending one', async () => {
    const open = new Set(['file:///open.cu']);
    scheduler = new CompileScheduler({
      compile: compileWith('nvcc-ok', 0),
      debounceMs: 50,
      isOpen: (uri) => open.has(uri),
    });
    scheduler.request('file:///closed.cu', { path: files[0] });
    scheduler.request('file:///open.cu', { path: files[1] });
    open.delete('file:///open.cu'); // closed during the debounce
    scheduler.request('file:///other.cu', { path: files[2] });
    scheduler.cancel('file:///other.cu');
    await sleep(300);
    assert.equal(calls, 0);
    assert.equal(scheduler.latest('file:///open.cu'), undefined);
  });

  it('keeps the last figures, marked stale with the first error, when a compile fails', async () => {
    let nvcc = 'nvcc-ok';
    scheduler = new CompileScheduler({
      compile: (request, signal) => compileWith(nvcc, 0)(request, signal),
      debounceMs: 10,
    });
    const results: DocumentFigures[] = [];
    scheduler.onResult((r) => results.push(r));
    scheduler.request('file:///a.cu', { path: files[0] });
    await until(() => results.length === 1);
    nvcc = 'nvcc-fail';
    scheduler.request('file:///a.cu', { path: files[0] });
    await until(() => results.length === 2);
    const latest = scheduler.latest('file:///a.cu')!;
    assert.equal(latest.stale, true);
    assert.equal(latest.error?.line, 7);
    assert.equal(latest.perArch[0].entries[0].numRegs, 16, 'the figures of the last good compile');
  });

  it('reports a missing nvcc once and switches itself off', async () => {
    scheduler = new CompileScheduler({
      compile: (request, signal) =>
        compileResources({
          nvccPath: path.join(scratch, 'no-nvcc'),
          filePath: request.path,
          archs: ['sm_90'],
          timeoutMs: 1000,
          signal,
        }),
      debounceMs: 10,
    });
    let missing = 0;
    scheduler.onNvccMissing(() => missing++);
    files.forEach((file, i) => scheduler!.request(`file:///k${i}.cu`, { path: file }));
    await until(() => scheduler!.disabled !== null);
    await sleep(200);
    scheduler.request('file:///again.cu', { path: files[0] });
    await sleep(100);
    assert.equal(missing, 1);
    assert.match(scheduler.disabled ?? '', /not found/);
    assert.equal(scheduler.activeCount + scheduler.queuedCount, 0);
  });

  it('answers latest() at once while a compile runs', async () => {
    let delayMs = 0;
    scheduler = new CompileScheduler({
      compile: (request, signal) => compileWith('nvcc-ok', delayMs)(request, signal),
      debounceMs: 10,
    });
    scheduler.request('file:///a.cu', { path: files[0] });
    await until(() => scheduler!.latest('file:///a.cu') !== undefined);
    delayMs = 1500;
    scheduler.request('file:///a.cu', { path: files[0] });
    await until(() => scheduler!.activeCount === 1);
    const started = Date.now();
    assert.equal(scheduler.latest('file:///a.cu')?.perArch[0].entries[0].numRegs, 16);
    assert.equal(scheduler.latest('file:///a.cu')?.stale, false);
    assert.ok(Date.now() - started < 5);
  });

  it('runs the follow-up (the PTX compile) after announcing the result, in the same slot and under the same signal', async () => {
    const events: string[] = [];
    scheduler = new CompileScheduler({
      compile: compileWith('nvcc-ok', 0),
      debounceMs: 10,
      maxParallel: 1,
      afterCompile: async (request, result, signal) => {
        events.push(`follow-up ${path.basename(request.path)} ${result.status} active=${scheduler!.activeCount}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 600);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        events.push(`follow-up ${path.basename(request.path)} ${signal.aborted ? 'cancelled' : 'done'}`);
      },
    });
    scheduler.onResult((r) => events.push(`result ${path.basename(r.path)}`));
    scheduler.onCompileEnd((r) => events.push(`end ${path.basename(r.path)} active=${scheduler!.activeCount}`));
    scheduler.request('file:///k0.cu', { path: files[0] });
    await until(() => events.includes('follow-up k0.cu ok active=1'));
    // The follow-up holds the only slot: another document waits for it.
    scheduler.request('file:///k1.cu', { path: files[1] });
    await sleep(200);
    assert.equal(calls, 1);
    // A newer save of the same document cancels the follow-up, as it would the compile.
    scheduler.request('file:///k0.cu', { path: files[0] });
    await until(() => events.filter((e) => e.startsWith('end')).length === 3);
    assert.deepEqual(events.slice(0, 4), [
      'result k0.cu',
      'follow-up k0.cu ok active=1',
      'follow-up k0.cu cancelled',
      'end k0.cu active=0',
    ]);
    assert.equal(calls, 3);
    assert.ok(events.includes('follow-up k1.cu done') && events.includes('follow-up k0.cu done'), events.join('; '));
  });
});
