/**
 * Which lines of a file are preprocessor directives: a `#` with only blanks
 * before it on its line, through the lines a trailing `\` continues it onto.
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeSourceText, type SourceText } from '../../server/src/core/text/source-text';
import { findDirectiveRanges } from '../../server/src/core/text/preprocessor-lines';
import { anySource, checkProperty, fuzzRuns, mixedLineEnds } from '../support/fuzz-sources';

/** Each directive's text, as written. */
function directives(text: string): string[] {
  const source = makeSourceText(text);
  return findDirectiveRanges(source).map(([start, end]) => text.slice(start, end));
}

/** The definition, line by line: what a scan from every line start finds. */
function directiveRangesLineByLine({ masked, lineStarts }: SourceText): Array<[number, number]> {
  const lineEnd = (line: number) => (line + 1 < lineStarts.length ? lineStarts[line + 1] : masked.length);
  const ranges: Array<[number, number]> = [];
  for (let line = 0; line < lineStarts.length; line++) {
    if (!/^[ \t]*#/.test(masked.slice(lineStarts[line], lineEnd(line)))) continue;
    let last = line;
    while (
      last + 1 < lineStarts.length &&
      /\\\s*$/.test(masked.slice(lineStarts[last], lineEnd(last)).replace(/\r?\n$/, ''))
    )
      last++;
    ranges.push([lineStarts[line], lineEnd(last)]);
    line = last;
  }
  return ranges;
}

describe('preprocessor lines', () => {
  it('finds directives at a line start, indented or not, with their continuation lines', () => {
    const text = [
      '#include "a.cuh"',
      'int x = 1; # not a directive',
      '  #  define TWICE(v) \\',
      '    ((v) * 2) # still the define',
      '\t#pragma unroll',
      'float y = 2; // # in a comment',
      'const char* s = "#in a string";',
      '#endif',
    ].join('\n');
    assert.deepEqual(directives(text), [
      '#include "a.cuh"\n',
      '  #  define TWICE(v) \\\n    ((v) * 2) # still the define\n',
      '\t#pragma unroll\n',
      '#endif',
    ]);
  });

  it('reads a line a backslash continues as the same directive, even when it starts with #', () => {
    assert.deepEqual(directives('#define A \\\n#define B 2\nint a;\n'), ['#define A \\\n#define B 2\n']);
  });

  it('ends lines at \\r\\n and at a lone \\r', () => {
    assert.deepEqual(directives('#define A 1\r\nint a;\r#define B 2\rint b;'), ['#define A 1\r\n', '#define B 2\r']);
    assert.deepEqual(directives('#define C \\\r\n  3\r\nint c;'), ['#define C \\\r\n  3\r\n']);
  });

  it('finds in a piece of a document what it finds there in the whole document', () => {
    const text = 'int a;\n#define N 4\nint b;\n';
    const piece: SourceText = {
      text: text.slice(7),
      masked: makeSourceText(text).masked.slice(7),
      lineStarts: [0, 12, 19],
      firstLine: 1,
    };
    assert.deepEqual(findDirectiveRanges(piece), [[0, 12]]);
  });

  it('finds what a scan of every line finds, in any text', async () => {
    await checkProperty(
      'directive ranges: from each # = line by line',
      [fc.oneof(anySource, anySource.map(mixedLineEnds))],
      (text) => {
        const source = makeSourceText(text);
        assert.deepEqual(findDirectiveRanges(source), directiveRangesLineByLine(source));
      },
      fuzzRuns(500),
    );
  });
});
