import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { entriesForArch, parsePtxasOutput, type PtxasOutput } from '../../server/src/core/compiler/ptxas-output';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/ptxas');
const read = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const captures = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.txt'));

/** An independent reading of a capture: each `Compiling entry function` and the next `Used N registers`. */
function registersByScan(text: string): Map<string, number> {
  const out = new Map<string, number>();
  let current: string | null = null;
  for (const line of text.split('\n')) {
    const compiling = /Compiling entry function '([^']+)' for '(sm_\w+)'/.exec(line);
    if (compiling) current = `${compiling[2]} ${compiling[1]}`;
    const used = /Used (\d+) registers/.exec(line);
    if (used && current) {
      out.set(current, Number(used[1]));
      current = null;
    }
  }
  return out;
}

function entry(output: PtxasOutput, name: string, arch: string) {
  const found = output.entries.find((e) => e.mangledName === name && e.arch === arch);
  assert.ok(found, `no entry ${name} for ${arch}`);
  return found;
}

describe('ptxas output parser', () => {
  it('has captures from five architectures to test against', () => {
    for (const arch of ['sm_75', 'sm_80', 'sm_90', 'sm_100', 'sm_120']) {
      assert.ok(
        captures.some((f) => f.endsWith(`.${arch}.txt`)),
        `no capture for ${arch}`,
      );
    }
  });

  for (const capture of captures) {
    it(`reads every entry of ${capture} with the registers ptxas printed`, () => {
      const text = read(capture);
      const output = parsePtxasOutput(text);
      const expected = registersByScan(text);
      assert.equal(output.entries.length, expected.size);
      for (const e of output.entries) {
        assert.equal(e.numRegs, expected.get(`${e.arch} ${e.mangledName}`), `${e.arch} ${e.mangledName}`);
        for (const value of [
          e.sharedSizeBytes,
          e.constBytes,
          e.stackFrameBytes,
          e.spillStoreBytes,
          e.spillLoadBytes,
          e.localBytes,
          e.textures,
        ]) {
          assert.ok(Number.isSafeInteger(value) && value >= 0);
        }
      }
      assert.equal(output.ignoredLines, 0);
      const archInName = /\.(sm_\w+)\.txt$/.exec(capture)?.[1];
      if (archInName) assert.deepEqual(output.archs, [archInName]);
    });
  }

  it('reads registers, barriers, shared memory and stack of template instantiations (sm_90)', () => {
    const output = parsePtxasOutput(read('templates.sm_90.txt'));
    const reduce = entry(output, '_ZN2ns6reduceIfLi256EEEvPKT_PS1_i', 'sm_90');
    assert.deepEqual(
      [
        reduce.numRegs,
        reduce.barriers,
        reduce.sharedSizeBytes,
        reduce.stackFrameBytes,
        reduce.spillStoreBytes,
        reduce.isEntry,
      ],
      [12, 1, 1024, 0, 0, true],
    );
    assert.equal(entry(output, '_ZN2ns6reduceIiLi512EEEvPKT_PS1_i', 'sm_90').sharedSizeBytes, 2048);
    assert.equal(entry(output, '_ZN2ns6detail5shiftILin5ELb1EEEvPfi', 'sm_90').barriers, 0);
    assert.equal(output.modules.length, 1);
    assert.deepEqual([output.modules[0].arch, output.modules[0].gmemBytes], ['sm_90', 0]);
  });

  it('reads spills, stack frames and the cumulative stack', () => {
    const output = parsePtxasOutput(read('spills.sm_90.txt'));
    const spilly = entry(output, '_Z6spillyPKfPfi', 'sm_90');
    assert.deepEqual(
      [
        spilly.numRegs,
        spilly.stackFrameBytes,
        spilly.spillStoreBytes,
        spilly.spillLoadBytes,
        spilly.cumulativeStackBytes,
      ],
      [32, 1032, 2256, 2460, 1032],
    );
    assert.equal(entry(output, '_Z8big_smemPf', 'sm_90').sharedSizeBytes, 48000);
  });

  it('reads cmem banks where ptxas prints them (sm_75) and module gmem', () => {
    const output = parsePtxasOutput(read('plain.sm_75.txt'));
    assert.equal(entry(output, '_Z7boundedPf', 'sm_75').constBytes, 360);
    assert.equal(entry(output, '_Z12calls_helperPfi', 'sm_75').constBanks['0'], 364);
    assert.equal(output.modules[0].gmemBytes, 4100);
  });

  it('keeps device functions apart from entries', () => {
    const output = parsePtxasOutput(read('plain.sm_90.txt'));
    assert.equal(
      output.entries.some((e) => e.mangledName === '_Z6helperfi'),
      false,
    );
    const helper = output.functions.find((f) => f.mangledName === '_Z6helperfi');
    assert.ok(helper);
    assert.deepEqual([helper.isEntry, helper.numRegs, helper.arch], [false, null, 'sm_90']);
    assert.equal(entry(output, '_Z12calls_helperPfi', 'sm_90').stackFrameBytes, 64);
    assert.equal(entry(output, 'saxpy_c', 'sm_90').numRegs, 10);
  });

  it('splits one multi-architecture run by architecture, module lines included', () => {
    const output = parsePtxasOutput(read('plain.multi.txt'));
    assert.deepEqual(output.archs, ['sm_75', 'sm_80', 'sm_90', 'sm_100', 'sm_120']);
    for (const arch of output.archs) assert.equal(entriesForArch(output, arch).size, 8);
    assert.deepEqual(
      output.modules.map((m) => m.arch),
      output.archs,
    );
    assert.deepEqual(output.modules[0].constBanks, { 4: 16 });
    // The same kernel differs per architecture, as in the single-arch captures.
    const single = parsePtxasOutput(read('plain.sm_75.txt'));
    assert.equal(
      entry(output, '_Z12calls_helperPfi', 'sm_75').numRegs,
      entry(single, '_Z12calls_helperPfi', 'sm_75').numRegs,
    );
  });

  it('reads sm_90a and -rdc file-static names', () => {
    assert.deepEqual(parsePtxasOutput(read('templates.sm_90a.txt')).archs, ['sm_90a']);
    const rdc = parsePtxasOutput(read('plain.rdc.sm_80.txt'));
    assert.ok(rdc.entries.some((e) => e.mangledName.startsWith('__nv_static_') && e.numRegs !== null));
  });

  it('reads spill and local-memory warnings with their kernels and bytes', () => {
    const output = parsePtxasOutput(read('spills.warn-spills.sm_90.txt'));
    const spill = output.diagnostics.find((d) => d.kind === 'spill' && d.mangledName === '_Z6spillyPKfPfi');
    assert.ok(spill);
    assert.deepEqual(
      [spill.severity, spill.arch, spill.bytes],
      ['warning', 'sm_90', { spillStores: 2256, spillLoads: 2460 }],
    );
    const local = output.diagnostics.find((d) => d.kind === 'local-memory' && d.mangledName === '_Z11local_arrayPii');
    assert.deepEqual(local?.bytes, { stackFrame: 1024 });
  });

  it('reads launch-bounds warnings, register-limit warnings and the shared-memory error', () => {
    const bounds = parsePtxasOutput(read('warnings.sm_75.txt')).diagnostics.filter(
      (d) => d.kind === 'launch-bounds-ignored',
    );
    assert.deepEqual(bounds.map((d) => [d.mangledName, d.arch]).sort(), [
      ['_Z2k8PKfPfi', 'sm_75'],
      ['_Z4overPf', 'sm_75'],
    ]);
    const adjusted = parsePtxasOutput(read('warnings.maxrreg16.sm_90.txt')).diagnostics.filter(
      (d) => d.kind === 'register-limit-adjusted',
    );
    assert.equal(adjusted.length, 2);
    assert.ok(adjusted.every((d) => d.arch === 'sm_90'));
    const tooMuch = parsePtxasOutput(read('too-much-smem.sm_80.txt')).diagnostics;
    assert.deepEqual(
      tooMuch.map((d) => [d.severity, d.kind, d.mangledName, d.arch, d.bytes]),
      [['error', 'too-much-shared', '_Z8too_muchPf', 'sm_80', { requested: 80000, limit: 49152 }]],
    );
    const ignored = parsePtxasOutput(read('too-much-smem.maxrreg300.sm_90.txt')).diagnostics.map((d) => d.kind);
    assert.deepEqual(ignored.sort(), ['register-limit-ignored', 'too-much-shared']);
  });

  it('reads a build log: CRLF, prefixes, interleaved output, old formats, textures', () => {
    const log = [
      '[1/3] Building CUDA object CMakeFiles/app.dir/src/a.cu.o',
      '1>  ptxas info    : 0 bytes gmem, 8 bytes cmem[14]',
      "1>  ptxas info    : Compiling entry function '_Z3oldPf' for 'sm_35'",
      '1>  ptxas info    : Function properties for _Z3oldPf',
      '1>      16 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads',
      'In file included from a.cu:3: some unrelated compiler chatter',
      '1>  ptxas info    : Used 22 registers, 4096+16 bytes smem, 336 bytes cmem[0], 4 bytes cmem[16], 2 textures, 1 samplers, 3 surfaces, 8+0 bytes lmem',
      "ptxas info    : Compiling entry function '_Z3newPf' for 'sm_90a'",
      'ptxas info    : Function properties for _Z3newPf',
      '    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads',
      'ptxas info    : Used 255 registers, used 16 barriers, 232448 bytes smem, 400 bytes cmem[0], 7 widgets',
      '[2/3] Linking CUDA executable app',
    ].join('\r\n');
    const output = parsePtxasOutput(log);
    const old = entry(output, '_Z3oldPf', 'sm_35');
    assert.deepEqual(
      [
        old.numRegs,
        old.barriers,
        old.sharedSizeBytes,
        old.constBytes,
        old.constBanks,
        old.textures,
        old.samplers,
        old.surfaces,
        old.localBytes,
        old.stackFrameBytes,
        old.spillLoadBytes,
      ],
      [22, null, 4112, 336, { 0: 336, 16: 4 }, 2, 1, 3, 8, 16, 8],
    );
    const fresh = entry(output, '_Z3newPf', 'sm_90a');
    assert.deepEqual(
      [fresh.numRegs, fresh.barriers, fresh.sharedSizeBytes, fresh.unknownFields],
      [255, 16, 232448, ['7 widgets']],
    );
    assert.deepEqual(
      output.modules.map((m) => [m.arch, m.gmemBytes]),
      [['sm_35', 0]],
    );
  });

  it('rejects numbers that do not validate and lines without context', () => {
    const output = parsePtxasOutput(
      [
        '    1 bytes stack frame, 2 bytes spill stores, 3 bytes spill loads',
        'ptxas info    : Used 12 registers',
        "ptxas info    : Compiling entry function '_Z1kv' for 'sm_80'",
        'ptxas info    : Used -5 registers, used 1 barriers',
        'ptxas info    : Used NaN registers',
        'ptxas info    : Used 99999999999999999999 registers',
        'ptxas info    : Used 1e3 registers',
        'ptxas info    : Used 70000 registers',
        "ptxas info    : Compiling entry function '_Z1jv' for 'bogus'",
      ].join('\n'),
    );
    assert.equal(output.entries.length, 1);
    assert.equal(output.entries[0].numRegs, null);
    assert.equal(output.ignoredLines, 8);
  });

  it('uses the default architecture when the output names none, and folds repeated warnings', () => {
    const text = [
      'ptxas /tmp/x.ptx, line 10; warning : Program is doing double precision computations.',
      'ptxas /tmp/x.ptx, line 11; warning : Program is doing double precision computations.',
      'ptxas info    : 0 bytes gmem',
    ].join('\n');
    const output = parsePtxasOutput(text, { defaultArch: 'sm_86' });
    assert.deepEqual(
      output.diagnostics.map((d) => [d.kind, d.count, d.arch]),
      [['other', 2, 'sm_86']],
    );
    assert.equal(output.modules[0].arch, 'sm_86');
  });

  it('never throws on noise', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pieces = [
      'ptxas info    : ',
      'Used ',
      '12',
      ' registers',
      ', ',
      "Compiling entry function '",
      "' for 'sm_90'",
      '\n',
      '\r',
      'bytes smem',
      '+',
      '-',
      '\u0000',
      'é',
      'cmem[',
      ']',
    ];
    for (let i = 0; i < 300; i++) {
      let text = '';
      for (let k = 0; k < 60; k++) text += pieces[Math.floor(random() * pieces.length)];
      const output = parsePtxasOutput(text);
      for (const e of output.entries)
        assert.ok(e.numRegs === null || (Number.isSafeInteger(e.numRegs) && e.numRegs >= 0));
    }
    assert.equal(parsePtxasOutput(undefined as unknown as string).entries.length, 0);
  });
});
