/**
 * Divergent branches priced from compiled code: PTX per instantiation (the launched one, or the
 * costliest with the range, never the sum over all of them), and branches the compiler predicated.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { analyzeSnippet } from '../support/analyze-snippet';
import { DIVERGENCE_FIXTURES } from '../support/divergence-fixtures';
import { buildDocumentReport } from '../../server/src/core/report/document-report';
import { FiguresRegistry } from '../../server/src/core/compiler/figures-registry';
import { branchHoverMarkdown } from '../../server/src/core/report/branch-report';
import { divergenceFindings } from '../../server/src/core/report/divergence-findings';
import type { Branch } from '../../server/src/core/body/divergence';

const CU = path.join(DIVERGENCE_FIXTURES, 'ptx-instances.cu');
const PTX = fs.readFileSync(path.join(DIVERGENCE_FIXTURES, 'ptx-instances.ptx'), 'utf8');

const reportOf = async (text: string, compiled: { ptx?: string } = {}) => {
  const facts = await analyzeSnippet(text, { uri: 'file:///w/ptx-instances.cu' });
  return buildDocumentReport({
    facts,
    archs: ['sm_80'],
    figuresFor: new FiguresRegistry().figuresFor,
    ptx: compiled.ptx ? { text: compiled.ptx, filePath: CU } : null,
  });
};
const onLine = (branches: readonly Branch[], line: number) => branches.find((b) => b.span.start.line === line - 1)!;

describe('compiled branch costs: PTX per instantiation', () => {
  it('prices a branch of a template kernel in the instance that is launched, not summed over the instances', async () => {
    const report = await reportOf(fs.readFileSync(CU, 'utf8'), { ptx: PTX });
    const b = onLine(report.branches, 11);
    assert.equal(b.costSource, 'ptx');
    // scale<int, 8>: 8 instructions in the then-path, 2 in the else-path (the three instances hold 24 and 7)
    assert.deepEqual(b.paths.map((p) => p.cost), [8, 2]);
    assert.equal(b.explanation, '`t % 4 == 0` splits every warp (24 lanes against 8): the warp runs both paths one after the other: 10 issue slots against 8 if the lanes agreed (issue efficiency 80%; PTX instructions).');
    assert.ok(b.assumptions.includes('path costs are the PTX instructions (nvcc -ptx -lineinfo) whose source location falls in each path, per warp and per pass, of `scale<int, 8>`, the instance launched here; loops are counted once'), b.assumptions.join('\n'));
  });

  it('without a launch that says which instance runs, shows the costliest and the range across them', async () => {
    const report = await reportOf(fs.readFileSync(CU, 'utf8').replace(/scale<int, 8><<<[^;]*;/, ''), { ptx: PTX });
    const b = onLine(report.branches, 11);
    assert.deepEqual(b.paths.map((p) => p.cost), [8, 3]);
    assert.ok(b.assumptions.some((a) => a.endsWith('of `scale<float, 2>`, the costliest of 3 instantiations (across them: then 8 · else 2–3); loops are counted once')), b.assumptions.join('\n'));
  });

  it('says a select the compiler predicated is predicated, with the instructions every warp issues', async () => {
    const report = await reportOf(fs.readFileSync(CU, 'utf8'), { ptx: PTX });
    const b = onLine(report.branches, 17);
    assert.equal(b.kind, 'divergent');
    assert.deepEqual(b.predicated, { source: 'ptx', cost: 5 });
    assert.match(b.explanation, / The compiler predicated it \(no branch instruction in the PTX\): every warp issues its 5 PTX instructions, whether its lanes agree or not\.$/);
    // the branch that compiles to `@%p bra` is not
    assert.equal(onLine(report.branches, 11).predicated, undefined);
  });

  it('weighs branches against the length of the same instance, in PTX instructions, and an estimate against the estimate', async () => {
    const text = fs.readFileSync(CU, 'utf8');
    const report = await reportOf(text, { ptx: PTX });
    const counted = onLine(report.branches, 11);
    assert.equal(counted.kernelIssueSlots, 50);
    // the ternary's paths keep their syntax estimates, so its kernel keeps the estimated length
    const estimated = onLine(report.branches, 17);
    assert.equal(estimated.costSource, 'syntax-estimate');
    const before = onLine((await reportOf(text)).branches, 17);
    assert.equal(estimated.kernelIssueSlots, before.kernelIssueSlots);
    assert.notEqual(estimated.kernelIssueSlots, 50);
  });

  it('makes a branch the compiler predicated a hint at most, and says why in its hover', async () => {
    const report = await reportOf(fs.readFileSync(CU, 'utf8'), { ptx: PTX });
    const b = onLine(report.branches, 17);
    assert.ok(b.idleIssueSlots > 0);
    const severities = { minCostThreshold: 0, minSharePercent: 0 };
    const finding = divergenceFindings([b], severities);
    assert.deepEqual(finding.map((f) => f.severity), ['hint']);
    // the same branch without the PTX's word on it is a warning under those thresholds
    assert.deepEqual(divergenceFindings([{ ...b, predicated: undefined }], severities).map((f) => f.severity), ['warning']);
    assert.match(branchHoverMarkdown([b], severities), /A hint, not a warning: .* but the compiler predicated the branch, so every warp issues it split or not\./);
  });
});
