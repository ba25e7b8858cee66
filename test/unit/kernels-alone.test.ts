import * as assert from 'node:assert/strict';
/** A file's kernels as the workspace index reads them (file-alone.ts), and their bounds at each launch. */
import { loadFileAloneParser, readAlone } from '../support/file-alone';
import { analyzeSnippet } from '../support/analyze-snippet';

const kernels = (text: string) => readAlone(text).kernels;

/** The launch bounds each launch of the snippet's kernel gets, in order. */
async function boundsAt(text: string) {
  const facts = await analyzeSnippet(text);
  return facts.launchTargets.map((t) => [
    t.launchBounds?.maxThreadsPerBlock ?? null,
    t.launchBounds?.minBlocksPerMultiprocessor ?? null,
  ]);
}

describe('kernels of a file read alone', () => {
  before(loadFileAloneParser);

  it('finds a plain kernel with its parameters and body', () => {
    const [k] = kernels('__global__ void add(const float* a, float* b, int n) { b[0] = a[0]; }\n');
    assert.equal(k.name, 'add');
    assert.equal(k.qualifiedName, 'add');
    assert.deepEqual(k.parameters, ['const float* a', 'float* b', 'int n']);
    assert.equal(k.isDefinition, true);
    assert.equal(k.launchBounds, null);
    assert.deepEqual(k.nameSpan, { start: { line: 0, character: 16 }, end: { line: 0, character: 19 } });
  });

  it('reads qualifiers and attributes in any order', () => {
    const found = kernels(
      [
        'static __global__ void __launch_bounds__(256, 2) a(float* x) {}',
        'void __global__ __launch_bounds__(128) b(float* x) {}',
        '__launch_bounds__(64) __global__ void c(float* x) {}',
        '__global__ __launch_bounds__(1024, 1, 8) void d(float* x) {}',
        'extern "C" __global__ void __maxnreg__(32) e(float* x) {}',
        '__global__ void __cluster_dims__(2, 2) f(float* x) {}',
      ].join('\n'),
    );
    assert.deepEqual(
      found.map((k) => [
        k.name,
        k.launchBounds?.maxThreadsPerBlock ?? null,
        k.launchBounds?.minBlocksPerMultiprocessor ?? null,
        k.launchBounds?.maxBlocksPerCluster ?? null,
      ]),
      [
        ['a', 256, 2, null],
        ['b', 128, null, null],
        ['c', 64, null, null],
        ['d', 1024, 1, 8],
        ['e', null, null, null],
        ['f', null, null, null],
      ],
    );
    assert.equal(found[4].maxnreg, 32);
    assert.equal(found[4].externC, true);
    assert.deepEqual(found[5].clusterDims, { x: 2, y: 2, z: 1 });
  });

  it("takes the attributes written before the kernel's name, not one a parameter list holds", () => {
    // A mutation the quick-fix property found: the fix edited the bound inside the parameters.
    const [k] = kernels('__global__ void __launch_bounds__(256, 1) k(__launch_bounds__(128) const int* in, int n) {}');
    assert.equal(k.launchBounds?.maxThreadsPerBlock, 256);
    assert.equal(k.launchBounds?.text, '__launch_bounds__(256, 1)');
  });

  it('qualifies kernels by their namespaces and extern "C" blocks', () => {
    const found = kernels(
      'namespace outer { namespace inner {\n__global__ void k(int* p) {}\n} }\nextern "C" {\n__global__ void c_kernel(int* p) {}\n}\nnamespace a::b { __global__ void n(int*); }\n',
    );
    assert.deepEqual(
      found.map((k) => [k.qualifiedName, k.externC, k.isDefinition]),
      [
        ['outer::inner::k', false, true],
        ['c_kernel', true, true],
        ['a::b::n', false, false],
      ],
    );
  });

  it('reads template parameters and resolves launch bounds per template arguments', () => {
    const [k] = kernels(
      'template <typename T, int BS = 128, int MIN = BS / 64>\n__global__ void __launch_bounds__(BS, MIN) reduce(const T* in, T* out) {}\n',
    );
    assert.deepEqual(k.templateParams, [
      { name: 'T', kind: 'type', defaultText: null },
      { name: 'BS', kind: 'value', defaultText: '128' },
      { name: 'MIN', kind: 'value', defaultText: 'BS / 64' },
    ]);
    assert.equal(k.launchBounds?.maxThreadsPerBlock, null, 'unknown without a launch');
  });

  it('resolves launch bounds per template arguments at each launch, defaults and sizeof included', async () => {
    const kernel =
      'template <typename T, int BS = 128, int MIN = BS / 64>\n__global__ void __launch_bounds__(BS, MIN) reduce(const T* in, T* out) {}\n';
    const sized = 'template <typename T>\n__global__ void __launch_bounds__(1024 / sizeof(T)) k(T* p) {}\n';
    assert.deepEqual(
      await boundsAt(
        `${kernel}#define THREADS 512\nvoid host(float* f, double* d, int n) {\n  reduce<float, 256><<<1, 256>>>(f, f);\n  reduce<double><<<1, 128>>>(d, d);\n  reduce<float, THREADS><<<1, 512>>>(f, f);\n  reduce<float, n><<<1, 64>>>(f, f);\n}\n`,
      ),
      [
        [256, 4],
        [128, 2],
        [512, 8],
        [null, null],
      ],
    );
    assert.deepEqual(
      await boundsAt(
        `${sized}struct MyType;\nvoid host(double* d, MyType* m) {\n  k<double><<<1, 128>>>(d);\n  k<MyType><<<1, 128>>>(m);\n}\n`,
      ),
      [
        [128, null],
        [null, null],
      ],
    );
  });

  it('tells overloads of a kernel apart by how many arguments a launch passes, not through a pack', async () => {
    const overloads = [
      'template <class T> __global__ void __launch_bounds__(512) quant(const T* in, T* out, int n, bool fast) {}',
      'template <class T> __global__ void __launch_bounds__(1024) quant(const T* in, T* out, int n) {}',
      'template <class T> __global__ void __launch_bounds__(256) pad(T* out, int n = 0) {}',
      'template <class T> __global__ void __launch_bounds__(128) pad(T* out, int n, int m, int k) {}',
      '__global__ void __launch_bounds__(64) tick(void) {}',
      '__global__ void __launch_bounds__(32) tick(int n) {}',
    ];
    const text = [
      ...overloads,
      'template <class... A> void go(void (*k)(A...), A... args) { k<<<1, 64>>>(args...); }',
      'void host(const float* in, float* out, int n) {',
      '  quant<float><<<n, 512>>>(in, out, n, true);',
      '  quant<float><<<n, 1024>>>(in, out, n);',
      '  pad<float><<<n, 256>>>(out);',
      '  pad<float><<<n, 256>>>(out, n);',
      '  quant<float><<<n, 64>>>(in, out);',
      '  tick<<<1, 64>>>();',
      '  tick<<<1, 32>>>(n);',
      '}',
    ].join('\n');
    const facts = await analyzeSnippet(text);
    assert.deepEqual(
      facts.launchTargets.map((t) => t.launchBounds?.maxThreadsPerBlock ?? null),
      // The pack may be any number of arguments; two arguments are no overload's: neither is chosen.
      [null, 512, 1024, 256, 256, null, 64, 32],
    );
  });

  it('resolves bounds through macros and constants', () => {
    const [k] = kernels(
      '#define THREADS 256\nconstexpr int MINB = 2;\n__global__ void __launch_bounds__(THREADS, MINB) k(float* p) {}\n',
    );
    assert.equal(k.launchBounds?.maxThreadsPerBlock, 256);
    assert.equal(k.launchBounds?.minBlocksPerMultiprocessor, 2);
    assert.equal(k.launchBounds?.text, '__launch_bounds__(THREADS, MINB)');
  });

  it('sizes static shared memory and lists extern shared arrays', () => {
    const [k] = kernels(
      '#define TILE 32\n__global__ void gemm(float* c) {\n  __shared__ float As[TILE][TILE + 1];\n  __shared__ double acc[4], flag;\n  extern __shared__ char dyn[];\n}\n',
    );
    assert.deepEqual(
      k.sharedDeclarations.map((d) => [d.name, d.bytes, d.isExtern]),
      [
        ['As', 32 * 33 * 4, false],
        ['acc', 32, false],
        ['flag', 8, false],
        ['dyn', 0, true],
      ],
    );
    assert.equal(k.staticSharedBytes, 32 * 33 * 4 + 40);
  });

  it('leaves template-sized shared memory unknown', () => {
    const [k] = kernels('template <typename T, int N>\n__global__ void k(T* p) { __shared__ T buf[N]; }\n');
    assert.equal(k.sharedDeclarations[0].bytes, null);
    assert.equal(k.staticSharedBytes, null);
  });

  it('ignores __global__ in a #define and keeps the leading annotation comment', () => {
    const found = kernels(
      '#define KERNEL __global__\n// occupancy: regs=40 smem=1024\n__global__ void k(float* p) {}\n',
    );
    assert.equal(found.length, 1);
    assert.equal(found[0].leadingComment, '// occupancy: regs=40 smem=1024');
  });

  it('finds a declaration in a header and the definition separately', () => {
    const found = kernels(
      '__global__ void __launch_bounds__(128) k(float* p);\n__global__ void k(float* p) { p[0] = 1; }\n',
    );
    assert.deepEqual(
      found.map((k) => [k.isDefinition, k.launchBounds?.maxThreadsPerBlock ?? null]),
      [
        [false, 128],
        [true, null],
      ],
    );
  });
});
