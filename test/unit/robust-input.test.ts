/**
 * Robustness of the core on hostile input (issue 9): half-typed code,
 * unbalanced `<<<`, macros everywhere, a 10 MB file, 50,000-character lines,
 * 10,000-deep nesting, binary bytes, invalid UTF-8, CRLF and CR line ends,
 * tabs, Unicode identifiers and a workspace with non-ASCII paths. Each case is
 * parsed, analysed and reported the way the server does it; the time limit is
 * a safety net against hangs, not a performance test.
 */
import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { analyzeParsed } from '../support/analyze-snippet';
import { type AnalyzeInput, type DocumentFacts } from '../../server/src/core/incremental/document-analysis';
import type { CudaParser } from '../../server/src/core/syntax/cuda-parser';
import { FiguresRegistry } from '../../server/src/core/compiler/figures-registry';
import { buildDocumentReport } from '../../server/src/core/report/document-report';
import { hoverAt } from '../../server/src/lsp/hover';
import { codeLenses } from '../../server/src/lsp/code-lens';
import { codeActions } from '../../server/src/lsp/code-actions';
import { toDiagnostic } from '../../server/src/lsp/lsp-convert';
import { indexWorkspace, toIndexPath } from '../../server/src/files/workspace-files';
import { getCudaParser } from '../support/grammar';
import { fixtureSources, halfTyped, hostileDocuments, mixedLineEnds, tenMegabyteSource } from '../support/fuzz-sources';

const SAFETY_NET_MS = 20_000;

/** Parse, analyse, report, and ask for every feature, as the server would; returns the facts. */
function analyzeLikeTheServer(parser: CudaParser, text: string, extra: Partial<AnalyzeInput> = {}): DocumentFacts {
  const uri = extra.uri ?? 'file:///robust/doc.cu';
  const started = Date.now();
  {
    const facts = analyzeParsed(parser, text, { ...extra, uri });
    const report = buildDocumentReport({
      facts,
      archs: ['sm_80', 'sm_90'],
      figuresFor: new FiguresRegistry().figuresFor,
    });
    codeLenses(report);
    const diagnostics = report.findings.map((f) => toDiagnostic(f, uri));
    for (const p of [
      { line: 0, character: 0 },
      ...facts.launches.slice(0, 20).map((l) => l.nameSpan.start),
      ...facts.kernels.slice(0, 20).map((k) => k.nameSpan.start),
    ]) {
      hoverAt(report, p);
      codeActions(report, { start: p, end: p }, diagnostics);
    }
    const elapsed = Date.now() - started;
    assert.ok(elapsed < SAFETY_NET_MS, `took ${elapsed} ms`);
    return facts;
  }
}

/** Kernels and launches with what a reader sees: names, lines, columns, resolved blocks. */
function outline(facts: DocumentFacts) {
  return {
    kernels: facts.kernels.map(
      (k) =>
        `${k.qualifiedName}@${k.nameSpan.start.line}:${k.nameSpan.start.character} bounds=${k.launchBounds?.maxThreadsPerBlock ?? '-'}`,
    ),
    launches: facts.launches.map(
      (l) =>
        `${l.kernelName}@${l.nameSpan.start.line}:${l.nameSpan.start.character} block=${JSON.stringify(l.block.value)} grid=${JSON.stringify(l.grid.value)}`,
    ),
    findings: facts.findings.map((f) => `${f.code}@${f.span.start.line}:${f.span.start.character}`),
  };
}

describe('robust input: the core', function () {
  this.timeout(120_000);
  let parser: CudaParser;
  before(async () => {
    parser = await getCudaParser();
  });

  for (const doc of hostileDocuments()) {
    it(`analyses ${doc.name}`, () => {
      analyzeLikeTheServer(parser, doc.text);
    });
  }

  it('analyses every prefix of a fixture as it is typed', () => {
    const prefixes = halfTyped();
    assert.ok(prefixes.length > 40);
    for (const doc of prefixes) analyzeLikeTheServer(parser, doc.text);
  });

  it('analyses a 10 MB file and still finds its kernels and launches', () => {
    const text = tenMegabyteSource();
    assert.ok(text.length >= 10 * 1024 * 1024);
    const facts = analyzeLikeTheServer(parser, text);
    assert.ok(
      facts.kernels.some((k) => k.name === 'saxpy'),
      JSON.stringify(outline(facts).kernels),
    );
    assert.ok(facts.launches.length >= 2);
  });

  it('degrades a pass that nesting defeats, and keeps the rest of the facts', () => {
    const deep = hostileDocuments().find((d) => d.name === '10,000 nested ifs on threadIdx')!;
    const facts = analyzeLikeTheServer(parser, deep.text);
    assert.deepEqual(outline(facts).kernels, ['k@0:16 bounds=-']);
    assert.equal(facts.launches[0]?.block.value?.x, 256);
    assert.equal(facts.memoryParallelism.length, 1);
  });

  it('sees the same kernels, launches and findings at the same positions with LF, CRLF, CR and mixed line ends', () => {
    for (const { name, text } of fixtureSources().filter((f) => f.name.endsWith('.cu'))) {
      const lf = outline(analyzeLikeTheServer(parser, text));
      for (const [ending, converted] of [
        ['CRLF', text.replace(/\n/g, '\r\n')],
        ['CR', text.replace(/\n/g, '\r')],
        ['mixed', mixedLineEnds(text)],
      ]) {
        assert.deepEqual(outline(analyzeLikeTheServer(parser, converted)), lf, `${name} with ${ending} line ends`);
      }
    }
  });

  it('ends a branch at its line end, not after the CR, when a // comment on a CRLF line is its last token', () => {
    // Half-typed: the loop has no body yet, so the comment after its header is the last token of the loop.
    const lines = [
      '__global__ void k(float* x, int n) {',
      '  for (int i = threadIdx.x; i < n; i += blockDim.x) // expect: tail',
      '}',
      '',
    ];
    const facts = analyzeLikeTheServer(parser, lines.join('\r\n'));
    const loop = facts.branches.find((b) => b.construct === 'loop');
    assert.ok(loop, 'the loop is a branch');
    assert.deepEqual(loop.span.end, { line: 1, character: lines[1].length });
  });

  it('sees the same launches and block sizes when spaces are tabs', () => {
    for (const { name, text } of fixtureSources().filter((f) => f.name.endsWith('.cu'))) {
      const launches = (facts: DocumentFacts) =>
        facts.launches.map(
          (l) => `${l.kernelName} ${JSON.stringify(l.block.value)} ${JSON.stringify(l.dynamicSmem.value)}`,
        );
      const tabbed = text.replace(/^( {2})+/gm, (s) => '\t'.repeat(s.length / 2));
      assert.deepEqual(
        launches(analyzeLikeTheServer(parser, tabbed)),
        launches(analyzeLikeTheServer(parser, text)),
        name,
      );
    }
  });

  it('keeps columns in UTF-16 code units next to Unicode identifiers, and never resolves a wrong number', () => {
    const doc = hostileDocuments().find((d) => d.name === 'Unicode identifiers')!;
    const lines = doc.text.split('\n');
    const facts = analyzeLikeTheServer(parser, doc.text);
    const ascii = facts.kernels.find((k) => k.name === 'ascii_k');
    assert.ok(ascii, JSON.stringify(outline(facts)));
    assert.deepEqual(ascii.nameSpan.start, { line: 3, character: lines[3].indexOf('ascii_k') });
    const launch = facts.launches.find((l) => l.kernelName === 'ascii_k');
    assert.ok(launch, JSON.stringify(outline(facts)));
    assert.deepEqual(launch.nameSpan.start, { line: 6, character: lines[6].indexOf('ascii_k') });
    assert.deepEqual(launch.block.value, { x: 64, y: 1, z: 1 });
    assert.deepEqual(
      facts.findings.map((f) => `${f.code}@${f.span.start.line}`),
      ['launch-exceeds-bounds@6'],
    );
    // The Unicode-named kernel: found with its block of 128, or not found; never another number.
    for (const l of facts.launches.filter((l) => l.kernelName !== 'ascii_k'))
      assert.ok(l.block.value === null || l.block.value.x === 128, JSON.stringify(l.block));
  });

  it('resolves a launch through a header in a workspace with non-ASCII folder and file names', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'cuda-occ-ユニコード-'));
    try {
      const folder = path.join(root, 'проект Ünïcødé', '源代码');
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, '配置.h'), '#pragma once\nconstexpr int kThreads = 192;\n');
      const file = path.join(folder, 'カーネル.cu');
      const text =
        '#include "配置.h"\n__global__ void __launch_bounds__(128) scale(float* p) {}\nvoid run(float* p) { scale<<<4, kThreads>>>(p); }\n';
      writeFileSync(file, text);
      const { index } = indexWorkspace([root]);
      const key = toIndexPath(file);
      const facts = analyzeLikeTheServer(parser, text, { uri: pathToFileURL(file).href, workspace: index, path: key });
      assert.deepEqual(
        facts.launches.map((l) => l.block.value),
        [{ x: 192, y: 1, z: 1 }],
      );
      assert.deepEqual(
        facts.findings.map((f) => f.code),
        ['launch-exceeds-bounds'],
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
