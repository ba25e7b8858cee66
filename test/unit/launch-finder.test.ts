import * as assert from 'node:assert/strict';
import { loadFileAloneParser, readAlone } from '../support/file-alone';

const launches = (text: string) => readAlone(text).launches;
const summary = (text: string) =>
  launches(text).map((l) => ({
    via: l.via,
    kernel: l.kernelName,
    args: l.templateArgs,
    block: l.block.value,
    smem: l.dynamicSmem.value,
    line: l.span.start.line,
  }));

describe('launch-finder', () => {
  before(loadFileAloneParser);

  it('finds chevron launches with plain, qualified and templated names', () => {
    assert.deepEqual(
      summary(
        'void f() {\n  k<<<1, 32>>>();\n  ns::inner::k<<<1, 64, 128>>>();\n  ::k2<float, 256><<<4, 256, 0, s>>>(x);\n  k<< <1, 96>> >();\n}\n',
      ),
      [
        { via: 'chevrons', kernel: 'k', args: null, block: { x: 32, y: 1, z: 1 }, smem: 0, line: 1 },
        { via: 'chevrons', kernel: 'ns::inner::k', args: null, block: { x: 64, y: 1, z: 1 }, smem: 128, line: 2 },
        { via: 'chevrons', kernel: 'k2', args: ['float', '256'], block: { x: 256, y: 1, z: 1 }, smem: 0, line: 3 },
        { via: 'chevrons', kernel: 'k', args: null, block: { x: 96, y: 1, z: 1 }, smem: 0, line: 4 },
      ],
    );
  });

  it('keeps the stream and the spans', () => {
    const [l] = launches('void f(cudaStream_t st) {\n  k<<<g, 128, 0, st>>>(a, b);\n}\n');
    assert.equal(l.stream, 'st');
    assert.equal(l.enclosingFunction, 'f');
    assert.deepEqual(l.span, { start: { line: 1, character: 2 }, end: { line: 1, character: 28 } });
    assert.deepEqual(l.nameSpan, { start: { line: 1, character: 2 }, end: { line: 1, character: 3 } });
  });

  it('ignores chevrons in comments and strings, and shifts', () => {
    assert.deepEqual(
      summary('void f() {\n  // k<<<1, 32>>>();\n  const char* s = "k<<<1,32>>>()";\n  int x = 1 << 3;\n}\n'),
      [],
    );
  });

  it('reads cudaLaunchKernel and cudaLaunchCooperativeKernel', () => {
    assert.deepEqual(
      summary(
        'void f(void** args) {\n  cudaLaunchKernel((void*)k, dim3(8), dim3(128), args, 256, 0);\n  cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&ns::c<float>), 80, 512, args);\n}\n',
      ),
      [
        { via: 'cudaLaunchKernel', kernel: 'k', args: null, block: { x: 128, y: 1, z: 1 }, smem: 256, line: 1 },
        {
          via: 'cudaLaunchCooperativeKernel',
          kernel: 'ns::c',
          args: ['float'],
          block: { x: 512, y: 1, z: 1 },
          smem: 0,
          line: 2,
        },
      ],
    );
  });

  it("reads the driver API's cuLaunchKernel: grid and block as three numbers each", () => {
    const text = [
      'void run(CUfunction scan, CUstream s, void** args, int n) {',
      '  const int threads = 128;',
      '  cuLaunchKernel(scan, (n + threads - 1) / threads, 1, 1, threads, 2, 1, 4096, s, args, NULL);',
      '  cuLaunchKernel(scan, 1, 1, 1, n, 1, 1, 0, s, args, nullptr);',
      '}',
      'CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream s, void** p, void** e);',
    ].join('\n');
    assert.deepEqual(summary(text), [
      { via: 'cuLaunchKernel', kernel: 'scan', args: null, block: { x: 128, y: 2, z: 1 }, smem: 4096, line: 2 },
      { via: 'cuLaunchKernel', kernel: 'scan', args: null, block: null, smem: 0, line: 3 },
    ]);
  });

  it("reads cudaLaunchKernelEx's config through a field of an object its constructor fills, and `= {}` as no dynamic shared memory", () => {
    const text = [
      'struct Params {',
      '  dim3 grid; dim3 block; size_t smem;',
      '  Params(const dim3& g, const dim3& b, size_t m) : grid(g), block(b), smem(m) {}',
      '};',
      'struct Config {',
      '  cudaLaunchConfig_t cfg;',
      '  Config(const Params& p) {',
      '    cfg = {};',
      '    cfg.gridDim = p.grid;',
      '    cfg.blockDim = p.block;',
      '    cfg.dynamicSmemBytes = p.smem;',
      '  }',
      '};',
      'void f(float* x) {',
      '  const Params p = {dim3(64), dim3(128, 2), 512};',
      '  auto c = Config(p);',
      '  cudaLaunchKernelEx(&c.cfg, k, x);',
      '  cudaLaunchConfig_t plain = {};',
      '  plain.blockDim = p.block;',
      '  cudaLaunchKernelEx(&plain, k, x);',
      '}',
    ].join('\n');
    assert.deepEqual(summary(text), [
      { via: 'cudaLaunchKernelEx', kernel: 'k', args: null, block: { x: 128, y: 2, z: 1 }, smem: 512, line: 16 },
      { via: 'cudaLaunchKernelEx', kernel: 'k', args: null, block: { x: 128, y: 2, z: 1 }, smem: 0, line: 19 },
    ]);
  });

  it('reads cudaLaunchKernelEx with config fields assigned nearby', () => {
    const text = [
      'void f(float* p) {',
      '  cudaLaunchConfig_t config = {0};',
      '  config.gridDim = dim3(132);',
      '  config.blockDim = dim3(128, 2);',
      '  config.dynamicSmemBytes = 4096;',
      '  cudaLaunchKernelEx(&config, cluster_kernel, p);',
      '}',
      'void g(float* p) {',
      '  cudaLaunchConfig_t cfg = {.gridDim = 4, .blockDim = 256, .dynamicSmemBytes = 0};',
      '  cudaLaunchKernelEx(&cfg, other, p);',
      '}',
    ].join('\n');
    assert.deepEqual(summary(text), [
      {
        via: 'cudaLaunchKernelEx',
        kernel: 'cluster_kernel',
        args: null,
        block: { x: 128, y: 2, z: 1 },
        smem: 4096,
        line: 5,
      },
      { via: 'cudaLaunchKernelEx', kernel: 'other', args: null, block: { x: 256, y: 1, z: 1 }, smem: 0, line: 9 },
    ]);
  });

  it('reports no launch in the body of a macro nothing uses (a launch is read at each use)', () => {
    assert.deepEqual(launches('#define LAUNCH(kern, n) \\\n  kern<<<(n + 255) / 256, 256>>>(n)\n'), []);
  });

  it('follows a function pointer to its one visible target', () => {
    const text = [
      '__global__ void scale(float* p);',
      'namespace ns { template <typename T> __global__ void shift(float* p); }',
      'void f(float* p) {',
      '  auto fp = scale;',
      '  fp<<<1, 128>>>(p);',
      '  void (*gp)(float*) = &ns::shift<int>;',
      '  gp<<<1, 64>>>(p);',
      '  decltype(&scale) hp = scale;',
      '  cudaLaunchKernel((const void*)hp, 1, 32, nullptr, 0, 0);',
      '}',
    ].join('\n');
    assert.deepEqual(
      launches(text).map((l) => [l.kernelName, l.templateArgs, l.calledThrough]),
      [
        ['scale', null, 'fp'],
        ['ns::shift', ['int'], 'gp'],
        ['scale', null, 'hp'],
      ],
    );
  });

  it('does not follow a function pointer that is assigned again', () => {
    const text =
      'void f(float* p, bool big) {\n  auto fp = small_k;\n  if (big) fp = big_k;\n  fp<<<1, 128>>>(p);\n  auto gp = big ? small_k : big_k;\n  gp<<<1, 128>>>(p);\n}\n';
    assert.deepEqual(
      launches(text).map((l) => [l.kernelName, l.calledThrough]),
      [
        ['fp', null],
        ['gp', null],
      ],
    );
  });

  it('finds dynamic shared memory opt-ins', () => {
    const text =
      '__global__ void big(float*);\ntemplate <typename T> __global__ void tpl(T*);\nvoid f(int n) {\n  constexpr int bytes = 96 * 1024;\n  cudaFuncSetAttribute(big, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);\n  cudaFuncSetAttribute((const void*)other, cudaFuncAttributePreferredSharedMemoryCarveout, 100);\n  cudaFuncSetAttribute(tpl<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, n);\n}\n';
    const found = readAlone(text).smemOptIns;
    assert.deepEqual(
      found.map((o) => [o.kernelName, o.bytes.value, o.span.start.line]),
      [
        ['big', 98304, 4],
        ['tpl', null, 6],
      ],
    );
  });

  it('skips API declarations in headers', () => {
    assert.deepEqual(
      summary(
        'extern __host__ cudaError_t cudaLaunchKernel(const void* func, dim3 g, dim3 b, void** args, size_t s, cudaStream_t st);\n',
      ),
      [],
    );
  });
});
