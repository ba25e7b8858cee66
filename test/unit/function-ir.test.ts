/**
 * The function IR: statements in order, names resolved to their declarations, control flow as
 * edges, and macro uses read as their expansions.
 */
import * as assert from 'node:assert/strict';
import { getCudaParser } from '../support/grammar';
import { preprocessUnit } from '../../server/src/core/preprocess/unit';
import { viewText } from '../../server/src/core/preprocess/view';
import { buildFunctionIR } from '../../server/src/core/ir/function-ir';
import { UnitMacroHooks } from '../../server/src/core/ir/macro-hooks';
import { printIR } from '../../server/src/core/ir/print-ir';

/** The IR of the last function of `text`, read in its unit. */
async function irOf(text: string): Promise<string> {
  const parser = await getCudaParser();
  const unit = preprocessUnit({ main: '/t/a.cu', sources: { read: (p) => (p === '/t/a.cu' ? text : null) } });
  const view = viewText(unit.files.get('/t/a.cu')!);
  const tree = parser.parse(view);
  const hooks = new UnitMacroHooks(parser, view, (o) => unit.macrosAt('/t/a.cu', o));
  try {
    const fns = tree.rootNode.namedChildren.filter((c) => c?.type === 'function_definition');
    const ir = buildFunctionIR(fns[fns.length - 1]!, { text: view, macros: hooks });
    return printIR(ir);
  } finally {
    hooks.dispose();
    tree.delete();
  }
}

describe('the function IR', () => {
  it('resolves names to their declarations, shadowing included, and lowers loops and early exits to edges', async () => {
    const ir = await irOf(`
void f(int n) {
  int i = 0;
  for (int i = 1; i < n; ++i) {
    if (i == 3) continue;
    if (i == 5) break;
  }
  if (n > 4) return;
  i += n;
}`);
    // The outer `i` (#1) and the loop's (#2) are two locals; `continue` goes to the update, `break` past the loop.
    assert.equal(
      ir,
      [
        'B0:',
        '  int i#1 = 0',
        '  int i#2 = 1',
        '  -> B1',
        'B1: (loop)',
        '  if (i#2 < n#0) -> B2 else B3 [loop]',
        'B2:',
        '  if (i#2 == 3) -> B5 else B7 [if]',
        'B3:',
        '  if (n#0 > 4) -> B11 else B13 [if]',
        'B4:',
        '  ++i#2',
        '  -> B1',
        'B5:',
        '  -> B4',
        'B6:',
        '  -> B7',
        'B7:',
        '  if (i#2 == 5) -> B8 else B10 [if]',
        'B8:',
        '  -> B3',
        'B9:',
        '  -> B10',
        'B10:',
        '  -> B4',
        'B11:',
        '  return',
        'B12:',
        '  -> B13',
        'B13:',
        '  i#1 += n#0',
        '  -> B14',
        'B14:',
        '  end',
      ].join('\n'),
    );
  });

  it('reads a statement macro and a block macro as their expansions, at the places they are written', async () => {
    const ir = await irOf(`
#define CUDA_KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)
#define LAUNCH(k, b) k<<<1, b>>>()
__global__ void k();
void g(float* x, int n) {
  LAUNCH(k, 256);
  CUDA_KERNEL_LOOP(j, n) { x[j] = 0; }
}`);
    assert.match(ir, /k<<<1, 256>>>\(\)/);
    assert.match(ir, /int j#\d = \(\(blockIdx\.x \* blockDim\.x\) \+ threadIdx\.x\)/);
    assert.match(ir, /if \(j#\d < n#1\) -> B\d+ else B\d+ \[loop\]/);
    assert.match(ir, /x#0\[j#\d\] = 0/);
  });
});
