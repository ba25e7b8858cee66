/**
 * The labelled divergence fixtures: each `.cu` under test/fixtures/divergence
 * marks a branch line with `// expect: divergent|warp-uniform|tail|none`.
 * Loads a fixture, runs the core on it and pairs branches with labels.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { analyzeSnippet } from './analyze-snippet';
import type { Branch } from '../../server/src/core/body/divergence';

export const DIVERGENCE_FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'divergence');

export type Label = 'divergent' | 'warp-uniform' | 'tail' | 'none';

export interface LabelledLine {
  /** 0-based line. */
  line: number;
  expected: Label;
  text: string;
}

export interface FixtureRun {
  file: string;
  labels: LabelledLine[];
  branches: Branch[];
}

export function readLabels(text: string): LabelledLine[] {
  const labels: LabelledLine[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const m = /\/\/\s*expect:\s*(divergent|warp-uniform|tail|none)\b/.exec(line);
    if (m) labels.push({ line: i, expected: m[1] as Label, text: line.slice(0, m.index).trim() });
  });
  return labels;
}

/** The branches of a `.cu` text, read as the server reads a document: in its unit, through the uniformity analysis. */
export async function analyzeSource(text: string): Promise<Branch[]> {
  return (await analyzeSnippet(text)).branches;
}

export async function runFixture(file: string): Promise<FixtureRun> {
  const text = fs.readFileSync(path.join(DIVERGENCE_FIXTURES, file), 'utf8');
  return { file, labels: readLabels(text), branches: await analyzeSource(text) };
}

/** The verdict on a line: the branch that starts there (the statement, not a short-circuit inside it), or `none`. */
export function verdictOnLine(branches: readonly Branch[], line: number): Label {
  const here = branches.filter((b) => b.span.start.line === line);
  const main = here.find((b) => b.construct !== 'short-circuit') ?? here[0];
  return main ? main.kind : 'none';
}
