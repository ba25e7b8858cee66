/**
 * The document report with PTX: a divergent branch's path costs come from the
 * instructions between its `.loc` lines (test/fixtures/divergence/ptx-branches.cu,
 * compiled with `nvcc -ptx -lineinfo`), in the report's branches, its warning and
 * the hover on the branch; without PTX they stay estimates from the syntax.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { analyzeSnippet } from '../support/analyze-snippet';
import { DIVERGENCE_FIXTURES } from '../support/divergence-fixtures';
import { buildDocumentReport } from '../../server/src/core/report/document-report';
import { hoverAt } from '../../server/src/lsp/hover';
import { FiguresRegistry } from '../../server/src/core/compiler/figures-registry';
import type { Branch } from '../../server/src/core/body/divergence';

const CU = path.join(DIVERGENCE_FIXTURES, 'ptx-branches.cu');
const PTX = fs.readFileSync(path.join(DIVERGENCE_FIXTURES, 'ptx-branches.ptx'), 'utf8');

describe('document report: branch costs from the PTX', () => {
  const build = async (ptx?: { text: string; filePath: string }) => {
    const facts = await analyzeSnippet(fs.readFileSync(CU, 'utf8'), { uri: 'file:///w/ptx-branches.cu' });
    return buildDocumentReport({ facts, archs: ['sm_80'], figuresFor: new FiguresRegistry().figuresFor, ptx });
  };
  const split = (branches: readonly Branch[]) => branches.find((b) => b.condition === 't % 2 == 0')!;

  it('keeps the syntax estimate without PTX', async () => {
    const report = await build();
    assert.equal(report.branches, report.facts.branches);
    assert.equal(split(report.branches).costSource, 'syntax-estimate');
    const warning = report.findings.find((f) => f.code === 'divergent-branch')!;
    assert.match(warning.message, /estimated from the syntax/);
  });

  it('counts PTX instructions per path when PTX of the file is given, in the branches, the warning and the hover', async () => {
    const report = await build({ text: PTX, filePath: CU });
    const branch = split(report.branches);
    assert.equal(branch.costSource, 'ptx');
    assert.deepEqual(
      branch.paths.map((p) => p.cost),
      [18, 1],
    );
    // the facts are per document version and stay as analysed
    assert.equal(split(report.facts.branches).costSource, 'syntax-estimate');
    assert.equal(report.branches.find((b) => b.kind === 'tail')!.costSource, 'syntax-estimate');
    const warning = report.findings.find((f) => f.code === 'divergent-branch')!;
    assert.equal(
      warning.message,
      '`t % 2 == 0` splits every warp into two groups of 16 lanes: the warp runs both paths one after the other: 19 issue slots against 18 if the lanes agreed (issue efficiency 95%; PTX instructions).',
    );
    const hover = hoverAt(report, {
      line: branch.conditionSpan.start.line,
      character: branch.conditionSpan.start.character + 2,
    });
    assert.ok(hover && typeof hover.contents === 'object' && 'value' in hover.contents);
    assert.equal(
      hover.contents.value,
      [
        '**divergent** `t % 2 == 0` in kernel `split_paths`',
        '',
        warning.message,
        '',
        'Path costs (issue slots per warp, from the PTX): then 18 · else 1.',
        '',
        "**Warning:** 9.4 issue slots per warp with lanes idle, 21% of the kernel's 45; a warning from 4 slots and 8% (`cudaOccupancy.divergence.minCost`, `cudaOccupancy.divergence.minShare`).",
        '',
        'Thread index from `int t = threadIdx.x;` (line 11).',
        '',
        '**Suggestion:** Index the work so the active lanes are contiguous (e.g. sequential addressing `tid < s` instead of `tid % (2*s) == 0`): whole warps then drop out together.',
        '',
        'Assumptions:',
        '- path costs are the PTX instructions (nvcc -ptx -lineinfo) whose source location falls in each path, per warp and per pass; loops are counted once',
      ].join('\n'),
    );
    assert.deepEqual(hover.range, { start: branch.conditionSpan.start, end: branch.conditionSpan.end });
  });

  it('ignores PTX of another file', async () => {
    const report = await build({ text: PTX, filePath: '/w/other.cu' });
    assert.equal(split(report.branches).costSource, 'syntax-estimate');
  });
});
