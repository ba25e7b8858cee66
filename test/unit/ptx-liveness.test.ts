/**
 * Register pressure from PTX (core/compiler/ptx-liveness.ts), on PTX captured from nvcc 13.0
 * (`nvcc -ptx -lineinfo -arch=sm_XX test/fixtures/ptx-pressure/pressure.cu`) for sm_75, sm_80 and sm_90.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { ptxPressure } from '../../server/src/core/compiler/ptx-liveness';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'ptx-pressure');
const ptx = (arch: string) => readFileSync(path.join(FIXTURES, `pressure.${arch}.ptx`), 'utf8');

describe('PTX register pressure', () => {
  for (const arch of ['sm_75', 'sm_80', 'sm_90']) {
    it(`peaks on the line that holds the most values at once (${arch})`, () => {
      const kernels = new Map(ptxPressure(ptx(arch)).map((k) => [k.name, k]));
      assert.deepEqual([...kernels.keys()].sort(), ['_Z6tile16PKfPfi', '_Z7branchyPKiPfi', '_Z8dot_rowsPKfS0_Pfi']);
      // dot_rows: the strided loop (line 10) holds the running sum, both row pointers, the index and its bounds.
      const dot = kernels.get('_Z8dot_rowsPKfS0_Pfi')!;
      assert.equal(dot.peakLine, 10);
      assert.equal(dot.peak, 17);
      // tile16: the 16 loaded values of t[] and their addresses (line 19), more than the products after them (line 24).
      const tile = kernels.get('_Z6tile16PKfPfi')!;
      assert.equal(tile.peakLine, 19);
      assert.ok(tile.lines.get(19)! > tile.lines.get(24)! && tile.lines.get(24)! >= 16);
      const branchy = kernels.get('_Z7branchyPKiPfi')!;
      assert.ok(branchy.peak < 10);
      // Nothing is live after the last instruction.
      assert.equal(branchy.instructions[branchy.instructions.length - 1].liveRegisters, 0);
    });
  }

  it('puts inlined code at the call in the kernel, saying which function it came from', () => {
    const dot = ptxPressure(ptx('sm_80')).find((k) => k.name === '_Z8dot_rowsPKfS0_Pfi')!;
    const shuffles = dot.instructions.filter((i) => i.text.startsWith('shfl'));
    assert.ok(shuffles.length === 5);
    for (const s of shuffles) {
      assert.equal(s.line, 11, 'the `s = warp_sum(s);` line');
      assert.deepEqual(s.inlinedFrom, { function: 'warp_sum', file: 1, line: 3 });
    }
    assert.equal(dot.lines.has(0), false, 'compiler-made line 0 is no source line');
  });

  it('counts 64-bit values as two registers and predicates apart, and a value as live until its last use', () => {
    const kernel = `
.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<3>;
	.loc	1 2 0
	ld.param.u64 	%rd1, [k_param_0];
	.loc	1 3 0
	mov.u32 	%r1, %tid.x;
	setp.gt.u32 	%p1, %r1, 31;
	@%p1 bra 	$L__BB0_2;
	.loc	1 4 0
	add.s32 	%r2, %r1, 1;
	mul.wide.u32 	%rd2, %r2, 4;
	st.global.u32 	[%rd1], %r2;
$L__BB0_2:
	.loc	1 5 0
	ret;
}
`;
    const [k] = ptxPressure(kernel);
    const live = k.instructions.map((i) => [i.text.split(/\s/)[0], i.liveRegisters, i.livePredicates]);
    assert.deepEqual(live, [
      ['ld.param.u64', 2, 0], // %rd1
      ['mov.u32', 3, 0], // %rd1, %r1
      ['setp.gt.u32', 3, 1], // %rd1 %r1 (used after the branch), %p1
      ['@%p1', 3, 0], // the branch reads %p1 for the last time
      ['add.s32', 3, 0], // %rd1 %r2 (%r1 dead)
      ['mul.wide.u32', 5, 0], // %rd2 is defined and never read: it still takes its registers here
      ['st.global.u32', 0, 0],
      ['ret', 0, 0],
    ]);
    assert.equal(k.peak, 5);
    assert.equal(k.peakLine, 4);
  });
});
