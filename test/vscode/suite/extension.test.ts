/** The extension in a real VS Code: open an example, read the lens and the hover our server gives. */
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { measureHover, probesAvailable } from './dom-probe';

async function poll<T>(what: string, get: () => Promise<T | undefined> | T | undefined, timeoutMs = 30000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await get();
    if (last !== undefined) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function hoverText(hovers: vscode.Hover[]): string {
  return hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
}

describe('CUDA Occupancy Lens in VS Code', () => {
  let doc: vscode.TextDocument;

  before(async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the examples folder is open');
    doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, 'reduce.cu'));
    await vscode.window.showTextDocument(doc);
  });

  it('opens .cu files as cuda-cpp', () => {
    assert.equal(doc.languageId, 'cuda-cpp');
  });

  it('shows a code lens over each kernel', async () => {
    const titles = await poll('code lenses from the server', async () => {
      const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri);
      const t = (lenses ?? []).map((l) => l.command?.title ?? '');
      return t.some((x) => /occupancy|launch|sm_\d+/.test(x)) ? t : undefined;
    });
    assert.ok(
      titles.some((t) => /sm_80 \d+(\.\d)?%/.test(t)),
      JSON.stringify(titles),
    );
  });

  it('hovers a launch with its occupancy per architecture', async () => {
    const line = doc
      .getText()
      .split('\n')
      .findIndex((l) => l.includes('block_sum<REDUCE_THREADS><<<'));
    assert.ok(line >= 0);
    const character = doc.lineAt(line).text.indexOf('block_sum') + 2;
    const text = await poll('a hover', async () => {
      const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
        'vscode.executeHoverProvider',
        doc.uri,
        new vscode.Position(line, character),
      );
      const t = hoverText(hovers ?? []);
      return t.includes('block_sum') ? t : undefined;
    });
    assert.match(text, /\*\*block_sum\\<REDUCE_THREADS\\>\*\*: 256 threads, 8 warps per block/);
    assert.match(text, /\| occupancy \|/);
    assert.match(text, /Figures: \d+ registers, .* \((annotation|ptxas), sm_80/);
  });

  it('starts the server as its bundle says (the heap cap, gc exposed), and reports its memory for bug reports', async () => {
    const usage = await vscode.commands.executeCommand<
      { rssMb: number; heapLimitMb: number; openDocuments: number; idleCollections: number | null } | undefined
    >('cudaOccupancy.memoryUsage');
    assert.ok(usage, 'the server answers');
    // --max-old-space-size=1024 plus --max-semi-space-size=8 (scripts/server-launch.cjs): 1048 MB; without them, a quarter of the machine's memory.
    assert.ok(usage.heapLimitMb >= 1024 && usage.heapLimitMb < 1060, JSON.stringify(usage));
    // --expose-gc: the server collects garbage in idle windows (server/src/idle-collector.ts).
    assert.equal(typeof usage.idleCollections, 'number', JSON.stringify(usage));
    assert.ok(usage.openDocuments >= 1 && usage.rssMb > 10, JSON.stringify(usage));
  });

  it('marks the launch above __launch_bounds__ as an error', async () => {
    const diagnostics = await poll('diagnostics', () => {
      const d = vscode.languages.getDiagnostics(doc.uri).filter((x) => x.source === 'cuda-occupancy');
      return d.some((x) => x.code === 'launch-exceeds-bounds') ? d : undefined;
    });
    const error = diagnostics.find((d) => d.code === 'launch-exceeds-bounds')!;
    assert.equal(error.severity, vscode.DiagnosticSeverity.Error);
    assert.match(doc.lineAt(error.range.start.line).text, /pair_mix<<</);
  });
});

describe('a quick fix in VS Code', () => {
  it('caps registers with __launch_bounds__, and the figures change after nvcc runs again', async function () {
    this.timeout(180000);
    const folder = vscode.workspace.workspaceFolders![0];
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, 'nbody.cu'));
    await vscode.window.showTextDocument(doc);
    const line = doc
      .getText()
      .split('\n')
      .findIndex((l) => l.includes('nbody_forces<<<'));
    const at = new vscode.Position(line, doc.lineAt(line).text.indexOf('nbody_forces') + 2);
    const hoverAt = async () =>
      hoverText(
        (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, at)) ?? [],
      );
    const withNvcc = process.env.CUDA_OCC_EXPECT_NVCC !== '0';
    if (!withNvcc) this.skip();

    const before = await poll(
      'ptxas figures for nbody_forces',
      async () => {
        const t = await hoverAt();
        return /\(ptxas, sm_80/.test(t) ? t : undefined;
      },
      120000,
    );
    const regsBefore = Number(/Figures: (\d+) registers/.exec(before)![1]);
    const occBefore = /\| occupancy \| \*\*([\d.]+)%\*\*/.exec(before)![1];

    const fix = await poll('the register-cap quick fix', async () => {
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
        'vscode.executeCodeActionProvider',
        doc.uri,
        new vscode.Range(at, at),
      );
      return actions?.find((a) => /^Add __launch_bounds__\(256, \d+\)/.test(a.title));
    });
    assert.ok(fix.edit && fix.title.length <= 60, fix.title);
    assert.ok(await vscode.workspace.applyEdit(fix.edit));
    assert.match(doc.getText(), /__launch_bounds__\(256, \d+\) nbody_forces/);
    await doc.save();

    const after = await poll(
      'new ptxas figures after the fix',
      async () => {
        const t = await hoverAt();
        const m = /Figures: (\d+) registers.*\(ptxas, sm_80/.exec(t);
        return m && Number(m[1]) < regsBefore ? t : undefined;
      },
      150000,
    );
    const regsAfter = Number(/Figures: (\d+) registers/.exec(after)![1]);
    const occAfter = /\| occupancy \| \*\*([\d.]+)%\*\*/.exec(after)![1];
    assert.ok(regsAfter < regsBefore, `${regsBefore} -> ${regsAfter}`);
    assert.ok(Number(occAfter) > Number(occBefore), `${occBefore}% -> ${occAfter}%`);
  });
});

describe('a long hover in the VS Code window', () => {
  // A launch at 75% with a next step and a latency estimate, a latency hint above it: a long hover.
  const TILE_SUM = `// occupancy: regs=40 smem=1024
template <int BS>
__global__ void tile_sum(const float* __restrict__ in, float* out, int n) {
  int i = blockIdx.x * BS + threadIdx.x;
  if (i < n) out[i] = in[i];
}
void run(const float* in, float* out, int n, cudaStream_t st) {
  tile_sum<256><<<120, 256, 0, st>>>(in, out, n);
}
`;
  // The shape of a register-tiled GEMM launch (SGEMM_CUDA's runner.cu): a kernel written in a header with
  // its bounds and nine template arguments, launched from a .cu; 120 threads, not a whole number of warps,
  // put a note at the launch, above the hover (the notes about the grid and latency sit on <<<...>>>).
  const GEMM_CUH = `#pragma once
// occupancy: regs=167
template <const int BM, const int BN, const int BK, const int WM, const int WN, const int WNITER, const int TM,
          const int TN, const int NUM_THREADS>
__global__ void __launch_bounds__(NUM_THREADS) gemm_tiles(int M, int N, int K, float alpha, float *A, float *B,
                                                          float beta, float *C) {
  C[threadIdx.x] = alpha * A[threadIdx.x] * B[threadIdx.x] + beta * BM * BN * BK * WM * WN * WNITER * TM * TN;
}
`;
  const GEMM_CU = `#include "gemm-fit.cuh"
const uint K_BM = 128, K_BN = 128, K_BK = 16, K_WM = 64, K_WN = 64, K_WNITER = 4, K_TM = 8, K_TN = 4;
const uint K_NUM_THREADS = 120;
void run(int M, int N, int K, float alpha, float *A, float *B, float beta, float *C) {
  dim3 blockDim(K_NUM_THREADS);
  dim3 gridDim(8);
  gemm_tiles<K_BM, K_BN, K_BK, K_WM, K_WN, K_WNITER, K_TM, K_TN, K_NUM_THREADS>
      <<<gridDim, blockDim>>>(M, N, K, alpha, A, B, beta, C);
}
`;

  /** Hovers the launch at `at` as a user would (the hover widget, at the default window size) and measures it. */
  async function measuredAt(uri: vscode.Uri, at: vscode.Position, ready: string, screenshot: string) {
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc);
    await poll(`the full hover (${ready})`, async () => {
      const t = hoverText(
        (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, at)) ?? [],
      );
      return t.includes(ready) ? t : undefined;
    });
    // Its diagnostics come first in the hover, above ours: the worst case.
    await poll(
      'diagnostics on the launch',
      () => (vscode.languages.getDiagnostics(uri).some((d) => d.source === 'cuda-occupancy') ? true : undefined),
      10000,
    ).catch(() => undefined);
    editor.selection = new vscode.Selection(at, at);
    await vscode.commands.executeCommand('editor.action.showHover');
    const hover = await measureHover({ waitFor: 'occupancy', line: 'Figures:', screenshot });
    console.log(
      `      hover in a ${hover.window.width}x${hover.window.height} window: ${hover.contentHeight} px of content, ${hover.visibleBottom - hover.visibleTop} px shown, ${hover.scrollHidden} px behind the scroll bar; the occupancy table at ${hover.tableTop}-${hover.tableBottom} of ${hover.visibleTop}-${hover.visibleBottom} (${hover.screenshot})`,
    );
    return hover;
  }

  it('shows the whole occupancy table without scrolling, at the default window size, under a diagnostic', async function () {
    if (!probesAvailable()) this.skip();
    this.timeout(120000);
    const folder = vscode.workspace.workspaceFolders![0];
    const tile = vscode.Uri.joinPath(folder.uri, 'hover-fit.cu');
    await vscode.workspace.fs.writeFile(tile, Buffer.from(TILE_SUM));
    const header = vscode.Uri.joinPath(folder.uri, 'gemm-fit.cuh');
    await vscode.workspace.fs.writeFile(header, Buffer.from(GEMM_CUH));
    // Opened, the header is in the server's index (it was written after the workspace was read).
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(header));
    const gemm = vscode.Uri.joinPath(folder.uri, 'gemm-fit.cu');
    await vscode.workspace.fs.writeFile(gemm, Buffer.from(GEMM_CU));
    for (const [uri, at, ready, shot] of [
      [tile, new vscode.Position(7, 5), 'Latency (estimate', 'hover-fit.png'],
      [gemm, new vscode.Position(6, 5), 'Figures:', 'hover-fit-gemm.png'],
    ] as const) {
      const hover = await measuredAt(uri, at, ready, shot);
      assert.ok(
        hover.tableTop !== null && hover.tableBottom !== null,
        `no occupancy table in the hover:\n${hover.text}`,
      );
      assert.ok(
        hover.tableTop >= hover.visibleTop && hover.tableBottom <= hover.visibleBottom,
        `the occupancy table (${hover.tableTop}-${hover.tableBottom}) is cut off: the hover shows ${hover.visibleTop}-${hover.visibleBottom} (${hover.scrollHidden} px behind the scroll bar)\n${hover.text}`,
      );
      await vscode.commands.executeCommand('editor.action.hideHover').then(undefined, () => undefined);
    }
  });
});

describe('settings a workspace writes', () => {
  it('runs no nvcc the workspace settings name, and takes the limits from user settings only', async function () {
    this.timeout(180000);
    if (process.env.CUDA_OCC_EXPECT_NVCC === '0' || !vscode.workspace.isTrusted) this.skip();
    const fs = await import('node:fs');
    const folder = vscode.workspace.workspaceFolders![0];
    const file = (name: string) => vscode.Uri.joinPath(folder.uri, name).fsPath;
    fs.writeFileSync(file('workspace-nvcc.sh'), `#!/bin/sh\necho ran > '${file('ran-workspace-nvcc')}'\nexit 1\n`, {
      mode: 0o755,
    });
    fs.mkdirSync(file('.vscode'), { recursive: true });
    // nvcc.path from the workspace runs only when the user's allow-list has it; the limits are the user's alone
    // (scope machine); the architecture (an ordinary setting) shows that the server read this file.
    fs.writeFileSync(
      file('.vscode/settings.json'),
      JSON.stringify({
        'cudaOccupancy.nvcc.path': file('workspace-nvcc.sh'),
        'cudaOccupancy.nvcc.allowedCompilers': [file('*')],
        'cudaOccupancy.limits.lineLength': 1000,
        'cudaOccupancy.architectures': ['sm_75'],
      }),
    );
    const text = `__global__ void __launch_bounds__(64) wide(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { wide<<<1, 128>>>(p); /* ${'x'.repeat(2000)} */ }\n`;
    fs.writeFileSync(file('ws-settings.cu'), text);
    try {
      await poll('the workspace settings', () =>
        vscode.workspace.getConfiguration('cudaOccupancy').get<string[]>('architectures')?.[0] === 'sm_75'
          ? true
          : undefined,
      );
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file('ws-settings.cu')));
      await vscode.window.showTextDocument(doc);
      const at = new vscode.Position(1, text.split('\n')[1].indexOf('wide') + 1);
      // Figures from ptxas for sm_75: a compile ran after the server read the workspace's settings, with the default nvcc.
      const hover = await poll(
        'ptxas figures for sm_75',
        async () => {
          const t = hoverText(
            (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, at)) ?? [],
          );
          return /\(ptxas, sm_75/.test(t) ? t : undefined;
        },
        150000,
      );
      assert.match(hover, /wide/);
      assert.equal(fs.existsSync(file('ran-workspace-nvcc')), false, 'the nvcc named in the workspace settings ran');
      const diagnostics = vscode.languages.getDiagnostics(doc.uri).filter((d) => d.source === 'cuda-occupancy');
      assert.ok(
        diagnostics.some((d) => d.code === 'launch-exceeds-bounds') &&
          !diagnostics.some((d) => d.code === 'too-large-to-analyse'),
        JSON.stringify(diagnostics.map((d) => d.code)),
      );
    } finally {
      for (const name of ['.vscode/settings.json', 'workspace-nvcc.sh', 'ws-settings.cu', 'ran-workspace-nvcc'])
        fs.rmSync(file(name), { force: true });
    }
  });
});
