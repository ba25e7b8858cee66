/**
 * Parsers of the full toolkit's binary utilities, which this machine does not have: the tests
 * are written from the output format NVIDIA's CUDA Binary Utilities documentation shows, not
 * from captured output, and say so in their names.
 */
import * as assert from 'node:assert/strict';
import { parseResourceUsage } from '../../server/src/core/compiler/cuobjdump-resources';
import { parseSassLifeRanges } from '../../server/src/core/compiler/sass-life-ranges';

describe('cuobjdump --dump-resource-usage (from the documented format)', () => {
  it('reads each function’s registers, stack, shared, local and constant memory per architecture', () => {
    const text = `
Fatbin elf code:
================
arch = sm_80
code version = [1,7]
host = linux
compile_size = 64bit

Resource usage:
 Common:
  GLOBAL:0
 Function _Z6kernelPfi:
  REG:10 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:368 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _Z5otherPKfPf:
  REG:40 STACK:16 SHARED:4096 LOCAL:24 CONSTANT[0]:376 CONSTANT[2]:8 TEXTURE:0 SURFACE:0 SAMPLER:0

Fatbin elf code:
================
arch = sm_90
Resource usage:
 Function _Z6kernelPfi:
  REG:12 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:544 TEXTURE:0 SURFACE:0 SAMPLER:0
`;
    assert.deepEqual(parseResourceUsage(text), [
      {
        arch: 'sm_80',
        name: '_Z6kernelPfi',
        registers: 10,
        stackBytes: 0,
        sharedBytes: 0,
        localBytes: 0,
        constantBytes: 368,
      },
      {
        arch: 'sm_80',
        name: '_Z5otherPKfPf',
        registers: 40,
        stackBytes: 16,
        sharedBytes: 4096,
        localBytes: 24,
        constantBytes: 384,
      },
      {
        arch: 'sm_90',
        name: '_Z6kernelPfi',
        registers: 12,
        stackBytes: 0,
        sharedBytes: 0,
        localBytes: 0,
        constantBytes: 544,
      },
    ]);
  });

  it('skips what it cannot trust: a function line outside an arch section, register counts no GPU has', () => {
    assert.deepEqual(parseResourceUsage(' Function _Z1kv:\n  REG:10 STACK:0\n'), []);
    assert.deepEqual(parseResourceUsage('arch = sm_80\n Function _Z1kv:\n  REG:9999 STACK:0\n'), []);
    assert.deepEqual(parseResourceUsage('arch = sm_80\n Function _Z1kv:\n  REG:-1 STACK:0\n'), []);
  });
});

describe('nvdisasm --print-life-ranges --print-line-info (from the documented format)', () => {
  it('reads the live register count per instruction and source line, the peak, and the local-memory spills', () => {
    const text = `
        .text._Z6kernelPfi:
        //## File "/src/k.cu", line 3
        /*0000*/                   MOV R1, c[0x0][0x28] ;             // |  1  ^           |      |
        /*0010*/                   S2R R0, SR_TID.X ;                 // |  2 ^:           |      |
        //## File "/src/k.cu", line 5
        /*0020*/                   ISETP.GE.AND P0, PT, R0, 0x20, PT ; // |  2 v:           |  1 ^ |
        /*0030*/                   STL [R1+0x4], R0 ;                 // |  3 ::^          |  1 : |
        /*0040*/                   LDL R4, [R1+0x4] ;                 // |  4 :::^         |  1 : |
        //## File "/src/k.cu", line 7
        /*0050*/               @P0 EXIT ;                             // |  2 :v           |  1 v |
`;
    const [fn] = parseSassLifeRanges(text);
    assert.equal(fn.name, '_Z6kernelPfi');
    assert.deepEqual(
      fn.instructions.map((i) => [i.offset, i.line, i.liveRegisters, i.livePredicates, i.local]),
      [
        [0x00, 3, 1, null, null],
        [0x10, 3, 2, null, null],
        [0x20, 5, 2, 1, null],
        [0x30, 5, 3, 1, 'store'],
        [0x40, 5, 4, 1, 'load'],
        [0x50, 7, 2, 1, null],
      ],
    );
    assert.equal(fn.peak, 4);
    assert.equal(fn.peakLine, 5);
    assert.deepEqual([...fn.spillLines], [[5, { stores: 1, loads: 1 }]]);
  });

  it('puts code inlined from a device function at its call in the kernel, and keeps where it is written', () => {
    const text = `
        .text._Z6kernelPfi:
        //## File "/src/k.cu", line 3 inlined at "/src/k.cu", line 20
        /*0000*/                   SHFL.DOWN PT, R5, R4, 0x10, 0x1f ; // |  6 ::^         |      |
        //## File "/src/helpers.cuh", line 7 inlined at "/src/helpers.cuh", line 12 inlined at "/src/k.cu", line 21
        /*0010*/                   FADD R4, R4, R5 ;                  // |  5 :v          |      |
`;
    const [fn] = parseSassLifeRanges(text);
    assert.deepEqual(
      fn.instructions.map((i) => [i.file, i.line, i.inlinedFrom]),
      [
        ['/src/k.cu', 20, { file: '/src/k.cu', line: 3 }],
        ['/src/k.cu', 21, { file: '/src/helpers.cuh', line: 7 }],
      ],
    );
  });
});
