/**
 * The bundled server in Neovim's built-in LSP client (nvim >= 0.7), driven headlessly by
 * test/rig/nvim-lsp.lua: hover, code lens, code actions on a whole line and diagnostics on
 * examples/reduce.cu. Skipped when nvim is not installed (`npm run test:setup` installs
 * Debian's neovim).
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT, SERVER_BUNDLE } from '../support/lsp-session';

const DRIVER = path.join(REPO_ROOT, 'test', 'rig', 'nvim-lsp.lua');
const NVIM = process.env.NVIM_BIN || 'nvim';
const FILE = path.join(REPO_ROOT, 'examples', 'reduce.cu');

interface Range {
  start: { line: number; character: number };
  end: { line: number; character: number };
}
interface RigResult {
  server: { name: string; capabilities: Record<string, unknown> };
  hover: { contents: { kind: string; value: string }; range?: Range } | null;
  codeLens: Array<{ range: Range; command?: { title: string } }> | null;
  codeActions: Array<{ title: string; kind?: string }> | null;
  diagnostics: Array<{
    range: Range;
    code: string;
    severity: number;
    message: string;
    source?: string;
    relatedInformation?: Array<{ message: string }>;
  }> | null;
  errors: string[];
  exit?: { code: number; signal: number };
}

function nvimVersion(): string | null {
  const r = spawnSync(NVIM, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n')[0] : null;
}

describe('Neovim (built-in LSP client) with cuda-occupancy-lsp --stdio', function () {
  this.timeout(90_000);
  let result: RigResult;

  before(function () {
    const version = nvimVersion();
    if (!version) {
      console.log(`    (skipped: \`${NVIM}\` is not installed; \`npm run test:setup\` installs Debian's neovim)`);
      this.skip();
    }
    assert.ok(existsSync(DRIVER), `${DRIVER} is missing`);
    assert.ok(existsSync(SERVER_BUNDLE), 'dist/server/server.js is missing: run `npm run build`');
    // Line 39 of reduce.cu: `  pair_mix<<<(n + 255) / 256, 256, 0, stream>>>(scratch, n);` (1-based line and column).
    // -u NONE: no user configuration; -i NONE: no shada file; -n: no swap file. Neovim's own log
    // and state go to a throwaway folder.
    const state = mkdtempSync(path.join(tmpdir(), 'cuda-occ-nvim-'));
    const run = spawnSync(NVIM, ['--headless', '-u', 'NONE', '-i', 'NONE', '-n', '-c', `luafile ${DRIVER}`], {
      encoding: 'utf8',
      env: {
        ...process.env,
        LSP_CMD: JSON.stringify([process.execPath, SERVER_BUNDLE, '--stdio']),
        LSP_FILE: FILE,
        LSP_ROOT: REPO_ROOT,
        LSP_LINE: '39',
        LSP_COLUMN: '3',
        LSP_WAIT_MS: '10000',
        XDG_STATE_HOME: state,
        XDG_CACHE_HOME: state,
        XDG_DATA_HOME: state,
      },
      timeout: 80_000,
    });
    rmSync(state, { recursive: true, force: true });
    assert.equal(run.status, 0, `nvim exited ${run.status}: ${run.stderr}\n${run.stdout}`);
    result = JSON.parse(run.stdout) as RigResult;
    assert.deepEqual(result.errors, [], JSON.stringify(result.errors));
  });

  it('initializes the server and shuts it down cleanly', () => {
    assert.equal(result.server.name, 'cuda-occupancy');
    assert.ok(result.server.capabilities.hoverProvider);
    assert.ok(result.server.capabilities.codeLensProvider);
    assert.equal(result.exit?.code, 0);
  });

  it('hovers the launch with its block and the figures it lacks', () => {
    assert.ok(result.hover, 'no hover');
    assert.equal(result.hover.contents.kind, 'markdown');
    assert.match(result.hover.contents.value, /^\*\*pair_mix\*\*: 256 threads, 8 warps per block/);
    assert.deepEqual(result.hover.range?.start, { line: 38, character: 2 });
  });

  it('shows code lenses with the occupancy of the launches', () => {
    const lenses = result.codeLens ?? [];
    const titleAt = (line: number) =>
      lenses.filter((l) => l.range.start.line === line).map((l) => l.command?.title ?? '');
    // block_sum<REDUCE_THREADS> (256 threads, `// occupancy: regs=40 smem=1024`) at line 37.
    // 75% from the annotation, or 100% once ptxas (12 registers) has answered: ptxas figures win.
    assert.ok(
      titleAt(36).some((t) => /sm_80 (75|100)%.*sm_90 (75|100)%/.test(t)),
      JSON.stringify(lenses.map((l) => [l.range.start.line, l.command?.title])),
    );
    assert.ok(
      titleAt(38).some((t) => /256 threads/.test(t)),
      JSON.stringify(titleAt(38)),
    );
  });

  it("offers the launch's quick fixes for the whole line, the range Neovim sends from visual-line mode", () => {
    const titles = (result.codeActions ?? []).map((a) => a.title.split(' (')[0]);
    assert.deepEqual(titles, [
      "Launch with 128 threads per block, the bound's most",
      'Raise the bound to __launch_bounds__(256)',
    ]);
  });

  it('publishes the launch-bounds error with its related bound', () => {
    const diagnostics = result.diagnostics ?? [];
    const bound = diagnostics.find((d) => d.code === 'launch-exceeds-bounds');
    assert.ok(bound, JSON.stringify(diagnostics));
    assert.equal(bound.severity, 1);
    assert.equal(bound.range.start.line, 38);
    assert.equal(bound.source, 'cuda-occupancy');
    assert.match(bound.message, /256 threads per block.*at most 128/);
    assert.match(bound.relatedInformation?.[0]?.message ?? '', /__launch_bounds__\(128\)/);
    // The reduction's divergent branches are cheap (a few issue slots): hints, not warnings.
    assert.ok(
      diagnostics.some((d) => d.code === 'divergent-branch' && d.severity === 4),
      'the divergent reduction branch, as a hint',
    );
  });
});
