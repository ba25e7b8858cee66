/**
 * Register pressure from SASS through the bundled server, where the toolkit has nvdisasm: the
 * figures compile keeps its cubin, nvdisasm's life ranges replace the PTX estimate in the hover and
 * the peak's lens, and each line with local-memory stores or loads in a kernel ptxas says spills gets
 * a `register-spill-here` diagnostic. This machine's toolkit has no nvdisasm: nvdisasm is
 * test/fixtures/fake-nvdisasm/nvdisasm printing test/fixtures/sass-pressure/spills.sm_80.sass.txt, a
 * listing written in NVIDIA's documented output format; nvcc is the fake nvcc-capped (it caps heavy
 * at 48 registers under `__launch_bounds__(256, 5)` and spills the rest).
 */
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { LspSession, REPO_ROOT, fileUri } from '../support/lsp-session';
import { fakeNvcc, loggedRuns } from '../support/nvcc';
import { PRESSURE_REQUEST, type PressureResult } from '../../server/src/protocol';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'sass-pressure');
const FAKE_NVDISASM_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'fake-nvdisasm');
/** Only node's folder (the fake tools start with `#!/usr/bin/env node`), so a real nvdisasm elsewhere is not found. */
const NODE_ONLY_PATH = path.dirname(process.execPath);

describe('register pressure from SASS (bundled server, fake nvcc and nvdisasm, documented format)', function () {
  this.timeout(60000);
  let dir: string;
  let session: LspSession | null = null;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-sass-'));
    for (const name of ['spills.cu', 'spills.sm_80.ptx', 'spills.sm_80.sass.txt'])
      cpSync(path.join(FIXTURES, name), path.join(dir, name));
  });
  afterEach(async () => {
    await session?.stop();
    session = null;
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (pathEnv: string, extra: Record<string, string> = {}) => {
    session = await LspSession.start({
      rootDir: dir,
      settings: { architectures: ['sm_80'], nvcc: { path: fakeNvcc('nvcc-capped') } },
      initializationOptions: { cacheDir: null },
      env: { PATH: pathEnv, ...extra },
    });
    const file = path.join(dir, 'spills.cu');
    const uri = fileUri(file);
    session.open(uri, readFileSync(file, 'utf8'));
    return uri;
  };
  const spillsHere = (d: Diagnostic[]) => d.filter((x) => x.code === 'register-spill-here');

  it('puts each spilling line at its source line (information), and the hover and lens read the SASS (documented format)', async () => {
    const argsLog = path.join(dir, 'nvdisasm-args.log');
    const uri = await start(`${FAKE_NVDISASM_DIR}${path.delimiter}${NODE_ONLY_PATH}`, {
      FAKE_NVDISASM_ARGS_LOG: argsLog,
    });
    const diagnostics = await session!.waitForDiagnostics(uri, (d) => spillsHere(d).length > 0, 30000);
    assert.deepEqual(
      spillsHere(diagnostics).map((d) => [d.range.start.line, d.severity, d.message]),
      [
        [
          5,
          3,
          'heavy spills registers here: 2 local-memory stores (STL) in the SASS for sm_80 (ptxas: 256 B spill stores / 260 B loads per thread). Fewer values live across this line lets ptxas keep them in registers.',
        ],
        [
          7,
          3,
          'heavy spills registers here: 2 local-memory loads (LDL) in the SASS for sm_80 (ptxas: 256 B spill stores / 260 B loads per thread). Fewer values live across this line lets ptxas keep them in registers.',
        ],
      ],
    );
    // The kernel's own spill warning is still there, on its name.
    assert.ok(diagnostics.some((d) => d.code === 'register-spill' && d.range.start.line === 2));

    const hover = await session!.hover(uri, { line: 5, character: 4 });
    assert.equal(
      (hover?.contents as { value: string }).value,
      "**Register pressure:** 48 registers live at this line (SASS from nvdisasm, after register allocation; ptxas allocated 48 on sm_80). Local memory here: 2 stores (STL), 0 loads (LDL). The kernel's pressure peaks here.",
    );
    const lenses = (await session!.codeLenses(uri)) ?? [];
    assert.equal(
      lenses.find((l) => l.range.start.line === 5)?.command?.title,
      'pressure peaks here (48 registers live, SASS)',
    );
    const result = await session!.request<PressureResult>(PRESSURE_REQUEST, { uri });
    assert.equal(result?.estimate, 'sass');
    assert.deepEqual(
      result?.kernels[0].lines.map((l) => [l.line, l.live]),
      [
        [2, 1],
        [3, 3],
        [5, 48],
        [7, 47],
        [8, 4],
        [9, 0],
      ],
    );

    const runs = loggedRuns(argsLog);
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0].slice(0, 2), ['--print-life-ranges', '--print-line-info']);
    assert.ok(
      session!.logs.some((l) => /^register pressure from SASS: .*nvdisasm/.test(l)),
      session!.logs.join('\n'),
    );
  });

  it('without nvdisasm: says once that the pressure is the PTX estimate, and places no spill at a line', async () => {
    const uri = await start(NODE_ONLY_PATH);
    await session!.waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'register-spill'), 30000);
    const hover = await waitForHover(uri, { line: 5, character: 4 }, /Register pressure/);
    assert.match(
      hover,
      /^\*\*Register pressure \(estimate\):\*\* about \d+ values live at this line \(PTX, before register allocation; ptxas allocated 48 on sm_80\)/,
    );
    assert.equal(spillsHere(session!.diagnostics.get(uri)!.diagnostics).length, 0);
    assert.equal(session!.logs.filter((l) => /nvdisasm not found/.test(l)).length, 1, session!.logs.join('\n'));
    assert.match(
      session!.logs.find((l) => /nvdisasm not found/.test(l))!,
      /the register pressure per line is the PTX estimate/,
    );
  });

  it('falls back to the PTX estimate when nvdisasm fails on the cubin (documented format)', async () => {
    const uri = await start(`${FAKE_NVDISASM_DIR}${path.delimiter}${NODE_ONLY_PATH}`, { FAKE_NVDISASM_FAIL: '1' });
    const hover = await waitForHover(uri, { line: 5, character: 4 }, /Register pressure/);
    assert.match(hover, /^\*\*Register pressure \(estimate\):\*\*/);
    assert.equal(spillsHere(session!.diagnostics.get(uri)?.diagnostics ?? []).length, 0);
    assert.ok(
      session!.logs.some((l) => /^nvdisasm failed for .*spills\.cu \(sm_80\).*not a valid cubin/.test(l)),
      session!.logs.join('\n'),
    );
  });

  async function waitForHover(uri: string, position: { line: number; character: number }, accept: RegExp) {
    const deadline = Date.now() + 30000;
    let markdown = '';
    while (Date.now() < deadline) {
      const hover = await session!.hover(uri, position);
      markdown = (hover?.contents as { value: string } | undefined)?.value ?? '';
      if (accept.test(markdown)) return markdown;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`no matching hover: ${JSON.stringify(markdown)}\n${session!.logs.join('\n')}`);
  }
});
