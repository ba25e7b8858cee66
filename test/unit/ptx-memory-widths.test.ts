/**
 * Uncoalesced global accesses cross-checked against the PTX: the instructions on the access's line
 * and the bytes each lane moves in them, said in the finding and its hover.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { analyzeSnippet } from '../support/analyze-snippet';
import { buildDocumentReport } from '../../server/src/core/report/document-report';
import { FiguresRegistry } from '../../server/src/core/compiler/figures-registry';
import { hoverAt } from '../../server/src/lsp/hover';
import { ptxAccessBytes } from '../../server/src/core/compiler/ptx-memory-widths';

const DIR = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'memory');
const CU = path.join(DIR, 'ptx-widths.cu');
const TEXT = fs.readFileSync(CU, 'utf8');
const PTX = fs.readFileSync(path.join(DIR, 'ptx-widths.ptx'), 'utf8');

const reportOf = async (ptx: string | null) =>
  buildDocumentReport({
    facts: await analyzeSnippet(TEXT, { uri: 'file:///w/ptx-widths.cu' }),
    archs: ['sm_80'],
    figuresFor: new FiguresRegistry().figuresFor,
    ptx: ptx ? { text: ptx, filePath: CU } : null,
  });

const uncoalesced = (report: Awaited<ReturnType<typeof reportOf>>) =>
  report.findings
    .filter((f) => f.code === 'uncoalesced-access')
    .map((f) => `${f.span.start.line + 1}: ${f.message.replace(/^.*?(The PTX|The compiler)/, '$1')}`);

describe('uncoalesced accesses against the PTX', () => {
  it('says the compiled width of each strided access, as PTX issues it', async () => {
    const report = await reportOf(PTX);
    assert.deepEqual(uncoalesced(report), [
      '4: The PTX agrees: `ld.global.v4.f32`, 16 bytes a lane.',
      '5: The PTX agrees: `st.global.f32`, 4 bytes a lane.',
      '10: The PTX agrees: `st.global.f32`, 4 bytes a lane.',
      // `in[i]` and `in[i + 1]`, each its own finding.
      '10: The PTX agrees: `ld.global.f32`, 4 bytes a lane.',
      '10: The PTX agrees: `ld.global.f32`, 4 bytes a lane.',
    ]);
    const line = TEXT.split('\n')[3];
    const hover = hoverAt(report, { line: 3, character: line.indexOf('in[') + 1 });
    assert.match(hover?.contents ? JSON.stringify(hover.contents) : '', /ld\.global\.v4\.f32/);
  });

  it('says the compiler merged what the source moves apart, and nothing without PTX', async () => {
    // The same line compiled to one 8-byte load: what `in[i]` and `in[i + 1]` become when vectorised.
    const merged = PTX.replace(
      /ld\.global\.f32 \t%f1, \[%rd6\];\n\tld\.global\.f32 \t%f2, \[%rd6\+4\];/,
      'ld.global.v2.f32 \t{%f1, %f2}, [%rd6];',
    );
    assert.notEqual(merged, PTX);
    const report = await reportOf(merged);
    assert.ok(
      uncoalesced(report).includes(
        "10: The compiler already merged this lane's neighbouring accesses: `ld.global.v2.f32`, 8 bytes a lane where the source moves 4.",
      ),
      uncoalesced(report).join('\n'),
    );
    const none = await reportOf(null);
    assert.ok(none.findings.every((f) => !/PTX|compiler/.test(f.message)));
  });

  it('reads the bytes a lane moves from the opcode', () => {
    assert.deepEqual(
      [
        'ld.global.v4.f32',
        'st.global.v2.u64',
        'ld.global.nc.u8',
        'ld.global.b128',
        'ld.global.v8.bf16x2',
        'ld.global',
      ].map(ptxAccessBytes),
      [16, 16, 1, 16, 32, null],
    );
  });
});
