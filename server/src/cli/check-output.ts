/**
 * `check`'s output written as each file's report is done, in the files' order, to the byte what the
 * whole output built at the end would be: at 100,000 files that output (the JSON is about 9 KB a
 * file) and the reports behind it no longer fit in memory, and a CI log shows results from the start.
 *
 * - JSON and SARIF: the envelope, then each file's piece as it comes, then the close.
 * - Text: check-text.ts's textWriter.
 */
import { checkJsonOf } from './check-json';
import type { CheckJsonFile } from './check-json-types';
import { sarifLog, sarifResults, type SarifOptions } from './sarif';
import { knownRules } from './rule-catalog';
import type { CheckWriter } from './check-text';

/** `value` as JSON.stringify(value, null, 2) writes it inside an array `depth` levels deep. */
function nested(value: unknown, depth: number): string {
  const indent = ' '.repeat(2 * depth);
  // JSON escapes every line break inside a string: each `\n` of the text is one of the layout's.
  return indent + JSON.stringify(value, null, 2).replace(/\n/g, `\n${indent}`);
}

/**
 * `envelope` (JSON.stringify(..., null, 2) of the whole with an empty array `key` at `depth - 1`) with
 * each piece's items in that array: the text before it at the first item, each item as it comes,
 * the text after it at the end.
 */
function arrayWriter<T>(
  out: (text: string) => void,
  envelope: string,
  key: string,
  depth: number,
  item: (piece: T) => unknown[],
): CheckWriter<T> {
  const marker = `"${key}": []`;
  const at = envelope.lastIndexOf(marker);
  if (at < 0) throw new Error(`no empty ${key} in the envelope`);
  const before = envelope.slice(0, at + marker.length - 1);
  const after = envelope.slice(at + marker.length - 1);
  let count = 0;
  return {
    file(piece) {
      for (const value of item(piece)) {
        out(`${count === 0 ? `${before}\n` : ',\n'}${nested(value, depth)}`);
        count++;
      }
    },
    end() {
      out(count === 0 ? `${before}${after}\n` : `\n${' '.repeat(2 * (depth - 1))}${after}\n`);
    },
  };
}

/** `check --format json`: each file's entry (checkJsonFile) in `files`. */
export function jsonWriter(out: (text: string) => void, archs: string[]): CheckWriter<object> {
  return arrayWriter(out, JSON.stringify(checkJsonOf(archs, []), null, 2), 'files', 2, (entry) => [entry]);
}

/**
 * `check --format sarif`: each file's results in `results`. The rules come before the results, so
 * they are the catalog's: a code outside it (the analysis emits none: sarif.test.ts) is written
 * without a ruleIndex.
 */
export function sarifWriter(
  out: (text: string) => void,
  archs: string[],
  options: SarifOptions,
): CheckWriter<CheckJsonFile> {
  const rules = knownRules();
  const ruleIndex = new Map(rules.map((rule, index) => [rule.id, index]));
  const envelope = JSON.stringify(sarifLog(rules, [], archs, options), null, 2);
  return arrayWriter(out, envelope, 'results', 4, (file) =>
    sarifResults(file, options.baseDir, (diagnostic) => ruleIndex.get(diagnostic.code)),
  );
}
