import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parsePtxasOutput } from '../../server/src/core/compiler/ptxas-output';
import {
  ANY_ARCH,
  mapKernelResources,
  parseResourceAnnotation,
  pickInstance,
  preferResources,
  resourcesForArch,
  splitTemplateArgsText,
  uncompiledInstances,
  unknownResources,
  type ResourceFigures,
  type SourceKernel,
} from '../../server/src/core/compiler/kernel-resources';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/ptxas');
const parse = (...files: string[]) =>
  files.flatMap((f) => parsePtxasOutput(fs.readFileSync(path.join(FIXTURES, f), 'utf8')).entries);

/** The kernels of templates.cu and plain.cu as the source analysis reports them. */
const templateKernels: SourceKernel[] = [
  { name: 'reduce', qualifiedName: 'ns::reduce', templateParams: [{ name: 'T' }, { name: 'BLOCK' }] },
  { name: 'shift', qualifiedName: 'ns::detail::shift', templateParams: ['OFFSET', 'CLAMP'] },
  { name: 'fill', qualifiedName: 'ns::fill', templateParams: ['T'] },
  { name: 'axpy', qualifiedName: 'axpy', templateParams: ['A', 'B'] },
];
const plainKernels: SourceKernel[] = [
  { name: 'saxpy_c', qualifiedName: 'saxpy_c', externC: true },
  { name: 'scale', qualifiedName: 'scale', parameters: ['float* v', 'float s', 'int n'] },
  { name: 'scale', qualifiedName: 'scale', parameters: ['double* v', 'double s', 'int n'] },
  { name: 'hidden', qualifiedName: 'hidden' },
  { name: 'uses_globals', qualifiedName: 'uses_globals' },
  { name: 'tex_read', qualifiedName: 'tex_read' },
  { name: 'bounded', qualifiedName: 'bounded' },
  { name: 'calls_helper', qualifiedName: 'calls_helper' },
];

describe('kernel resources', () => {
  it('gives each template kernel one instance per instantiation, with figures per arch', () => {
    const { kernels, unmatched } = mapKernelResources({
      kernels: templateKernels,
      entries: parse('templates.sm_80.txt', 'templates.sm_90.txt'),
      source: 'ptxas',
      producedAt: 1000,
    });
    assert.deepEqual(unmatched, []);
    assert.deepEqual(
      kernels.map((k) => k.instances.length),
      [3, 2, 2, 2],
    );
    const reduce = kernels[0].instances.find((i) => i.templateArgs.join() === 'float,256');
    assert.ok(reduce);
    assert.equal(reduce.mangledName, '_ZN2ns6reduceIfLi256EEEvPKT_PS1_i');
    assert.equal(reduce.signature, 'void ns::reduce<float, 256>(float const*, float*, int)');
    assert.deepEqual(Object.keys(reduce.resources).sort(), ['sm_80', 'sm_90']);
    assert.deepEqual(reduce.resources.sm_90, {
      numRegs: 12,
      sharedSizeBytes: 1024,
      spillStoreBytes: 0,
      spillLoadBytes: 0,
      stackFrameBytes: 0,
      barriers: 1,
      source: 'ptxas',
      producedAt: 1000,
    });
  });

  it('tells overloads apart by parameters and maps extern "C" and anonymous-namespace kernels', () => {
    const { kernels, unmatched } = mapKernelResources({
      kernels: plainKernels,
      entries: parse('plain.sm_90.txt'),
      source: 'log',
    });
    assert.deepEqual(unmatched, []);
    const [saxpy, scaleFloat, scaleDouble, hidden] = kernels;
    assert.deepEqual(
      saxpy.instances.map((i) => i.mangledName),
      ['saxpy_c'],
    );
    assert.deepEqual(
      scaleFloat.instances.map((i) => i.mangledName),
      ['_Z5scalePffi'],
    );
    assert.deepEqual(
      scaleDouble.instances.map((i) => i.mangledName),
      ['_Z5scalePddi'],
    );
    assert.equal(hidden.instances.length, 1);
    assert.equal(hidden.instances[0].resources.sm_90.source, 'log');
  });

  it('maps -rdc file-static names and reports entries of unknown kernels as unmatched', () => {
    const { kernels, unmatched } = mapKernelResources({
      kernels: plainKernels.slice(3, 4),
      entries: parse('plain.rdc.sm_80.txt'),
      source: 'ptxas',
    });
    assert.equal(kernels[0].instances.length, 1);
    assert.ok(kernels[0].instances[0].mangledName?.startsWith('__nv_static_'));
    assert.equal(unmatched.length, 7);
  });

  it('maps lambda- and functor-templated kernels (lambdas.cu)', () => {
    const { kernels } = mapKernelResources({
      kernels: [
        { name: 'apply', qualifiedName: 'apply', templateParams: ['F'] },
        { name: 'variadic', qualifiedName: 'math::variadic', templateParams: ['T', 'N', 'Rest'] },
      ],
      entries: parse('lambdas.sm_120.txt'),
      source: 'ptxas',
    });
    assert.deepEqual(kernels[0].instances.map((i) => i.templateArgs).sort(), [
      ['Square'],
      ['host_launches(float*, int)::{lambda(float)#1}'],
    ]);
    assert.equal(
      pickInstance(kernels[1].instances, 'math::variadic<long, 8u>')?.mangledName,
      '_ZN4math8variadicIlLj8EJEEEvPT_DpT1_',
    );
  });

  it('picks the instance a launch uses from its template arguments', () => {
    const { kernels } = mapKernelResources({
      kernels: templateKernels,
      entries: parse('templates.sm_90.txt'),
      source: 'ptxas',
    });
    const [reduce, shift, fill, axpy] = kernels.map((k) => k.instances);
    assert.equal(pickInstance(reduce, 'ns::reduce<float, 256>')?.mangledName, '_ZN2ns6reduceIfLi256EEEvPKT_PS1_i');
    assert.equal(pickInstance(reduce, ['double', '128'])?.mangledName, '_ZN2ns6reduceIdLi128EEEvPKT_PS1_i');
    assert.equal(pickInstance(reduce, '<int,0x200>')?.mangledName, '_ZN2ns6reduceIiLi512EEEvPKT_PS1_i');
    assert.equal(pickInstance(reduce, 'float, 128'), null);
    assert.equal(pickInstance(reduce, null), null, 'three instances and no arguments: ambiguous');
    assert.equal(pickInstance(shift, ['-5', 'true'])?.mangledName, '_ZN2ns6detail5shiftILin5ELb1EEEvPfi');
    assert.equal(pickInstance(shift, '< 3 , false >')?.mangledName, '_ZN2ns6detail5shiftILi3ELb0EEEvPfi');
    assert.equal(pickInstance(fill, 'ns::fill<unsigned char>')?.mangledName, '_ZN2ns4fillIhEEvPT_S1_y');
    assert.equal(pickInstance(fill, ['ns::Pair'])?.mangledName, '_ZN2ns4fillINS_4PairEEEvPT_S2_y');
    assert.equal(
      pickInstance(axpy, ['double'])?.mangledName,
      '_Z4axpyIdfEvT_PKT0_PS1_i',
      'a deduced trailing argument',
    );
    assert.equal(pickInstance([reduce[0]], null), reduce[0]);
  });

  it('splits template argument text at top-level commas', () => {
    assert.deepEqual(splitTemplateArgsText('k<A<int, 2>, (1 << 3), float>'), ['A<int, 2>', '(1 << 3)', 'float']);
    assert.deepEqual(splitTemplateArgsText('<>'), []);
  });

  it('reads occupancy annotations in their several spellings', () => {
    const figures = (comment: string) => parseResourceAnnotation(comment)?.resources;
    const expected = (over: Partial<ResourceFigures>) => ({ ...unknownResources(), source: 'annotation', ...over });
    assert.deepEqual(figures('// occupancy: regs=64 smem=8192'), {
      [ANY_ARCH]: expected({ numRegs: 64, sharedSizeBytes: 8192 }),
    });
    assert.deepEqual(figures('/* occupancy: regs=64, smem=8 KB, spills=0 */'), {
      [ANY_ARCH]: expected({ numRegs: 64, sharedSizeBytes: 8192, spillStoreBytes: 0, spillLoadBytes: 0 }),
    });
    assert.deepEqual(
      figures('/**\n * Reduces.\n * occupancy(sm_90): registers = 40; shared=48KiB barriers=1 stack=16\n */'),
      { sm_90: expected({ numRegs: 40, sharedSizeBytes: 49152, barriers: 1, stackFrameBytes: 16 }) },
    );
    assert.deepEqual(Object.keys(figures('// occupancy: regs=32 arch=sm_80,sm_86') ?? {}), ['sm_80', 'sm_86']);
    const odd = parseResourceAnnotation('// occupancy: regs=12.5 smem=4k colour=blue');
    assert.deepEqual(odd?.resources[ANY_ARCH].sharedSizeBytes, 4096);
    assert.equal(odd?.resources[ANY_ARCH].numRegs, null);
    assert.deepEqual(odd?.unknownKeys, ['regs=12.5', 'colour=blue']);
    assert.equal(parseResourceAnnotation('// no figures here'), null);
    assert.equal(parseResourceAnnotation('// occupancy: regs=-4'), null);
    assert.equal(parseResourceAnnotation(null), null);
  });

  it('falls back from sm_90a to sm_90 to any arch, and prefers ptxas to log to annotation', () => {
    const annotation = parseResourceAnnotation('// occupancy: regs=64')!.resources;
    assert.equal(resourcesForArch(annotation, 'sm_80')?.numRegs, 64);
    const ptxas: ResourceFigures = { ...unknownResources(), numRegs: 40, source: 'ptxas' };
    assert.equal(resourcesForArch({ sm_90: ptxas }, 'sm_90a'), ptxas);
    assert.equal(resourcesForArch({ sm_90: ptxas }, 'sm_80'), null);
    const log: ResourceFigures = { ...ptxas, source: 'log' };
    assert.equal(preferResources(log, ptxas), ptxas);
    assert.equal(preferResources(annotation[ANY_ARCH], log), log);
    assert.equal(preferResources({ ...ptxas, stale: true }, ptxas), ptxas);
    assert.deepEqual(uncompiledInstances(null)[0].resources[ANY_ARCH].source, 'unknown');
  });
});
