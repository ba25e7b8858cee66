/**
 * Divergent branches priced from compiled code: PTX per instantiation (the launched one, or the
 * costliest with the range, never the sum over all of them), branches the compiler predicated, and
 * SASS listings. The SASS tests read listings written by hand in the format NVIDIA documents for
 * `cuobjdump -sass` and `nvdisasm --print-line-info` (CUDA Binary Utilities): this machine has no
 * cuobjdump to produce real ones.
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
import { parseSass, conditionalBranches } from '../../server/src/core/compiler/sass-listing';
import type { Branch } from '../../server/src/core/body/divergence';

const CU = path.join(DIVERGENCE_FIXTURES, 'ptx-instances.cu');
const PTX = fs.readFileSync(path.join(DIVERGENCE_FIXTURES, 'ptx-instances.ptx'), 'utf8');

const reportOf = async (text: string, compiled: { ptx?: string; sass?: string } = {}) => {
  const facts = await analyzeSnippet(text, { uri: 'file:///w/ptx-instances.cu' });
  return buildDocumentReport({
    facts,
    archs: ['sm_80'],
    figuresFor: new FiguresRegistry().figuresFor,
    ptx: compiled.ptx ? { text: compiled.ptx, filePath: CU } : null,
    sass: compiled.sass ? { text: compiled.sass, filePath: CU } : null,
  });
};
const onLine = (branches: readonly Branch[], line: number) => branches.find((b) => b.span.start.line === line - 1)!;

describe('compiled branch costs: PTX per instantiation', () => {
  it('prices a branch of a template kernel in the instance that is launched, not summed over the instances', async () => {
    const report = await reportOf(fs.readFileSync(CU, 'utf8'), { ptx: PTX });
    const b = onLine(report.branches, 11);
    assert.equal(b.costSource, 'ptx');
    // scale<int, 8>: 8 instructions in the then-path, 2 in the else-path (the three instances hold 24 and 7)
    assert.deepEqual(
      b.paths.map((p) => p.cost),
      [8, 2],
    );
    assert.equal(
      b.explanation,
      '`t % 4 == 0` splits every warp (24 lanes against 8): the warp runs both paths one after the other: 10 issue slots against 8 if the lanes agreed (issue efficiency 80%; PTX instructions).',
    );
    assert.ok(
      b.assumptions.includes(
        'path costs are the PTX instructions (nvcc -ptx -lineinfo) whose source location falls in each path, per warp and per pass, of `scale<int, 8>`, the instance launched here; loops are counted once',
      ),
      b.assumptions.join('\n'),
    );
  });

  it('without a launch that says which instance runs, shows the costliest and the range across them', async () => {
    const report = await reportOf(fs.readFileSync(CU, 'utf8').replace(/scale<int, 8><<<[^;]*;/, ''), { ptx: PTX });
    const b = onLine(report.branches, 11);
    assert.deepEqual(
      b.paths.map((p) => p.cost),
      [8, 3],
    );
    assert.ok(
      b.assumptions.some((a) =>
        a.endsWith(
          'of `scale<float, 2>`, the costliest of 3 instantiations (across them: then 8 · else 2–3); loops are counted once',
        ),
      ),
      b.assumptions.join('\n'),
    );
  });

  it('says a select the compiler predicated is predicated, with the instructions every warp issues', async () => {
    const report = await reportOf(fs.readFileSync(CU, 'utf8'), { ptx: PTX });
    const b = onLine(report.branches, 17);
    assert.equal(b.kind, 'divergent');
    assert.deepEqual(b.predicated, { source: 'ptx', cost: 5 });
    assert.match(
      b.explanation,
      / The compiler predicated it \(no branch instruction in the PTX\): every warp issues its 5 PTX instructions, whether its lanes agree or not\.$/,
    );
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
    assert.deepEqual(
      finding.map((f) => f.severity),
      ['hint'],
    );
    // the same branch without the PTX's word on it is a warning under those thresholds
    assert.deepEqual(
      divergenceFindings([{ ...b, predicated: undefined }], severities).map((f) => f.severity),
      ['warning'],
    );
    assert.match(
      branchHoverMarkdown([b], severities),
      /A hint, not a warning: .* but the compiler predicated the branch, so every warp issues it split or not\./,
    );
  });
});

/** A listing in the shape `cuobjdump -sass` prints (sm_80), for two kernels of split.cu. */
const SASS = `
Fatbin elf code:
================
arch = sm_80
code version = [1,7]
host = linux
compile_size = 64bit

	code for sm_80
		Function : _Z6selectPfi
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;        /* 0x00000a00ff017624 */
                                                                                 /* 0x000fe400078e00ff */
        /*0010*/                   S2R R0, SR_TID.X ;                             /* 0x0000000000007919 */
                                                                                 /* 0x000e220000002100 */
        /*0020*/                   LOP3.LUT P0, RZ, R0, 0x1, RZ, 0xc0, !PT ;      /* 0x0000000100ff7812 */
                                                                                 /* 0x001fda000780c0ff */
        /*0030*/               @P0 STG.E [R2.64], R5 ;                            /* 0x0000000502000986 */
                                                                                 /* 0x0001e2000c101904 */
        /*0040*/                   EXIT ;                                         /* 0x000000000000794d */
                                                                                 /* 0x000fea0003800000 */
        /*0050*/                   BRA 0x50;                                      /* 0xfffffff000007947 */
                                                                                 /* 0x000fc0000383ffff */
		..........

		Function : _Z6branchPfi
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"
        /*0000*/                   S2R R0, SR_TID.X ;                             /* 0x0000000000007919 */
                                                                                 /* 0x000e220000002100 */
        /*0010*/                   ISETP.GE.AND P0, PT, R0, 0x10, PT ;            /* 0x000000100000780c */
                                                                                 /* 0x001fda0003f06270 */
        /*0020*/                   BSSY B0, 0x90 ;                                /* 0x0000006000007945 */
                                                                                 /* 0x000fe20003800000 */
        /*0030*/               @P0 BRA 0x80 ;                                     /* 0x0000004000000947 */
                                                                                 /* 0x000fea0003800000 */
        /*0040*/                   STG.E [R2.64], R5 ;                            /* 0x0000000502000986 */
                                                                                 /* 0x0001e2000c101904 */
        /*0080*/                   BSYNC B0 ;                                     /* 0x0000000000007941 */
                                                                                 /* 0x000fea0003800000 */
        /*0090*/                   EXIT ;                                         /* 0x000000000000794d */
                                                                                 /* 0x000fea0003800000 */
		..........
`;

const SPLIT = [
  '__global__ void select(float* a, int n) {',
  '  if (threadIdx.x % 2 == 1) a[0] = a[1] * 2.0f + 1.0f;',
  '}',
  '__global__ void branch(float* a, int n) {',
  '  if (threadIdx.x < 16) a[0] = a[1] * 2.0f + 1.0f;',
  '}',
  'void h(float* a) { select<<<1, 64>>>(a, 1); branch<<<1, 64>>>(a, 1); }',
].join('\n');

describe("compiled branch costs: SASS listings (NVIDIA's documented format, hand-written)", () => {
  it('sass format: reads functions, instructions, predicates and opcodes from cuobjdump -sass output', () => {
    const functions = parseSass(SASS);
    assert.deepEqual(
      functions.map((f) => [f.name, f.arch, f.instructions.length]),
      [
        ['_Z6selectPfi', 'sm_80', 6],
        ['_Z6branchPfi', 'sm_80', 7],
      ],
    );
    assert.deepEqual(functions[0].instructions[3], {
      text: '@P0 STG.E [R2.64], R5',
      opcode: 'STG',
      predicated: true,
      location: null,
    });
    assert.deepEqual(
      functions.map((f) => conditionalBranches(f).map((i) => i.text)),
      [[], ['@P0 BRA 0x80']],
    );
  });

  it('sass format: says a branch of a kernel with no conditional branch instruction is predicated, and keeps the one that branches', async () => {
    const report = await reportOf(SPLIT, { sass: SASS });
    const [select, branch] = report.branches;
    assert.deepEqual(select.predicated, { source: 'sass', cost: null });
    assert.match(
      select.explanation,
      /The compiler predicated it \(no branch instruction in the SASS\): every warp issues both paths, whether its lanes agree or not\.$/,
    );
    assert.equal(branch.predicated, undefined);
  });

  it('sass format: with nvdisasm line information, judges each branch by the instructions on its lines', async () => {
    const listing = [
      '\t.text._Z6selectPfi:',
      '\t//## File "/work/split.cu", line 2',
      '        /*0000*/                   LOP3.LUT P0, RZ, R0, 0x1, RZ, 0xc0, !PT ;',
      '        /*0010*/               @P0 FFMA R5, R4, 2, 1 ;',
      '        /*0020*/               @P0 STG.E [R2.64], R5 ;',
      '\t//## File "/work/split.cu", line 3',
      '        /*0030*/                   EXIT ;',
      '\t.text._Z6branchPfi:',
      '\t//## File "/work/split.cu", line 5',
      '        /*0000*/                   ISETP.GE.AND P0, PT, R0, 0x10, PT ;',
      '        /*0010*/               @P0 BRA 0x40 ;',
      '        /*0020*/                   STG.E [R2.64], R5 ;',
    ].join('\n');
    const functions = parseSass(listing);
    assert.deepEqual(functions[0].instructions[1].location, { file: '/work/split.cu', line: 2 });
    const facts = await analyzeSnippet(SPLIT, { uri: 'file:///work/split.cu' });
    const report = buildDocumentReport({
      facts,
      archs: ['sm_80'],
      figuresFor: new FiguresRegistry().figuresFor,
      sass: { text: listing, filePath: '/work/split.cu' },
    });
    const [select, branch] = report.branches;
    assert.deepEqual(select.predicated, { source: 'sass', cost: 3 });
    assert.equal(branch.predicated, undefined);
    assert.match(branchHoverMarkdown([select]), /every warp issues its 3 SASS instructions/);
  });
});
