/**
 * The server compiles what an open document's figures need, in the background: the `.cu` files
 * that include an open header, the `.cu` that defines a kernel an open file launches. While
 * ptxas runs, hovers say so; when nvcc fails, the hover's figures line, the status bar and one
 * diagnostic at the top of the file say why and what to set. nvcc is a replay of what the real
 * one printed for test/fixtures/units (test/fixtures/fake-nvcc/nvcc-replay).
 */
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LspSession, REPO_ROOT, fileUri } from '../support/lsp-session';
import { fakeNvcc } from '../support/nvcc';
import type { ServerStatus } from '../../server/src/protocol';

const UNITS = path.join(REPO_ROOT, 'test', 'fixtures', 'units');

describe('translation units compiled for open documents (bundled server)', function () {
  this.timeout(60000);
  let dir: string;
  let session: LspSession;
  const statuses: ServerStatus[] = [];
  const uriOf = (name: string) => fileUri(path.join(dir, name));
  const textOf = (name: string) => readFileSync(path.join(dir, name), 'utf8');
  /** The position of the first `needle` in a file (its first character). */
  const positionOf = (name: string, needle: string) => {
    const before = textOf(name).slice(0, textOf(name).indexOf(needle)).split('\n');
    return { line: before.length - 1, character: before[before.length - 1].length };
  };
  const hoverAt = async (name: string, needle: string) => {
    const hover = await session.hover(uriOf(name), positionOf(name, needle));
    return (hover?.contents as { value: string } | undefined)?.value ?? '';
  };
  /** Polls a hover until `accept` holds (compiles run in the background). */
  const hoverUntil = async (name: string, needle: string, accept: (markdown: string) => boolean) => {
    const deadline = Date.now() + 20000;
    let markdown = '';
    while (Date.now() < deadline) {
      markdown = await hoverAt(name, needle);
      if (accept(markdown)) return markdown;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no matching hover on ${needle} in ${name}: ${markdown}`);
  };

  beforeEach(async function () {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-units-'));
    cpSync(UNITS, dir, { recursive: true });
    statuses.length = 0;
    const title = this.currentTest?.title ?? '';
    const delay = title.includes('ptxas runs') ? '3000' : '0';
    const nvcc = title.includes('nvcc is missing') ? path.join(dir, 'no-such-nvcc') : fakeNvcc('nvcc-replay');
    session = await LspSession.start({
      rootDir: dir,
      settings: { architectures: ['sm_80'], nvcc: { path: nvcc } },
      initializationOptions: { cacheDir: null },
      env: { FAKE_NVCC_DELAY_MS: delay },
    });
    session.connection.onNotification('cudaOccupancy/status', (s: ServerStatus) => void statuses.push(s));
  });

  afterEach(async () => {
    await session.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opening a header compiles the units that include it, and its kernels show every instantiation they compiled', async () => {
    session.open(uriOf('kernels.cuh'), textOf('kernels.cuh'));
    const hover = await hoverUntil('kernels.cuh', 'gemm(const T*', (m) => /2 instantiations compiled/.test(m));
    assert.match(hover, /2 instantiations compiled: 16–48 regs \(ptxas, sm_80\)/);
    assert.match(
      hover,
      /- `void gemm<float, 4>\(float const\*, float\*, int\)`: 16 registers, 0 B static smem on sm_80/,
    );
    assert.match(
      hover,
      /- `void gemm<double, 48>\(double const\*, double\*, int\)`: 48 registers, 0 B static smem on sm_80/,
    );
    // fill is declared in the header and defined in fill.cu, which includes it: compiled too.
    await hoverUntil('kernels.cuh', 'fill(float*', (m) => /Compiled: 8 regs \(ptxas, sm_80\)/.test(m));
  });

  it("a launch of a kernel another .cu defines gets that unit's figures; a template launched from a template shows the range of its instances", async () => {
    session.open(uriOf('main.cu'), textOf('main.cu'));
    // fill.cu's figures may come while main.cu itself still compiles: the hover says so until it ends.
    const fill = await hoverUntil(
      'main.cu',
      'fill<<<',
      (m) => /\| occupancy \| \*\*100%\*\*/.test(m) && !/ptxas running/.test(m),
    );
    assert.match(fill, /Figures: 8 registers, 0 B static smem \(ptxas, sm_80, just now\)\./);
    const gemm = await hoverUntil('main.cu', 'gemm<T, MB>', (m) => /instantiations/.test(m));
    assert.match(
      gemm,
      /No occupancy for sm_80: 2 compiled instantiations could run here \(16–48 registers\): 62\.5%–100%\./,
    );
    assert.match(
      gemm,
      /Figures: 16–48 registers over 2 instantiations that could run here, 0 B static smem \(ptxas, sm_80, just now\)\./,
    );
    const lenses = (await session.codeLenses(uriOf('main.cu'))) ?? [];
    assert.ok(
      lenses.some((l) => l.command?.title === '128 threads · sm_80 62.5%–100% over 2 instantiations (16–48 regs)'),
      lenses.map((l) => l.command?.title).join('\n'),
    );
  });

  it('while ptxas runs, the hover says so and gives the register budget', async () => {
    session.open(uriOf('main.cu'), textOf('main.cu'));
    const hover = await hoverUntil('main.cu', 'tile<128, false>', (m) => /ptxas running/.test(m));
    assert.match(hover, /Figures: registers not known yet for sm_80 \(ptxas running for sm_80 on main\.cu, \d+ s\)\./);
    assert.match(hover, /\*\*Register budget\*\* at 128 threads \(sm_80\): 100% ≤ 32 · .* registers per thread\./);
    assert.ok(statuses.some((s) => s.state === 'compiling'));
  });

  it('right after opening, before nvcc has started, the hover, the lens and the status bar say it is compiling', async () => {
    session.open(uriOf('main.cu'), textOf('main.cu'));
    // The first hover, at once: the compile waits out its debounce, and nothing says "registers unknown".
    const hover = await hoverAt('main.cu', 'tile<128, false>');
    assert.match(
      hover,
      /Figures: registers not known yet for (sm_80 \((compiling main\.cu…|ptxas running for sm_80 on main\.cu, \d+ s)\)|sm_80 and sm_90 \(starting: nvcc compiles once the settings are read\))\./,
    );
    assert.doesNotMatch(hover, /save with nvcc available|registers unknown/);
    const lenses = (await session.codeLenses(uriOf('main.cu'))) ?? [];
    assert.ok(
      lenses.some((l) =>
        /^128 threads · (compiling…|ptxas running) · sm_80 100% needs ≤ 32 regs/.test(l.command?.title ?? ''),
      ),
      lenses.map((l) => l.command?.title).join('\n'),
    );
    const deadline = Date.now() + 10000;
    while (Date.now() < deadline && !statuses.some((s) => s.state === 'compiling'))
      await new Promise((r) => setTimeout(r, 20));
    assert.ok(statuses.some((s) => s.state === 'compiling'));
  });

  it('when nvcc is missing, the hover asks for it, and says compiling no longer', async () => {
    session.open(uriOf('main.cu'), textOf('main.cu'));
    const hover = await hoverUntil('main.cu', 'tile<128, false>', (m) => /nvcc was not found/.test(m));
    assert.match(
      hover,
      /Figures: registers unknown for sm_80: nvcc was not found; save with nvcc available \(`cudaOccupancy\.nvcc\.path`\), pass a build log, or add `\/\/ occupancy: regs=N` above the kernel\./,
    );
    assert.doesNotMatch(hover, /compiling/);
  });

  it('a failed compile shows in the hover, the status bar and one diagnostic at the top of the file', async () => {
    const uri = uriOf('sample.cu');
    session.open(uri, textOf('sample.cu'));
    const diagnostics = await session.waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'nvcc-failed'), 20000);
    const failed = diagnostics.filter((d) => d.code === 'nvcc-failed');
    assert.equal(failed.length, 1);
    assert.deepEqual(failed[0].range.start, { line: 0, character: 0 });
    assert.match(
      failed[0].message,
      /helper_cuda_missing\.h: No such file or directory\. To fix it, set `cudaOccupancy\.nvcc\.includePaths` to the folder that holds it/,
    );
    const hover = await hoverAt('sample.cu', 'testKernel<<<');
    assert.match(
      hover,
      /registers unknown for sm_80: nvcc failed on sample\.cu: `helper_cuda_missing\.h`: no such file; set `cudaOccupancy\.nvcc\.includePaths`/,
    );
    assert.doesNotMatch(hover, /save with nvcc available/);
    const deadline = Date.now() + 10000;
    while (Date.now() < deadline && statuses[statuses.length - 1]?.state !== 'nvcc-failed')
      await new Promise((r) => setTimeout(r, 50));
    const last = statuses[statuses.length - 1];
    assert.equal(last.state, 'nvcc-failed');
    assert.match(
      last.message,
      /nvcc failed for sample\.cu: `helper_cuda_missing\.h`: no such file; set `cudaOccupancy\.nvcc\.includePaths`/,
    );
  });
});
