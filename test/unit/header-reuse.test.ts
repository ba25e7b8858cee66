/**
 * A header read by several units is worked out once per context: its parse view, its outline and
 * its functions' IR are kept by its text and the macros they read, and reused only in a unit where
 * those macros are the same. Two files that include one header after different `#define`s must
 * each get what a fresh analysis gives them, never what the other one left behind.
 */
import * as assert from 'node:assert/strict';
import { getCudaParser } from '../support/grammar';
import { analyzeParsed } from '../support/analyze-snippet';
import { loadFileAloneParser, semanticIndex } from '../support/file-alone';
import { preprocessUnit } from '../../server/src/core/preprocess/unit';
import { UnitProgram } from '../../server/src/core/program/program';
import { printIR } from '../../server/src/core/ir/print-ir';
import { clearKeptTables } from '../../server/src/core/incremental/kept-tables';
import type { CudaParser } from '../../server/src/core/syntax/cuda-parser';

const HEADER = '/ws/group.cuh';

/** The program of `main` in a workspace of the header and the given `.cu` files. */
function programOf(parser: CudaParser, files: Record<string, string>, main: string): UnitProgram {
  const unit = preprocessUnit({ main, sources: { read: (p) => files[p] ?? null } });
  return new UnitProgram(unit, parser, []);
}

/** What one call gives, and what the same call gives after every kept result is forgotten. */
function againFresh<T>(compute: () => T): { kept: T; fresh: T } {
  const kept = compute();
  clearKeptTables();
  return { kept, fresh: compute() };
}

describe('a header shared by units with different macros', () => {
  let parser: CudaParser;
  before(async () => {
    parser = await getCudaParser();
    await loadFileAloneParser();
  });
  beforeEach(clearKeptTables);

  it("builds a header function's IR with each includer's macro values", () => {
    const files = {
      [HEADER]: '#pragma once\n__device__ inline int group_of(int t) { return t / GROUP; }\n',
      '/ws/a.cu': '#define GROUP 32\n#include "group.cuh"\n',
      '/ws/b.cu': '#define GROUP (16 + 16)\n#include "group.cuh"\n',
    };
    const irIn = (main: string) => {
      const program = programOf(parser, files, main);
      const [fn] = program.functionsNamed('group_of');
      return printIR(program.functionIR(fn)!);
    };
    const a = irIn('/ws/a.cu');
    const b = againFresh(() => irIn('/ws/b.cu'));
    assert.notEqual(a, b.kept, "b.cu's GROUP is not a.cu's");
    assert.equal(b.kept, b.fresh);
    assert.match(b.kept, /16 \+ 16/);
  });

  it("reads a header's specifier macros and the functions its macro uses declare in each includer's unit", () => {
    const files = {
      [HEADER]: ['#pragma once', 'HD int pick(int t) { return t & 1; }', 'DECLARE(lane_half)', ''].join('\n'),
      '/ws/a.cu': [
        '#define HD __device__',
        '#define DECLARE(name) __device__ int name(int t) { return t / 16; }',
        '#include "group.cuh"',
        '',
      ].join('\n'),
      '/ws/b.cu': [
        '#define DECLARE(name) __device__ int name(int t) { return t % 16; }',
        '#include "group.cuh"',
        '',
      ].join('\n'),
    };
    const seen = (main: string) => {
      const program = programOf(parser, files, main);
      const outline = program.outline(HEADER);
      const pick = outline.functions.find((f) => f.name === 'pick');
      const [half] = program.functionsNamed('lane_half');
      return {
        view: program.file(HEADER)!.view.split('\n')[1],
        pickIsDevice: pick?.device ?? null,
        half: half ? printIR(program.functionIR(half)!) : null,
      };
    };
    const a = seen('/ws/a.cu');
    const b = againFresh(() => seen('/ws/b.cu'));
    assert.deepEqual(b.kept, b.fresh);
    assert.equal(a.pickIsDevice, true);
    assert.equal(b.kept.pickIsDevice, false, 'HD is no macro in b.cu');
    assert.notEqual(a.view, b.kept.view, 'a.cu blanks HD in the parse view, b.cu cannot');
    assert.ok(a.half && b.kept.half && a.half !== b.kept.half, "each includer's DECLARE writes its own body");
  });

  it("gives each includer's kernel the branch verdicts its own macro values make", () => {
    const header = '#pragma once\n__device__ inline int group_of(int t) { return t / GROUP; }\n';
    const main = (group: number) =>
      [
        `#define GROUP ${group}`,
        '#include "group.cuh"',
        '__global__ void k(int* out) {',
        '  if (group_of(threadIdx.x) == 0) out[threadIdx.x] = 1;',
        '}',
        'void run(int* out) { k<<<1, 64>>>(out); }',
        '',
      ].join('\n');
    const index = semanticIndex();
    index.update(HEADER, header);
    index.update('/ws/a.cu', main(32));
    index.update('/ws/b.cu', main(1));
    const verdicts = (path: string, text: string) =>
      analyzeParsed(parser, text, { workspace: index, path }).branches.map((b) => [
        b.condition,
        b.kind,
        b.split?.groups,
      ]);
    const a = verdicts('/ws/a.cu', main(32));
    const b = againFresh(() => verdicts('/ws/b.cu', main(1)));
    assert.deepEqual(b.kept, b.fresh);
    const kinds = (v: typeof a) => v.map(([condition, kind]) => [condition, kind]);
    assert.deepEqual(kinds(a), [['group_of(threadIdx.x) == 0', 'warp-uniform']], 'whole warps agree when GROUP is 32');
    assert.deepEqual(kinds(b.kept), [['group_of(threadIdx.x) == 0', 'divergent']], 'lane 0 alone when GROUP is 1');
  });
});
