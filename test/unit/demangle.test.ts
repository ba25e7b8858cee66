import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { demangle } from '../../server/src/core/compiler/demangle';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/ptxas');
/** Names from real nvcc compiles of the fixture .cu files, each with GNU c++filt's output (binutils 2.40). */
const corpus = fs
  .readFileSync(path.join(FIXTURES, 'demangle-corpus.tsv'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => line.split('\t') as [string, string]);

describe('demangler', () => {
  it(`prints what c++filt prints for all ${corpus.length} names of the corpus`, () => {
    assert.ok(corpus.length >= 50);
    const wrong = corpus
      .filter(([mangled, expected]) => demangle(mangled)?.signature !== expected)
      .map(([mangled, expected]) => `${mangled}\n  c++filt: ${expected}\n  ours:    ${demangle(mangled)?.signature}`);
    assert.deepEqual(wrong, []);
  });

  it('demangles every entry name ptxas printed in the captures', () => {
    const names = new Set<string>();
    for (const file of fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.txt'))) {
      for (const m of fs
        .readFileSync(path.join(FIXTURES, file), 'utf8')
        .matchAll(/Compiling entry function '([^']+)'/g))
        names.add(m[1]);
    }
    assert.ok(names.size > 30);
    for (const name of names) assert.ok(demangle(name), name);
  });

  it('splits a namespaced template kernel into its parts', () => {
    assert.deepEqual(demangle('_ZN2ns6reduceIfLi256EEEvPKT_PS1_i'), {
      name: 'reduce',
      scopedName: 'ns::reduce',
      qualifiedName: 'ns::reduce<float, 256>',
      scope: ['ns'],
      templateArgs: ['float', '256'],
      parameters: ['float const*', 'float*', 'int'],
      returnType: 'void',
      signature: 'void ns::reduce<float, 256>(float const*, float*, int)',
      externC: false,
    });
  });

  it('reads negative, bool, unsigned and enum literals and flattens packs', () => {
    assert.deepEqual(demangle('_ZN2ns6detail5shiftILin5ELb1EEEvPfi')?.templateArgs, ['-5', 'true']);
    assert.deepEqual(demangle('_ZN4math8variadicIfLj4EJiPKcEEEvPT_DpT1_')?.templateArgs, [
      'float',
      '4u',
      'int',
      'char const*',
    ]);
    assert.deepEqual(demangle('_ZN4math8variadicIfLj4EJiPKcEEEvPT_DpT1_')?.parameters, [
      'float*',
      'int',
      'char const*',
    ]);
    assert.deepEqual(demangle('_ZN3lib2v27combineIfL2Op0EL4Mode2EEEvPT_RKS4_S2_')?.templateArgs, [
      'float',
      '(Op)0',
      '(Mode)2',
    ]);
  });

  it('reads the expressions of dependent signatures: dependent names, sizeof, decltype, operators in array bounds', () => {
    const sfinae = demangle('_Z6sfinaeIfEvPT_N10enable_if_IXsr12is_primitiveIS0_EE5valueEiE4typeE');
    assert.deepEqual(sfinae?.templateArgs, ['float']);
    assert.deepEqual(sfinae?.parameters, ['float*', 'enable_if_<is_primitive<float>::value, int>::type']);
    assert.equal(demangle('_Z8plus_oneILi3EEvPAplT_Li1E_i')?.signature, 'void plus_one<3>(int (*) [(3)+(1)])');
    assert.equal(demangle('_Z5sizedIdEvPAstT__c')?.signature, 'void sized<double>(char (*) [sizeof (double)])');
    assert.equal(
      demangle('_Z4declIfEvPT_DTplcvS0__ELi1EE')?.signature,
      'void decl<float>(float*, decltype (((float)())+(1)))',
    );
  });

  it('returns extern "C" names as they are', () => {
    const c = demangle('saxpy_c');
    assert.deepEqual([c?.name, c?.qualifiedName, c?.parameters, c?.externC], ['saxpy_c', 'saxpy_c', null, true]);
  });

  it('names anonymous namespaces, lambdas and nvcc file-static prefixes', () => {
    const hidden = demangle('_ZN39_GLOBAL__N__6adc3fb7_8_plain_cu_saxpy_c6hiddenEPi');
    assert.deepEqual(
      [hidden?.scopedName, hidden?.signature],
      ['(anonymous namespace)::hidden', '(anonymous namespace)::hidden(int*)'],
    );
    const rdc = demangle(
      '__nv_static_28__6adc3fb7_8_plain_cu_saxpy_c__ZN39_GLOBAL__N__6adc3fb7_8_plain_cu_saxpy_c6hiddenEPi',
    );
    assert.equal(rdc?.signature, hidden?.signature);
    assert.deepEqual(demangle('_Z5applyIZ13host_launchesPfiEUlfE_EvS0_iT_')?.templateArgs, [
      'host_launches(float*, int)::{lambda(float)#1}',
    ]);
    assert.deepEqual(demangle('_Z5packsIJZ11instantiatevEUliE_Z11instantiatevEUlvE_EEvDpT_')?.templateArgs, [
      'instantiate()::{lambda(int)#1}',
      'instantiate()::{lambda()#1}',
    ]);
  });

  it('returns null, never throws, on what it cannot read', () => {
    for (const bad of [
      '',
      '_Z',
      '_Z1',
      '_Z3fooILi5',
      '_Z1fIiEvT_UlvE_',
      '_ZZ4mainENKUlvE0_clEv',
      'not a name',
      '_Z9999999999x',
      '_Z1fT_',
      '_Z1fS9_',
      '1abc',
    ]) {
      assert.equal(demangle(bad), null, bad);
    }
    assert.equal(demangle(null as unknown as string), null);
    assert.equal(demangle(`_Z${'P'.repeat(5000)}i`), null);
    // Every prefix of every corpus name: a truncated name must give null or a name, not an exception.
    for (const [mangled] of corpus) for (let i = 0; i < mangled.length; i++) demangle(mangled.slice(0, i));
  });

  it('survives random mutations of real names', () => {
    let seed = 42;
    const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const alphabet = 'NESILJTZPKRVOFADpvfi_0123456789abcE';
    let demangled = 0;
    for (let round = 0; round < 3000; round++) {
      const [mangled] = corpus[random(corpus.length)];
      const chars = [...mangled];
      for (let k = 0; k < 1 + random(3); k++) chars[2 + random(chars.length - 2)] = alphabet[random(alphabet.length)];
      const result = demangle(chars.join(''));
      if (result) {
        demangled++;
        assert.equal(typeof result.signature, 'string');
      }
    }
    assert.ok(demangled > 0);
  });
});
