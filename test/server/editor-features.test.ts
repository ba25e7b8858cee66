/**
 * The editor features as a user meets them, through the bundled server: a `.cu`
 * snippet with a `|` cursor and the exact hover, lens titles, diagnostics and
 * code-action edits expected. Untitled documents: nvcc never runs on them, so the
 * figures come from the annotation and every number here is fixed.
 */
import * as assert from 'node:assert/strict';
import { fakeNvcc } from '../support/nvcc';
import { LspSession, withCursor } from '../support/lsp-session';
import type { CodeAction } from 'vscode-languageserver-protocol';

const TILE_SUM = `// occupancy: regs=40 smem=1024
template <int BS>
__global__ void tile_sum(const float* __restrict__ in, float* out, int n) {
  int i = blockIdx.x * BS + threadIdx.x;
  if (i < n) out[i] = in[i];
}
void run(const float* in, float* out, int n, cudaStream_t st) {
  tile_|sum<256><<<120, 256, 0, st>>>(in, out, n);
}
`;

describe('editor features (bundled server, untitled documents)', function () {
  let session: LspSession;
  let n = 0;
  const open = (snippet: string) => {
    const { text, position } = snippet.includes('|')
      ? withCursor(snippet)
      : { text: snippet, position: { line: 0, character: 0 } };
    const uri = `untitled:Untitled-${++n}`;
    session.open(uri, text);
    return { uri, position };
  };

  before(async () => {
    session = await LspSession.start();
  });
  /** The hover, polled until it matches (a setting reaches the server after a moment), or the last one. */
  const hoverMatching = async (uri: string, position: { line: number; character: number }, pattern: RegExp) => {
    let value = '';
    for (let i = 0; i < 50 && !pattern.test(value); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 50));
      const hover = await session.hover(uri, position);
      value = hover && typeof hover.contents === 'object' && 'value' in hover.contents ? hover.contents.value : '';
    }
    return value;
  };
  const WIDE = /^\*\*k\*\*: 512 threads, 16 warps per block/;
  after(async () => {
    await session.stop();
  });

  it('hovers a launch with the answer first: the occupancy and the ceilings per architecture, the next step, the figures, then the latency estimate', async () => {
    const { uri, position } = open(TILE_SUM);
    // A new document's kernel bodies get a short first pass, the rest follow in the background;
    // its diagnostics come once they are all read (the latency line needs the kernel's loads).
    await session.waitForDiagnostics(uri);
    const hover = await session.hover(uri, position);
    assert.ok(hover && typeof hover.contents === 'object' && 'value' in hover.contents);
    assert.equal(
      hover.contents.value,
      [
        '**tile_sum\\<256\\>**: 256 threads, 8 warps per block, 0 B dynamic shared memory',
        '',
        '| | sm_80 | sm_90 |',
        '|---|---|---|',
        '| occupancy | **75%** · 6 blocks/SM · 48/64 warps | **75%** · 6 blocks/SM · 48/64 warps |',
        '| limited by | **registers** (6 blocks) | **registers** (6 blocks) |',
        '| other ceilings | warp slots 8 · block slots 32 · smem 82 | warp slots 8 · block slots 32 · barriers 64 · smem 114 |',
        '',
        '**Next step:** at ≤ 32 registers per thread, 8 blocks fit (100%) on sm_80. Try `__launch_bounds__(256, 8)` (ptxas targets ≤ 32 registers and may spill to meet it).',
        '',
        'Figures: 40 registers, 1 KB static smem (annotation, sm_80 and sm_90).',
        '',
        "**On the A100 SXM4 40GB:** 120 blocks = 0.19 of a wave (6 blocks per SM × 108 SMs = 648 per wave): 12 SMs run 2 and 96 SMs run 1, of the 6 each could hold. The grid, not occupancy, limits this launch. Latency (estimate): 24–52 warps needed to keep DRAM busy (bandwidth-bound, L = 290–640 cycles as published, 1 load in flight per warp and 8 instructions per run of the kernel, estimated from the source); 48 resident, covered at the low latency, 92.3% at the high. Little's law, W = ⌈min(r, S × p / n) × (L + n) / p⌉; ILP lowers it as much as occupancy does.",
        '',
        "**On the H100 SXM5:** 120 blocks = 0.15 of a wave (6 blocks per SM × 132 SMs = 792 per wave): 120 SMs run 1, of the 6 each could hold; 12 SMs stay idle. The grid, not occupancy, limits this launch. Latency (estimate): 49–84 warps needed to keep DRAM busy (bandwidth-bound, L = 480–830 cycles as published, 1 load in flight per warp and 8 instructions per run of the kernel, estimated from the source); 48 resident, short: 98% of the low latency covered. Little's law, W = ⌈min(r, S × p / n) × (L + n) / p⌉; ILP lowers it as much as occupancy does.",
      ].join('\n'),
    );
  });

  it('reads the loads in flight and the work between them: 32 loads unrolled ahead of their use need 2–3 warps', async () => {
    // With the work known (228 instructions a run, from the syntax), the reading is for it: the issue-bound upper bound (a load on every instruction) is not named.
    const { uri, position } = open(`// occupancy: regs=16
__global__ void gather32(const float* __restrict__ in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma unroll
  for (int k = 0; k < 32; ++k) s += in[i + k * n];
  out[i] = s;
}
void run(const float* in, float* out, int n) {
  gath|er32<<<120, 256>>>(in, out, n);
}
`);
    await session.waitForDiagnostics(uri);
    const hover = await session.hover(uri, position);
    const text = hover && typeof hover.contents === 'object' && 'value' in hover.contents ? hover.contents.value : '';
    const latency = text
      .split('\n\n')
      .find((p) => p.startsWith('**On the A100'))
      ?.replace(/^.*Latency \(estimate\): /, '');
    assert.ok(latency, text);
    assert.equal(
      latency,
      "2–3 warps needed to keep DRAM busy (bandwidth-bound, L = 290–640 cycles as published, 32 loads in flight per warp and 228 instructions per run of the kernel, estimated from the source); 64 resident, covered even at the high latency. Aim for a full gap, not a full stadium: the kernel could use up to 255 registers per thread (now 16) on unrolling or ILP and still hold the 3 warps. Little's law, W = ⌈min(r, S × p / n) × (L + n) / p⌉; ILP lowers it as much as occupancy does.",
    );
    assert.doesNotMatch(text, /needs 1880 warps/);
  });

  it('shows a lens over the kernel and over the launch', async () => {
    const { uri } = open(TILE_SUM);
    const lenses = await session.codeLenses(uri);
    assert.deepEqual(
      lenses?.map((l) => [l.range.start.line, l.command?.title]),
      [
        [1, 'sm_80 75% · sm_90 75% at 256 threads · limited by registers (40/thread) · 1 KB smem'],
        [7, 'sm_80 75% (6 blocks/SM) · sm_90 75% (6 blocks/SM) · limited by registers'],
      ],
    );
    assert.equal(lenses?.[0].command?.command, 'cudaOccupancy.showChart');
  });

  it('offers the register cap for one more block as a __launch_bounds__ edit', async () => {
    const { uri, position } = open(TILE_SUM);
    const actions = await session.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: position, end: position },
      context: { diagnostics: [] },
    });
    const cap = actions.find((a) => a.title.startsWith('Add __launch_bounds__'));
    assert.ok(cap, JSON.stringify(actions.map((a) => a.title)));
    // Short enough for the menu: what ptxas is asked for and may do is in the hover's next step.
    assert.equal(cap.title, 'Add __launch_bounds__(256, 8): 8 blocks/SM (100%)');
    assert.deepEqual(cap.edit?.changes?.[uri], [
      {
        range: { start: { line: 2, character: 16 }, end: { line: 2, character: 16 } },
        newText: '__launch_bounds__(256, 8) ',
      },
    ]);
  });

  it('offers a better literal block size within the launch bounds', async () => {
    const { uri, position } = open(`// occupancy: regs=64
__global__ void __launch_bounds__(1024) wide(float* p) { p[threadIdx.x] = 0; }
void run(float* p) {
  wi|de<<<80, 96>>>(p);
}
`);
    const actions = await session.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: position, end: position },
      context: { diagnostics: [] },
    });
    const resize = actions.find((a) => a.title.startsWith('Use '));
    assert.ok(resize, JSON.stringify(actions.map((a) => a.title)));
    assert.match(resize.title, /^Use \d+ threads per block: 50% on sm_80 \(now 46\.9%\)$/);
    const edit = resize.edit?.changes?.[uri]?.[0];
    assert.deepEqual(edit?.range, { start: { line: 3, character: 13 }, end: { line: 3, character: 15 } });
  });

  it('offers the same actions for any range that overlaps the launch: a whole line, or lines around it', async () => {
    const { uri, position } = open(TILE_SUM);
    const titlesFor = async (range: {
      start: { line: number; character: number };
      end: { line: number; character: number };
    }) =>
      (
        await session.request<CodeAction[]>('textDocument/codeAction', {
          textDocument: { uri },
          range,
          context: { diagnostics: [] },
        })
      ).map((a) => a.title);
    const atCursor = await titlesFor({ start: position, end: position });
    assert.ok(atCursor.length > 0);
    // Line 8 is `  tile_sum<256><<<120, 256, 0, st>>>(in, out, n);`: the launch starts at column 2.
    assert.deepEqual(
      await titlesFor({ start: { line: 7, character: 0 }, end: { line: 8, character: 0 } }),
      atCursor,
      'the whole line',
    );
    assert.deepEqual(
      await titlesFor({ start: { line: 5, character: 0 }, end: { line: 9, character: 0 } }),
      atCursor,
      'lines around the launch',
    );
    assert.deepEqual(
      await titlesFor({ start: { line: 0, character: 0 }, end: { line: 6, character: 0 } }),
      [],
      'lines above it',
    );
  });

  it('marks a launch above __launch_bounds__ as an error with the bound as related information', async () => {
    const { uri } = open(`__global__ void __launch_bounds__(128) scale_rows(float* m) {}
void run(float* m) { scale_rows<<<64, 256>>>(m); }
`);
    const diagnostics = await session.waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'launch-exceeds-bounds'));
    const d = diagnostics.find((x) => x.code === 'launch-exceeds-bounds')!;
    assert.equal(d.severity, 1);
    assert.deepEqual(d.range.start, { line: 1, character: 21 });
    assert.equal(d.relatedInformation?.[0].location.uri, uri);
    assert.deepEqual(d.relatedInformation?.[0].location.range.start, { line: 0, character: 16 });
  });

  it('claims no occupancy for a launch that fails, and offers both ways out', async () => {
    const { uri, position } = open(`// occupancy: regs=32
__global__ void __launch_bounds__(128) scale_rows(float* m) {}
void run(float* m) { scale_|rows<<<64, 256>>>(m); }
`);
    const lenses = await session.codeLenses(uri);
    assert.deepEqual(
      lenses?.map((l) => l.command?.title)[1],
      '256 threads · the launch fails: 256 threads per block is above __launch_bounds__(128)',
    );
    const hover = await session.hover(uri, position);
    assert.match(
      hover && typeof hover.contents === 'object' && 'value' in hover.contents ? hover.contents.value : '',
      /No occupancy for sm_80 and sm_90: the launch fails: 256 threads per block is above `__launch_bounds__\(128\)`\./,
    );
    const actions = await session.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: position, end: position },
      context: { diagnostics: [] },
    });
    const edits = actions
      .filter((a) => a.kind === 'quickfix' && a.edit)
      .map((a) => [a.title.split(' (')[0], a.edit!.changes![uri]]);
    assert.deepEqual(edits, [
      [
        "Launch with 128 threads per block, the bound's most",
        [{ range: { start: { line: 2, character: 38 }, end: { line: 2, character: 41 } }, newText: '128' }],
      ],
      [
        'Raise the bound to __launch_bounds__(256)',
        [{ range: { start: { line: 1, character: 34 }, end: { line: 1, character: 37 } }, newText: '256' }],
      ],
    ]);
  });

  it('warns on a branch that splits warps, and is quiet on a tail guard and a warp-uniform branch', async () => {
    const { uri } = open(`__global__ void k(float* buf, int n) {
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  if (i < n) buf[i] = 0;
  if (t / 32 == 0) buf[t] += 1;
  for (int r = 0; r < n; ++r) if (t % 2 == 0) { buf[t] += buf[t + 1] * 0.5f; buf[t] *= buf[t]; buf[t] -= 1; buf[t] /= 3; buf[t] += 2; }
}
void run(float* b, int n) { k<<<(n + 255) / 256, 256>>>(b, n); }
`);
    // In a loop: a split each thread passes once is a warning only when long (divergence-findings.ts).
    const diagnostics = await session.waitForDiagnostics(uri, (d) => d.some((x) => x.code === 'divergent-branch'));
    const divergent = diagnostics.filter((x) => x.code === 'divergent-branch');
    assert.deepEqual(
      divergent.map((x) => x.range.start.line),
      [5],
    );
    assert.equal(divergent[0].severity, 2);
    assert.match(divergent[0].message, /^`t % 2 == 0` splits every warp into two groups of 16 lanes/);
    assert.deepEqual(divergent[0].relatedInformation?.[0].location.range.start.line, 1);
  });

  it('hovers a divergent branch with its estimated path costs, and a tail guard with its verdict', async () => {
    const kernel = (cursorAt: 'split' | 'tail') => `__global__ void k(float* buf, int n) {
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  if (${cursorAt === 'tail' ? 'i |< n' : 'i < n'}) buf[i] = 0;
  if (${cursorAt === 'split' ? 't %| 2 == 0' : 't % 2 == 0'}) buf[t] += buf[t + 1] * 0.5f;
}
void run(float* b, int n) { k<<<(n + 255) / 256, 256>>>(b, n); }
`;
    const hoverOf = async (snippet: string) => {
      const { uri, position } = open(snippet);
      const hover = await session.hover(uri, position);
      assert.ok(hover && typeof hover.contents === 'object' && 'value' in hover.contents);
      return { value: hover.contents.value, range: hover.range };
    };
    const split = await hoverOf(kernel('split'));
    assert.equal(
      split.value,
      [
        '**divergent** `t % 2 == 0` in kernel `k`',
        '',
        '`t % 2 == 0` splits every warp into two groups of 16 lanes; the idle lanes wait through the body (about 5 instructions, estimated from the syntax) (50% of the lanes active there). The else path is empty, so no extra issue slots are paid. It is short: the compiler will likely predicate it instead of branching (the idle lanes still issue it).',
        '',
        'Path costs (issue slots per warp, estimated from the syntax): then 5 · else 0.',
        '',
        "A hint, not a warning: 2.5 issue slots per warp with lanes idle, 16% of the kernel's 16; a warning from 4 slots and 8% (`cudaOccupancy.divergence.minCost`, `cudaOccupancy.divergence.minShare`).",
        '',
        'Thread index from `int t = threadIdx.x;` (line 2).',
        '',
        '**Suggestion:** Index the work so the active lanes are contiguous (e.g. sequential addressing `tid < s` instead of `tid % (2*s) == 0`): whole warps then drop out together.',
        '',
        'Assumptions:',
        '- path costs are estimates from the syntax tree (about one instruction per operator, load, store or call)',
      ].join('\n'),
    );
    assert.deepEqual(split.range, { start: { line: 4, character: 6 }, end: { line: 4, character: 16 } });
    const tail = await hoverOf(kernel('tail'));
    assert.equal(
      tail.value,
      '**tail** `i < n` in kernel `k`\n\ntail guard: splits at most the last warp.\n\nThread index from `int i = blockIdx.x * blockDim.x + t;` (line 3).',
    );
  });

  it('offers the dynamic shared memory opt-in before a launch that needs it', async () => {
    const { uri } =
      open(`__global__ void big(float* p) { extern __shared__ float s[]; s[threadIdx.x] = p[threadIdx.x]; }
void run(float* p) {
    big<<<1, 256, 65536>>>(p);
}
`);
    const diagnostics = await session.waitForDiagnostics(uri, (d) =>
      d.some((x) => x.code === 'dynamic-smem-needs-opt-in'),
    );
    const needs = diagnostics.find((x) => x.code === 'dynamic-smem-needs-opt-in')!;
    assert.equal(needs.severity, 1);
    const actions = await session.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri },
      range: needs.range,
      context: { diagnostics: [needs] },
    });
    const optIn = actions.find((a) => a.title.startsWith('Opt in'));
    assert.ok(optIn);
    assert.deepEqual(optIn.edit?.changes?.[uri], [
      {
        range: { start: { line: 2, character: 4 }, end: { line: 2, character: 4 } },
        newText: 'cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n    ',
      },
    ]);
  });

  it('follows settings: architectures and lenses off', async () => {
    session.setSettings({ architectures: ['sm_90', '7.5'], codeLens: { enabled: true } });
    const { uri, position } = open(TILE_SUM);
    let value = '';
    for (let i = 0; i < 50 && !value.includes('| | sm_90 | sm_75 |'); i++) {
      const hover = await session.hover(uri, position);
      value = hover && typeof hover.contents === 'object' && 'value' in hover.contents ? hover.contents.value : '';
      if (!value.includes('| | sm_90 | sm_75 |')) await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(value, /\| \| sm_90 \| sm_75 \|/);
    session.setSettings({ codeLens: { enabled: false } });
    let lenses: unknown[] | null = [1];
    for (let i = 0; i < 50 && lenses && lenses.length; i++) {
      lenses = await session.codeLenses(uri);
      if (lenses?.length) await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(lenses, []);
    session.setSettings({});
  });
  it('follows settings: the defines nvcc gets decide the #ifdef a launch reads', async () => {
    session.setSettings({ nvcc: { defines: ['WIDE_BLOCKS'] } });
    const { uri, position } = open(`__global__ void k(float *p) { p[threadIdx.x] = 0; }
void run(float *p) {
#ifdef WIDE_BLOCKS
  const int threads = 512;
#else
  const int threads = 128;
#endif
  |k<<<1, threads>>>(p);
}
`);
    // Until the settings reach the server, the block is one of both arms'.
    assert.match(await hoverMatching(uri, position, WIDE), WIDE);
    session.setSettings({});
  });
  it('follows settings: the nvcc chosen decides `#if CUDART_VERSION` (the fake one is CUDA 99.0)', async () => {
    session.setSettings({ nvcc: { path: fakeNvcc('nvcc-ok') } });
    const { uri, position } = open(`__global__ void k(float *p) { p[threadIdx.x] = 0; }
void run(float *p) {
#if CUDART_VERSION >= 12000
  const int threads = 512;
#else
  const int threads = 64;
#endif
  |k<<<1, threads>>>(p);
}
`);
    // Until the settings reach the server, the block is one of both arms'.
    assert.match(await hoverMatching(uri, position, WIDE), WIDE);
    session.setSettings({});
  });
});
