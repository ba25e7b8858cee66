/**
 * A snapshot carries the document's text without its masked copy (answer-snapshots.ts `withoutMask`):
 * the code actions answered from it, once the document has moved on, are those of the full report,
 * carried through the edit; the masked copy is worked out when a quick fix first reads it.
 */
import * as assert from 'node:assert/strict';
import { serialize, deserialize } from 'node:v8';
import { toDiagnostic } from '../../server/src/lsp/lsp-convert';
import { codeActions } from '../../server/src/lsp/code-actions';
import {
  AnswerSnapshots,
  recordingContext,
  withoutMask,
  type AnswerSnapshot,
} from '../../server/src/lsp/answer-snapshots';
import { fixesOf, quickFixAnalyzer } from '../support/quick-fix-harness';

const URI = 'file:///ws/snippet.cu';
const TEXT = `__global__ void big(float* p) { extern __shared__ float s[]; s[threadIdx.x] = p[threadIdx.x]; }
// a "string" and a comment: { braces } the mask blanks
void run(float* p) {
  big<<<1, 256, 65536>>>(p);
}
`;

describe('answer snapshots', () => {
  it('answers code actions from a snapshot without the masked text as from the full report', async () => {
    const analyzer = await quickFixAnalyzer();
    const { report } = await fixesOf(TEXT, { analyzer, uri: URI });
    const diagnostics = report.findings.map((f) => toDiagnostic(f, URI));
    assert.ok(diagnostics.length > 0, 'the launch has no finding to fix');
    const whole = { start: { line: 0, character: 0 }, end: { line: 4, character: 1 } };
    // What the quick fixes read of the workspace, recorded as the server records it for a snapshot.
    const { context, recorded } = recordingContext(analyzer.quickFixContext(URI));
    const expected = codeActions(report, whole, diagnostics, context);
    assert.ok(expected.length > 0, 'no code action on the launch');

    const snapshot: AnswerSnapshot = {
      uri: URI,
      version: 1,
      report: { ...report, facts: { ...report.facts, source: withoutMask(report.facts.source) } },
      lenses: null,
      fixContext: recorded,
      disabledSupport: false,
    };
    // As the connection's thread receives it: a structured clone.
    const received = deserialize(serialize(snapshot)) as AnswerSnapshot;
    assert.equal('masked' in received.report.facts.source, false);

    const answers = new AnswerSnapshots();
    answers.opened(URI, 1);
    answers.completed(received);
    // An edit after everything the actions touch: the snapshot answers, nothing moves.
    answers.changed(URI, 2, [
      { range: { start: { line: 5, character: 0 }, end: { line: 5, character: 0 } }, text: '\n' },
    ]);
    assert.ok(answers.answersFor(URI));
    const actions = answers.codeActions({
      textDocument: { uri: URI },
      range: whole,
      context: { diagnostics },
    });
    assert.deepEqual(
      actions.map((a) => ({ title: a.title, edit: a.edit })),
      expected.map((a) => ({ title: a.title, edit: a.edit })),
    );
    assert.equal(received.report.facts.source.masked, report.facts.source.masked);
  });
});
