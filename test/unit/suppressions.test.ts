/** Findings switched off in the source: `cuda-occupancy-disable-next-line`, `-line` and `-file`, in the report, the CLI and SARIF. */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { analyzeSnippet } from '../support/analyze-snippet';
import { buildDocumentReport } from '../../server/src/core/report/document-report';
import { FiguresRegistry } from '../../server/src/core/compiler/figures-registry';
import { findSuppressions } from '../../server/src/core/report/suppressions';
import { makeSourceText } from '../../server/src/core/text/source-text';
import { runCli, sourceTree } from '../support/cli-run';

// Two launches above the kernel's bounds (errors) and a costly divergent branch (a warning).
const KERNEL = `__global__ void __launch_bounds__(128) split(float* p) {
  if (threadIdx.x % 2 == 0) {
    for (int i = 0; i < 64; ++i) p[threadIdx.x] = p[threadIdx.x] * 1.5f + 2.f;
  } else {
    for (int i = 0; i < 64; ++i) p[threadIdx.x] = p[threadIdx.x] * 0.5f - 1.f;
  }
}
`;

async function codesOf(text: string): Promise<Array<[string, number]>> {
  const facts = await analyzeSnippet(text);
  const report = buildDocumentReport({ facts, archs: ['sm_80'], figuresFor: new FiguresRegistry().figuresFor });
  // In line order, whatever order the passes found them in.
  return report.findings.map((f): [string, number] => [f.code, f.span.start.line + 1]).sort((a, b) => a[1] - b[1]);
}

describe('suppression comments', () => {
  const launches = (first: string, second: string) =>
    `${KERNEL}void run(float* p) {\n${first}\n  split<<<1, 256>>>(p);\n  split<<<1, 512>>>(p);${second}\n}\n`;

  it('reports every finding without a directive', async () => {
    assert.deepEqual(await codesOf(launches('', '')), [
      ['divergent-branch', 2],
      ['launch-exceeds-bounds', 10],
      ['launch-exceeds-bounds', 11],
    ]);
  });

  it('disable-next-line switches off the named rule on the next line only', async () => {
    const text = `${KERNEL}void run(float* p) {\n  // cuda-occupancy-disable-next-line launch-exceeds-bounds -- sized for the fallback path\n  split<<<1, 256>>>(p);\n  split<<<1, 512>>>(p);\n}\n`;
    assert.deepEqual(await codesOf(text), [
      ['divergent-branch', 2],
      ['launch-exceeds-bounds', 11],
    ]);
  });

  it('disable-line takes a trailing comment; a directive naming another rule leaves the finding', async () => {
    const text = `${KERNEL}void run(float* p) {\n  split<<<1, 256>>>(p); /* cuda-occupancy-disable-line launch-exceeds-bounds */\n  split<<<1, 512>>>(p); // cuda-occupancy-disable-line small-grid\n}\n`;
    assert.deepEqual(await codesOf(text), [
      ['divergent-branch', 2],
      ['launch-exceeds-bounds', 10],
    ]);
  });

  it('disable-file with no rule switches off everything; with rules, only those', async () => {
    assert.deepEqual(await codesOf(`// cuda-occupancy-disable-file\n${launches('', '')}`), []);
    assert.deepEqual(
      await codesOf(`// cuda-occupancy-disable-file divergent-branch, small-grid\n${launches('', '')}`),
      [
        ['launch-exceeds-bounds', 11],
        ['launch-exceeds-bounds', 12],
      ],
    );
  });

  it('is read only in comments, with its rules up to the reason', () => {
    const source = makeSourceText(
      'const char* s = "cuda-occupancy-disable-file";\nint x; // cuda-occupancy-disable-line a-rule,b-rule -- why\n',
    );
    assert.deepEqual(findSuppressions(source), [{ scope: 'line', line: 1, codes: ['a-rule', 'b-rule'] }]);
  });

  it('is honoured by check: the text, the exit status and SARIF', async () => {
    const dir = sourceTree({
      'k.cu': launches(
        '  // cuda-occupancy-disable-next-line launch-exceeds-bounds',
        ' // cuda-occupancy-disable-line launch-exceeds-bounds',
      ),
    });
    try {
      const text = await runCli(['check', '--no-nvcc', '--arch', 'sm_80', 'k.cu'], dir);
      assert.equal(text.code, 0, text.out);
      assert.doesNotMatch(text.out, /launch-exceeds-bounds/);
      const sarif = JSON.parse(
        (await runCli(['check', '--no-nvcc', '--arch', 'sm_80', '--format', 'sarif', 'k.cu'], dir)).out,
      );
      assert.deepEqual(
        sarif.runs[0].results.map((r: { ruleId: string }) => r.ruleId),
        ['divergent-branch'],
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
