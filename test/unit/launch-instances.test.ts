import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parsePtxasOutput } from '../../server/src/core/compiler/ptxas-output';
import { mapKernelResources, type SourceKernel } from '../../server/src/core/compiler/kernel-resources';
import { findTypeAliases, matchInstances } from '../../server/src/core/compiler/launch-instances';
import { launchTemplateArgs } from '../../server/src/core/compiler/figures-registry';
import { analyzeSnippet } from '../support/analyze-snippet';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/ptxas');

/** The kernels of instances.cu, and their instances as ptxas compiled them. */
const kernels: SourceKernel[] = [
  { name: 'tile', qualifiedName: 'tile', templateParams: ['BLOCK', 'CHECKED'] },
  { name: 'scale', qualifiedName: 'scale', templateParams: ['T'] },
  { name: 'gemm', qualifiedName: 'gemm', templateParams: ['T', 'MB'] },
];
const entries = parsePtxasOutput(fs.readFileSync(path.join(FIXTURES, 'instances.sm_80.txt'), 'utf8')).entries;
const [tile, scale, gemm] = mapKernelResources({ kernels, entries, source: 'ptxas' }).kernels.map((k) => k.instances);

/** The launches of a snippet, each with the signatures of the instances it can run. */
async function instancesLaunched(
  code: string,
): Promise<Array<{ line: string; runs: string[]; open: number[] | null }>> {
  const facts = await analyzeSnippet(code);
  const aliases = findTypeAliases(code);
  return facts.launches.map((launch) => {
    const pool = { tile, scale, gemm }[launch.kernelName as 'tile' | 'scale' | 'gemm'];
    const match = matchInstances(pool, launchTemplateArgs(launch), aliases);
    return {
      line: code.split('\n')[launch.span.start.line].trim(),
      runs: match.instances.map((i) => i.signature!).sort(),
      open: match.open,
    };
  });
}

describe('the instances a launch can run', () => {
  it("reads bool literals, the CUDA and <cstdint> typedefs and the file's own aliases", async () => {
    const launches = await instancesLaunched(`
void run(float* x, half* h, int64_t* l, int n) {
  tile<128, false><<<n / 128, 128>>>(x, n);
  tile<128, true><<<n / 128, 128>>>(x, n);
  using scalar_t = float;
  scale<scalar_t><<<n / 256, 256>>>(x, 2.f, n);
  scale<half><<<n / 256, 256>>>(h, 2.f, n);
  scale<int64_t><<<n / 256, 256>>>(l, 2.f, n);
  scale<std::int64_t><<<n / 256, 256>>>(l, 2.f, n);
}`);
    assert.deepEqual(
      launches.map((l) => [l.line, l.runs]),
      [
        ['tile<128, false><<<n / 128, 128>>>(x, n);', ['void tile<128, false>(float*, int)']],
        ['tile<128, true><<<n / 128, 128>>>(x, n);', ['void tile<128, true>(float*, int)']],
        ['scale<scalar_t><<<n / 256, 256>>>(x, 2.f, n);', ['void scale<float>(float*, float, int)']],
        ['scale<half><<<n / 256, 256>>>(h, 2.f, n);', ['void scale<__half>(__half*, float, int)']],
        ['scale<int64_t><<<n / 256, 256>>>(l, 2.f, n);', ['void scale<long>(long*, float, int)']],
        ['scale<std::int64_t><<<n / 256, 256>>>(l, 2.f, n);', ['void scale<long>(long*, float, int)']],
      ],
    );
  });

  it('runs any of the instances that fit when the arguments depend on the enclosing template or are deduced', async () => {
    const launches = await instancesLaunched(`
template <typename T, int MB> void gemm_host(const T* a, T* c, int n) { gemm<T, MB><<<1, 128>>>(a, c, n); }
template <typename T> void gemm4(const T* a, T* c, int n) { gemm<T, 4><<<1, 128>>>(a, c, n); }
void deduced(float* x, int n) { scale<<<n / 256, 256>>>(x, 2.f, n); }`);
    assert.deepEqual(
      launches.map((l) => [l.runs.length, l.open]),
      [
        [4, [0, 1]],
        [2, [0]],
        [4, null],
      ],
    );
    assert.deepEqual(launches[1].runs, [
      'void gemm<double, 4>(double const*, double*, int)',
      'void gemm<float, 4>(float const*, float*, int)',
    ]);
  });

  it('runs nothing when a known argument fits no instance (null beats wrong)', async () => {
    const launches = await instancesLaunched(`
void run(char* x, float* y, int n) {
  scale<char><<<1, 256>>>(x, 2.f, n);
  tile<512, false><<<1, 512>>>(y, n);
}`);
    assert.deepEqual(
      launches.map((l) => l.runs),
      [[], []],
    );
  });

  it('maps a kernel of an anonymous namespace, as the kernel finder names it, to the name nvcc mangles for it', async () => {
    const facts = await analyzeSnippet(
      'namespace outer { namespace {\ntemplate <int N> __global__ void hidden(float* x) { x[threadIdx.x] = N; }\n}\nvoid run(float* x) { hidden<4><<<1, 64>>>(x); }\n}\n',
    );
    const entry = {
      ...entries[0],
      mangledName: '_ZN5outer39_GLOBAL__N__b434eccc_7_anon_cu_5cebd1d66hiddenILi4EEEvPf',
      isEntry: true,
    };
    const [hidden] = mapKernelResources({ kernels: facts.kernels, entries: [entry], source: 'ptxas' }).kernels;
    assert.deepEqual(
      hidden.instances.map((i) => i.signature),
      ['void outer::(anonymous namespace)::hidden<4>(float*)'],
    );
    assert.equal(matchInstances(hidden.instances, launchTemplateArgs(facts.launches[0])).instances.length, 1);
  });

  it('leaves out aliases a launch may not see: alias templates, names written twice, names of template parameters', () => {
    const aliases = findTypeAliases(`
using real = float;
typedef unsigned int index_t;
template <typename T> using vec = T[4];
void f() { using acc_t = float; }
void g() { using acc_t = double; }
using T = float;
template <typename T> void h() {}
typedef struct { int a; } pod;`);
    assert.deepEqual([...aliases].sort(), [
      ['index_t', 'unsigned int'],
      ['real', 'float'],
    ]);
  });
});
