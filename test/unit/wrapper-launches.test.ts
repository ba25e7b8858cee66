/**
 * Launch wrappers: a function or class that launches the kernel, or with the block size, it is
 * given. Each call is a launch of the kernel it passes, read with the call's arguments and
 * reported at the call.
 */
import * as assert from 'node:assert/strict';
import { loadFileAloneParser, readAlone } from '../support/file-alone';
import { WorkspaceIndex } from '../../server/src/core/facts/workspace-index';
import type { Launch } from '../../server/src/core/types';
import { analyzeSnippet } from '../support/analyze-snippet';

/** `line: kernel block smem [via wrapper]`, lines 1-based. */
function describeLaunch(l: Launch): string {
  const block = l.block.value ? `${l.block.value.x}x${l.block.value.y}x${l.block.value.z}` : 'null';
  return `${l.span.start.line + 1}: ${l.kernelName} ${block} ${l.dynamicSmem.value ?? 'null'}${l.through ? ` via ${l.through.name}` : ''}`;
}
const launches = (text: string) => readAlone(text).launches.map(describeLaunch);

describe('launch wrappers', () => {
  before(loadFileAloneParser);

  it("reads a project's own launch(kernel, grid, block, smem, stream, args...) at each call", () => {
    const text = [
      'template <typename Kernel, typename... Args>',
      'void start(Kernel kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t stream, Args... args) {',
      '  kernel<<<grid, block, smem, stream>>>(args...);',
      '}',
      'void host(float* p, int n, cudaStream_t s) {',
      '  constexpr int kRows = 8;',
      '  start(row_sum, dim3(n), dim3(32, kRows), 0, s, p, n);',
      '  start(col_sum, n, 256, 1024, s, p);',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), [
      '3: kernel null null',
      '7: row_sum 32x8x1 0 via start',
      '8: col_sum 256x1x1 1024 via start',
    ]);
    const call = readAlone(text).launches[1];
    assert.equal(call.block.note, null);
  });

  it('reads a defaulted template block size, overloads by their arguments, and explicit template arguments', () => {
    const text = [
      'template <int ITEMS = 4, int THREADS = 256, typename Op>',
      'inline void for_each(size_t n, cudaStream_t stream, Op op) {',
      '  const int blocks = (n + ITEMS * THREADS - 1) / (ITEMS * THREADS);',
      '  for_each_kernel<<<blocks, THREADS, 0, stream>>>(n, op);',
      '}',
      'template <int ITEMS = 4, int THREADS = 256, typename Op>',
      'inline void for_each(size_t n, Op op) {',
      '  for_each<ITEMS, THREADS>(n, nullptr, op);',
      '}',
      'void host(float* p, size_t n, cudaStream_t s) {',
      '  for_each(n, s, [=] __device__(size_t i) { p[i] = 0; });',
      '  for_each(n, [=] __device__(size_t i) { p[i] += 1; });',
      '  for_each<2, 512>(n, s, [=] __device__(size_t i) { p[i] *= 2; });',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), [
      '4: for_each_kernel null 0',
      '11: for_each_kernel 256x1x1 0 via for_each',
      '12: for_each_kernel 256x1x1 0 via for_each',
      '13: for_each_kernel 512x1x1 0 via for_each',
    ]);
  });

  it('reads a class whose call operator launches with what its constructor was given', () => {
    const text = [
      'class Launch {',
      '  dim3 grid_;',
      '  dim3 block_;',
      '  size_t smem_;',
      '  cudaStream_t stream_;',
      ' public:',
      '  Launch(uint32_t g, uint32_t b, size_t smem = 0, cudaStream_t s = nullptr) : grid_{g, 1, 1}, block_{b, 1, 1}, smem_{smem}, stream_{s} {}',
      '  Launch(dim3 g, dim3 b, size_t smem = 0, cudaStream_t s = nullptr) : grid_{g}, block_{b}, smem_{smem}, stream_{s} {}',
      '  template <typename K, typename... Args>',
      '  void operator()(K kernel, Args... args) {',
      '    if (grid_.x * grid_.y * grid_.z == 0) return;',
      '    kernel<<<grid_, block_, smem_, stream_>>>(args...);',
      '  }',
      '};',
      'void host(float* p, uint32_t n, cudaStream_t s) {',
      '  constexpr int kBlock = 128;',
      '  Launch{n, kBlock, 0, s}(tile_kernel<kBlock>, p, n);',
      '  const dim3 shape(32, 8, 1);',
      '  Launch{dim3(n), shape}(shape_kernel, p);',
      '  auto chosen = pick_kernel<float, 64>;',
      '  Launch(n, 64, 2048, s)(chosen, p);',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), [
      '12: kernel null null',
      '17: tile_kernel 128x1x1 0 via Launch',
      '19: shape_kernel 32x8x1 0 via Launch',
      '21: pick_kernel 64x1x1 2048 via Launch',
    ]);
    const picked = readAlone(text).launches[3];
    assert.deepEqual(
      [picked.templateArgs, picked.templateArgValues, picked.calledThrough],
      [['float', '64'], [null, 64], 'chosen'],
    );
  });

  it('reads a parameter its wrapper sets only under a condition the call makes false, and a call that leaves defaults to a declaration', () => {
    const text = [
      'void Context::run(CUfunction kernel, void** args, int work, int blockSize, unsigned shared) {',
      '  if (blockSize == -1)',
      '    blockSize = defaultBlockSize;',
      '  int grid = (work + blockSize - 1) / blockSize;',
      '  cuLaunchKernel(kernel, grid, 1, 1, blockSize, 1, 1, shared, stream, args, NULL);',
      '}',
      'void Context::clear(void** args, int words) {',
      '  run(clearKernel, args, words, 128);',
      '  run(fillKernel, args, words, 256, 4096);',
      '  run(sumKernel, args, words, -1, 0);',
      '  run(copyKernel, args, words);',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), [
      '5: kernel null null',
      '8: clearKernel 128x1x1 null via run',
      '9: fillKernel 256x1x1 4096 via run',
      '10: sumKernel null 0 via run',
      '11: copyKernel null null via run',
    ]);
  });

  it('reads what a configuration function leaves in the grid and block it takes by reference', () => {
    const text = [
      '__global__ void mask(float* m) {}',
      'void configure(dim3& grid, dim3& block, int batch, int len) {',
      '  int threads = 512;',
      '  grid.x = batch;',
      '  grid.y = (len * len / 2 - 1) / threads + 1;',
      '  block.x = threads;',
      '}',
      'void pick(int n, int& threads) { threads = n > 4096 ? 512 : 128; }',
      'void keep(int n, int& threads) { if (n < 0) return; }',
      'void host(float* m, int batch, int len) {',
      '  dim3 grid, block;',
      '  configure(grid, block, batch, len);',
      '  mask<<<grid, block>>>(m);',
      '  int threads = 64;',
      '  pick(len, threads);',
      '  mask<<<1, threads>>>(m);',
      '  int kept = 64;',
      '  keep(len, kept);',
      '  mask<<<1, kept>>>(m);',
      '}',
    ].join('\n');
    const found = readAlone(text).launches;
    assert.deepEqual(found.map(describeLaunch), ['13: mask 512x1x1 0', '16: mask null 0', '19: mask 64x1x1 0']);
    // Either arm of the callee's ternary: the two block sizes, not the 64 written before the call.
    assert.deepEqual(
      found[1].candidates?.map((b) => b.x),
      [128, 512],
    );
  });

  it("reads a class template's parameters in its members: unknown alone, hiding a namespace's constant, bound by `C<args>::f`", () => {
    const text = [
      'constexpr int BlockSize = 64;',
      '__global__ void k(float* m) {}',
      'template <int VecBytes = 16, int BlockSize = 256>',
      'struct Op {',
      '  static void run(float* m, int n) {',
      '    dim3 bs(BlockSize, 1, 1);',
      '    k<<<n, bs>>>(m);',
      '  }',
      '};',
      'void host(float* m, int n) {',
      '  Op<16, 128>::run(m, n);',
      '  Op<>::run(m, n);',
      '  k<<<n, BlockSize>>>(m);',
      '}',
    ].join('\n');
    const found = readAlone(text).launches;
    assert.deepEqual(found.map(describeLaunch), [
      '7: k null 0',
      '11: k 128x1x1 0 via Op<16,128>::run',
      '12: k 256x1x1 0 via Op<>::run',
      '13: k 64x1x1 0',
    ]);
    assert.equal(found[0].block.note, '`BlockSize` is a template parameter of `Op`, known only per instantiation');
  });

  it('reads a member of a type template parameter (`Policy::n_threads`) in the type each call binds, unknown per instance alone', () => {
    const text = [
      '__global__ void k(float* m) {}',
      'struct SmallPolicy { static constexpr int n_threads = 128; };',
      'template <int N> struct TiledPolicy { static constexpr int n_threads = N * 32; };',
      'template <typename Policy>',
      'void gather(float* m, int n) {',
      '  k<<<n, Policy::n_threads>>>(m);',
      '}',
      'void host(float* m, int n) {',
      '  gather<SmallPolicy>(m, n);',
      '  gather<TiledPolicy<8>>(m, n);',
      '}',
      'template <typename Policy>',
      'void scatter(float* m, int n) { k<<<n, Policy::n_threads>>>(m); }',
    ].join('\n');
    const found = readAlone(text).launches;
    assert.deepEqual(found.map(describeLaunch), [
      '6: k null 0',
      '9: k 128x1x1 0 via gather',
      '10: k 256x1x1 0 via gather',
      '13: k null 0',
    ]);
    // The launch in `gather` is one of its two instances' blocks; `scatter`, never called, is open.
    assert.deepEqual(
      found[0].candidates?.map((b) => b.x),
      [128, 256],
    );
    assert.equal(found[3].block.note, '`Policy` is a template parameter of `scatter`, known only per instantiation');
  });

  it("reads a class template's parameter named `warpSize` as the argument, not CUDA's warp size it hides", () => {
    const text = [
      '__global__ void k(float* m) {}',
      'template <int warpSize, int rpb> struct ThinPolicy {',
      '  static constexpr int LogicalWarpSize = warpSize;',
      '  static constexpr int RowsPerBlock = rpb;',
      '};',
      'template <typename Policy>',
      'void thin(float* m, int n) {',
      '  dim3 block(Policy::LogicalWarpSize, Policy::RowsPerBlock, 1);',
      '  k<<<n, block>>>(m);',
      '}',
      'void host(float* m, int n) {',
      '  thin<ThinPolicy<2, 64>>(m, n);',
      '  k<<<n, warpSize>>>(m);',
      '}',
    ].join('\n');
    assert.deepEqual(readAlone(text).launches.map(describeLaunch), [
      '9: k 2x64x1 0',
      '12: k 2x64x1 0 via thin',
      '13: k 32x1x1 0',
    ]);
  });

  it("does not make a wrapper of a function whose parameters feed only the grid or the kernel's template arguments", () => {
    const text = [
      'template <typename T>',
      'void scale(T* p, int n) {',
      '  scale_kernel<T><<<(n + 255) / 256, 256>>>(p, n);',
      '}',
      'void host(float* p, int n) {',
      '  scale(p, n);',
      '  scale<float>(p, 2 * n);',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), ['3: scale_kernel 256x1x1 0']);
  });

  it('reads calls of a wrapper defined in an included header, in an analysed document', async () => {
    const index = new WorkspaceIndex();
    const header = [
      '#pragma once',
      'template <int THREADS = 256, typename Op>',
      'void each(size_t n, Op op) { each_kernel<<<(n + THREADS - 1) / THREADS, THREADS>>>(n, op); }',
      '',
    ].join('\n');
    index.update('/ws/include/each.cuh', header);
    const text = [
      '#include "../include/each.cuh"',
      'void host(float* p, size_t n) {',
      '  each(n, [=] __device__(size_t i) { p[i] = 0; });',
      '  each<64>(n, [=] __device__(size_t i) { p[i] = 1; });',
      '}',
      '',
    ].join('\n');
    index.update('/ws/src/host.cu', text);
    const facts = await analyzeSnippet(text, { workspace: index, path: '/ws/src/host.cu' });
    assert.deepEqual(facts.launches.map(describeLaunch), [
      '3: each_kernel 256x1x1 0 via each',
      '4: each_kernel 64x1x1 0 via each',
    ]);
  });

  it("reads a wrapper called from a macro body at the macro's use", () => {
    const text = [
      'void launch_rows(void (*k)(float*), int rows, int threads, float* p) { k<<<rows, threads>>>(p); }',
      '#define ROWS_OF(K, T) launch_rows(K, n, T, p)',
      'void host(float* p, int n) {',
      '  ROWS_OF(row_kernel, 128);',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), ['1: k null 0', '4: row_kernel 128x1x1 0 via launch_rows']);
  });
  it("reads a lambda handed to a function it cannot see (PyTorch's AT_DISPATCH) as run there, with what it captures", () => {
    const text = [
      'void host(float* p, int n) {',
      '  dim3 block(512);',
      '  const int threads = 128;',
      '  AT_DISPATCH_FLOATING_TYPES(n, "scale", [&] {',
      '    scale<<<n, block, block.x * 4>>>(p);',
      '    scale<<<n, threads>>>(p);',
      '  });',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), ['5: scale 512x1x1 2048', '6: scale 128x1x1 0']);
  });

  it("reads a braced list written as a launch's grid or block as the dim3 it makes", () => {
    const text = [
      '#define DX 32',
      '#define DY 8',
      'void host(float* p, cudaStream_t s) {',
      '  tile<<<4, {DX, DY, 1}, 0, s>>>(p);',
      '  tile<<<{2, 2}, {64}>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), ['4: tile 32x8x1 0', '5: tile 64x1x1 0']);
  });

  it("reads the toolkit's make_uint3(x, y, z) as the dim3 it converts to, and only with its three components", () => {
    const text = [
      '#define TX 64',
      '#define TY 4',
      'void host(float* p) {',
      '  uint3 tids = make_uint3(TX, TY, 1);',
      '  tile<<<1, tids>>>(p);',
      '  tile<<<1, make_uint3(TX, TY)>>>(p);',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), ['5: tile 64x4x1 0', '6: tile null 0']);
  });

  it('reads a launch configuration object a wrapper takes by const reference, made by its constructor or a braced list', () => {
    const text = [
      'struct launch_config {',
      '  dim3 grid; dim3 block; size_t smem; cudaStream_t stream;',
      '  launch_config(const dim3& g, const dim3& b, size_t sm, cudaStream_t st) : grid(g), block(b), smem(sm), stream(st) {}',
      '};',
      'template <typename K, typename... Args>',
      'void run(K kernel, const launch_config& cfg, Args... args) {',
      '  kernel<<<cfg.grid, cfg.block, cfg.smem, cfg.stream>>>(args...);',
      '}',
      'void host(float* p, int n, cudaStream_t s) {',
      '  const int threads = 128;',
      '  const launch_config a = launch_config((n + threads - 1) / threads, threads, 0, s);',
      '  run(scale, a, p);',
      '  const launch_config b = {dim3(n), dim3(32, 4), 64, s};',
      '  run(scale, b, p);',
      '  launch_config c(n, n, 0, s);',
      '  run(scale, c, p);',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), [
      '7: kernel null null',
      '12: scale 128x1x1 0 via run',
      '14: scale 32x4x1 64 via run',
      '16: scale null 0 via run',
    ]);
  });

  it('reports a launch at the call of a wrapper of a wrapper only where that call tells more', () => {
    const text = [
      'template <typename K> void go(K kernel, dim3 block, size_t smem, float* p) { kernel<<<1, block, smem>>>(p); }',
      'template <int D> void both(float* p, int n) {',
      '  go(fixed_kernel<D>, dim3(64), n * 4, p);',
      '  go(sized_kernel<D>, dim3(D / 4), n * 4, p);',
      '}',
      'void host(float* p, int n) { both<256>(p, n); }',
    ].join('\n');
    // At `both<256>(...)` the fixed kernel's block is what `both` already says: only the sized one is new there.
    assert.deepEqual(launches(text), [
      '1: kernel null null',
      '3: fixed_kernel 64x1x1 null via go',
      '4: sized_kernel null null via go',
      '6: sized_kernel 64x1x1 null via both',
    ]);
  });

  it("quotes a kernel's template arguments from the file that names it, not from the header whose wrapper launches it", async () => {
    const index = new WorkspaceIndex();
    const header = [
      '#pragma once',
      'template <typename K> void go(K kernel, int n, float* p) { kernel<<<n, 128>>>(p); }',
      '',
    ].join('\n');
    index.update('/ws/include/go.cuh', header);
    const text = [
      '#include "../include/go.cuh"',
      'template <int ROWS, bool FAST> __global__ void rows_kernel(float* p) {}',
      'void host(float* p, int n) {',
      '  go(rows_kernel<4, true>, n, p);',
      '}',
      '',
    ].join('\n');
    index.update('/ws/src/host.cu', text);
    const facts = await analyzeSnippet(text, { workspace: index, path: '/ws/src/host.cu' });
    assert.deepEqual(
      facts.launches.map((l) => `${describeLaunch(l)} <${l.templateArgs?.join(', ')}>`),
      ['4: rows_kernel 128x1x1 0 via go <4, true>'],
    );
  });

  it('names the kernel of a wrapper reached with instances the unit cannot choose between, its instance left open', () => {
    const text = [
      'template <int W, int R> __global__ void gate(float* p) {}',
      'template <int W, int R> void helper(float* p, int n) { gate<W, R><<<n, dim3(W, R)>>>(p); }',
      '#ifdef WIDE_WARPS',
      '#define LAUNCH(R) helper<64, R>(p, 1024);',
      '#else',
      '#define LAUNCH(R) helper<32, R>(p, 1024);',
      '#endif',
      'void host(float* p) { LAUNCH(4); }',
    ].join('\n');
    // Either build may run: the kernel is `gate` whatever it is, its block 32 or 64 lanes wide.
    assert.deepEqual(launches(text), ['2: gate null 0', '8: gate null 0 via helper']);
    const call = readAlone(text).launches[1];
    assert.deepEqual(call.templateArgValues, [null, 4]);
    assert.deepEqual(call.candidates, [
      { x: 32, y: 4, z: 1 },
      { x: 64, y: 4, z: 1 },
    ]);
  });

  it('reads a launch in a lambda in a lambda: three dispatch levels (rank, type, vector width), each case with its constants', () => {
    const text = [
      '#define DISPATCH_RANK(N, ...) switch (N) { case 2: { constexpr int rank = 2; __VA_ARGS__(); break; } }',
      '#define DISPATCH_VEC(V, ...) switch (V) { case 8: { constexpr int vec = 8; __VA_ARGS__(); break; } }',
      'template <typename T, int V, int R> __global__ void norm(T* out, const T* in) {}',
      'void host(float* out, const float* in, int dims, int n, int v) {',
      '  dim3 grid(n);',
      '  DISPATCH_RANK(dims, [&] {',
      '    OUT_OF_VIEW_DISPATCH(in, "norm", [&] {',
      '      dim3 block(256);',
      '      DISPATCH_VEC(v, [&] {',
      '        norm<float, vec, rank><<<grid, block, 0>>>(out, in);',
      '      });',
      '    });',
      '  });',
      '}',
    ].join('\n');
    assert.deepEqual(launches(text), ['10: norm 256x1x1 0']);
    assert.deepEqual(readAlone(text).launches[0].templateArgValues, [null, 8, 2]);
  });

  it('reads a lambda handed out of view again each time the lambda around it is called (another kernel each time)', () => {
    const text = [
      'template <bool DENSE> __global__ void pack(float* p) {}',
      'void host(float* p, int n, bool dense) {',
      '  auto launcher = [&](auto kernel) {',
      '    VISIT_OUT_OF_VIEW(p, [&](int) { kernel<<<n, 256>>>(p); });',
      '  };',
      '  if (dense) launcher(pack<true>);',
      '  else launcher(pack<false>);',
      '}',
    ].join('\n');
    // Either instance runs there: the kernel is known, its instance is not.
    assert.deepEqual(launches(text), ['4: pack 256x1x1 0']);
    assert.deepEqual(readAlone(text).launches[0].templateArgValues, [null]);
  });

  it('reads a lambda with a template head at each call that names its template arguments (f.template operator()<16, 256>())', () => {
    const text = [
      'template <int CTA> __global__ void __launch_bounds__(CTA) blend(float* p) {}',
      'void host(float* p, int tile) {',
      '  auto variant = [&]<unsigned TILE, unsigned CTA_SIZE>() {',
      '    const dim3 threads = dim3{CTA_SIZE, 1, 1};',
      '    blend<CTA_SIZE><<<1, threads, CTA_SIZE * 28>>>(p);',
      '  };',
      '  if (tile == 16) variant.template operator()<16, 256>();',
      '  else variant.operator()<4, 16>();',
      '}',
      'void deduced(float* p) {',
      '  auto launch = [&]<typename T>(T n) { blend<128><<<n, sizeof(T) * 32>>>(p); };',
      '  launch(64);',
      '}',
    ].join('\n');
    // Either call runs: the block is one of the two the calls name, and so is the shared memory.
    assert.deepEqual(launches(text), ['5: blend null null', '11: blend null 0']);
    const [variant, deduced] = readAlone(text).launches;
    assert.deepEqual(variant.candidates, [
      { x: 16, y: 1, z: 1 },
      { x: 256, y: 1, z: 1 },
    ]);
    // A template parameter the call leaves to deduction is not bound: `sizeof(T)` is not guessed.
    assert.equal(deduced.candidates ?? null, null);
  });

  it('reads a lambda handed to a function in view that calls it out of reach (gsplat dispatch::dispatch) as run at the call', () => {
    const text = [
      'template <typename F> bool dispatch(int v, F &&f) { return visit_each(v, f); }',
      '__global__ void k(float* p) {}',
      'void host(float* p, int v) {',
      '  constexpr unsigned threads = 256;',
      '  dim3 block(128);',
      '  bool ok = dispatch(v, [&]<typename T>() { k<<<1, threads>>>(p); k<<<1, block>>>(p); });',
      '  ok = dispatch(v, [&]<typename T>() { k<<<1, v>>>(p); });',
      '}',
    ].join('\n');
    // What it captures is what the caller holds there; a parameter of the caller stays unknown.
    assert.deepEqual(launches(text), ['6: k 256x1x1 0', '6: k 128x1x1 0', '7: k null 0']);
  });

  it("reads a class template's constant named with a wrapper's template parameter at the wrapper's call", () => {
    const text = [
      'template <int B> struct L { static constexpr int P = (B * 8) / 32; };',
      '__global__ void k(float* s) {}',
      'template <int BLOCK> void run(float* a) { k<<<1, L<BLOCK>::P>>>(a); }',
      'void host(float* a) { run<128>(a); }',
    ].join('\n');
    // The template's own launch: the one instance this unit calls (facts/template-instances.ts).
    assert.deepEqual(launches(text), ['3: k 32x1x1 0', '4: k 32x1x1 0 via run']);
  });
});
