/**
 * Making a SourceText again from the previous version's: whatever the
 * previous text and whatever the edits, the text, masked text, line starts and
 * first line equal those of a fresh `makeSourceText`, at every step of a
 * sequence of edits, and a previous version can serve more than once.
 *
 * The seed is printed; FUZZ_SEED replays it, FUZZ_RUNS runs more cases
 * (`npm run fuzz`).
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeSourceText, type SourceText } from '../../server/src/core/text/source-text';
import { anySource, checkProperty, fuzzRuns, snippet } from '../support/fuzz-sources';

// ---------------------------------------------------------------------------
// Comparing with a fresh SourceText

/** The first offset where two strings differ, or -1. */
function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i === n && a.length === b.length ? -1 : i;
}

const around = (s: string, at: number) => JSON.stringify(s.slice(Math.max(0, at - 40), at + 40));

/** Fail, saying where, unless `actual` has the text, masked text, line starts and first line of `expected`. */
function assertSameSource(actual: SourceText, expected: SourceText, label: string): void {
  for (const field of ['text', 'masked'] as const) {
    const a = actual[field];
    const b = expected[field];
    if (typeof a !== 'string') assert.fail(`${label}: ${field} is a ${typeof a}, not a string`);
    const at = firstDifference(a, b);
    if (at >= 0) {
      assert.fail(
        `${label}: ${field} differs from a fresh one at offset ${at} (lengths ${a.length} and ${b.length}): ${around(a, at)} instead of ${around(b, at)}`,
      );
    }
  }
  const a = Array.from(actual.lineStarts);
  const b = Array.from(expected.lineStarts);
  const k = a.findIndex((start, j) => start !== b[j]);
  if (a.length !== b.length || k >= 0) {
    const j = k >= 0 ? k : Math.min(a.length, b.length);
    assert.fail(
      `${label}: lineStarts differ from fresh ones at line ${j} (${a.length} and ${b.length} lines): ${JSON.stringify(a.slice(Math.max(0, j - 2), j + 3))} instead of ${JSON.stringify(b.slice(Math.max(0, j - 2), j + 3))}`,
    );
  }
  assert.equal(actual.firstLine, expected.firstLine, `${label}: firstLine differs from a fresh one`);
}

/**
 * Make each version from the previous version's SourceText (the first one
 * fresh) and check each against a fresh one; also that making the next
 * version left the previous one as it was. Returns the last SourceText.
 */
function replay(versions: readonly string[], first: SourceText = makeSourceText(versions[0])): SourceText {
  let previous = first;
  for (let k = 1; k < versions.length; k++) {
    const next = makeSourceText(versions[k], previous);
    assertSameSource(
      next,
      makeSourceText(versions[k]),
      `version ${k} of ${versions.length - 1}, made from version ${k - 1}`,
    );
    assertSameSource(previous, makeSourceText(versions[k - 1]), `version ${k - 1} after version ${k} was made from it`);
    previous = next;
  }
  return previous;
}

// ---------------------------------------------------------------------------
// CUDA-ish text with every construct the masking reads

const CODE = [
  'int a = b;',
  'if (x) {',
  '}',
  '{',
  '};',
  'f(a, b);',
  '__global__ void k(float* p) {',
  'p[threadIdx.x] = 0;',
  'return;',
  'for (int i = 0; i < n; ++i) {',
  'x = y / z;',
  'a /= 2;',
  'q = *p / *r;',
  'k<<<1, 256>>>(p);',
  '(',
  ')',
  ';',
  'template <int N>',
  'R',
  'R(x)',
  'LR',
  'u8R',
  'x = R;',
  'foo',
  'y = x/2;',
  '\\',
  '#',
  'c = a<b>(d);',
  'struct S { int v; };',
];

const COMMENTS = [
  '// line comment',
  '// a { brace',
  '// ends in a backslash \\',
  '//\\',
  '// "quote',
  "// 'c",
  '// R"(raw',
  '/* block */',
  '/* { */',
  '/**/',
  '/*/ still a comment */',
  '/* spans\n   lines { \n */',
  '/* unterminated',
  '/* nested /* not */',
  '*/',
  '/',
  '//* odd */',
  '/* a */ /* b */',
  '/* "in" */',
  '/* ends with stars **/',
  '/* */ // both',
  '// continued \\\n   on the next line {',
  '/*\n*/',
];

const LITERALS = [
  '"str"',
  '"a \\" b"',
  '"a\\\\"',
  '"\\\\"',
  '"// not a comment"',
  '"/* not a comment"',
  '"unterminated',
  '"with \' quote"',
  "'a'",
  "'\\''",
  "'\"'",
  "'\\\\'",
  "'/'",
  "'{'",
  "L'x'",
  'u8"x"',
  '"line \\\ncontinued"',
  "'",
  '"',
  '""',
  "''",
  '"x" "y"',
  "'unterminated char",
  '"{ } ;"',
];

const NUMBERS = [
  "1'000'000",
  "0x1'F",
  "0xAB'CD",
  "0b1'0'1",
  "1'0.5",
  "3'1.4'1f",
  "a1'2'",
  "x'1'",
  "1'",
  "'1",
  "0'0",
  "F'1'",
  "0x'1'",
  "9'a'",
];

const RAW = [
  'R"(raw)"',
  'R"(a "quoted" // not a comment)"',
  'R"xy(has )" inside)xy"',
  'R"(spans\nlines { \n)"',
  'R"xy(spans\n)" not the end\n)xy"',
  'R"(unterminated',
  'R"xy(unterminated )x"',
  'R"no paren"',
  'R"12345678901234567(too long)12345678901234567"',
  'R" (space)"',
  'fooR"x"',
  'fooR"(x)"',
  'u8R"(x)"',
  'LR"(x)"',
  '_R"(y)"',
  'R"(',
  ')"',
  ')xy"',
  'R"\\(x)\\"',
  'R"(/* not a comment */)"',
  'R"()"',
];

const DIRECTIVES = [
  '#if A',
  '#ifdef B',
  '#ifndef C',
  '#if 0',
  '#elif D',
  '#else',
  '#endif',
  '  #  else',
  '# elif E',
  '#elifdef F',
  '#elifndef G',
  '#define M(x) { x }',
  '#define N \\',
  '#include "a.cuh"',
  '#pragma unroll',
  '#else // comment',
  '#endif /* c */',
  '/* c */ #else',
  '#else {',
  '#if X // {',
  '#elseif',
  '#endifx',
];

/** Conditional groups whose branches do not balance their braces. */
const GROUPS = [
  '#if A\nif (x) {\n#else\nif (y) {\n#endif\n}',
  '#ifdef X\nvoid f() {\n#elif Y\nvoid g() {\n#else\nvoid h() {\n#endif\n}',
  '#if 1\n{\n#else\n}\n}\n#endif',
  '#if A\n#if B\n{\n#else\n{ {\n#endif\n#elif C\n}\n#endif',
  '#ifndef Z\nnamespace n {\n#else\nnamespace m { /* } */\n#endif',
];

const identifier = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}R?$/);

const piece: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...CODE) },
  { weight: 3, arbitrary: fc.constantFrom(...COMMENTS) },
  { weight: 3, arbitrary: fc.constantFrom(...LITERALS) },
  { weight: 2, arbitrary: fc.constantFrom(...NUMBERS) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW) },
  { weight: 1, arbitrary: identifier },
);

const indent = fc.constantFrom('', '', '  ', '    ', '\t');

const line: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(indent, fc.array(piece, { minLength: 1, maxLength: 5 }), fc.constantFrom(' ', '', '  '))
      .map(([i, pieces, sep]) => i + pieces.join(sep)),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom('', '', ' '), fc.constantFrom(...DIRECTIVES)).map(([i, d]) => i + d),
  },
  { weight: 1, arbitrary: fc.constantFrom(...GROUPS) },
  { weight: 1, arbitrary: fc.constant('') },
);

/** How the `\n`s of a generated text end up: all one kind, or kinds in turn. */
const lineEnds: fc.Arbitrary<readonly string[]> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(['\n']) },
  { weight: 1, arbitrary: fc.constant(['\r\n']) },
  { weight: 1, arbitrary: fc.constant(['\r']) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom('\n', '\r\n', '\r'), { minLength: 2, maxLength: 6 }) },
);

function withLineEnds(text: string, ends: readonly string[]): string {
  let k = 0;
  return ends.length === 1 && ends[0] === '\n' ? text : text.replace(/\n/g, () => ends[k++ % ends.length]);
}

/** Lines of CUDA-ish code, comments, literals, raw strings and directives, with any line ends. */
const cudaText: fc.Arbitrary<string> = fc
  .tuple(fc.array(line, { maxLength: 40 }), lineEnds, fc.boolean())
  .map(([lines, ends, finalNewline]) =>
    withLineEnds(lines.join('\n') + (finalNewline && lines.length ? '\n' : ''), ends),
  );

/** The characters the masking turns on, in any order: finds the corners the lines above miss. */
const characterSoup: fc.Arbitrary<string> = fc.string({
  unit: fc.constantFrom(
    '/',
    '*',
    '"',
    "'",
    '\\',
    '\n',
    '\r',
    '\r\n',
    'R',
    '(',
    ')',
    'x',
    '1',
    '#',
    '#else\n',
    '#if\n',
    '#endif\n',
    '{',
    '}',
    ' ',
    'R"(',
    ')"',
  ),
  maxLength: 80,
});

const anyDocument: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: cudaText },
  { weight: 2, arbitrary: characterSoup },
  { weight: 2, arbitrary: anySource },
  { weight: 1, arbitrary: fc.constant('') },
);

// ---------------------------------------------------------------------------
// Edits

/** What an edit inserts: the openers and closers of comments and literals, line ends, directives, pieces of code. */
const INSERTS = [
  '/*',
  '*/',
  '"',
  "'",
  '//',
  '\n',
  '\n',
  '\n',
  'R"(',
  ')"',
  '#else\n',
  '#endif\n',
  '#if X\n',
  '#elif Y\n',
  '\r',
  '\r\n',
  '\\',
  '\\\n',
  '{',
  '}',
  ' ',
  'x',
  "'0",
  "1'",
  'R',
  'xy(',
  ')xy"',
  '/',
  '*',
  '(',
  ')',
  'foo',
  '\n#',
  '"\\"',
  "'\\''",
  '/**/',
  '\n#else\n{\n',
];

const insertion: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: fc.constantFrom(...INSERTS) },
  {
    weight: 3,
    arbitrary: fc.array(fc.constantFrom(...INSERTS), { minLength: 2, maxLength: 4 }).map((parts) => parts.join('')),
  },
  { weight: 2, arbitrary: piece },
  { weight: 1, arbitrary: fc.array(line, { minLength: 1, maxLength: 3 }).map((lines) => lines.join('\n') + '\n') },
  { weight: 1, arbitrary: snippet },
);

/**
 * One edit, valid whatever the text: at a fraction of the text (millionths),
 * next to the `at`-th character that may open or close something, or at the
 * text's start or end (`at` below or above one half).
 */
interface TextEdit {
  anchor: 'anywhere' | 'special' | 'edge';
  at: number;
  nudge: number;
  remove: number;
  insert: string;
}

const textEdit: fc.Arbitrary<TextEdit> = fc.record({
  anchor: fc.constantFrom(
    'anywhere' as const,
    'anywhere' as const,
    'special' as const,
    'special' as const,
    'edge' as const,
  ),
  at: fc.integer({ min: 0, max: 1_000_000 }),
  nudge: fc.integer({ min: -1, max: 1 }),
  remove: fc.oneof(
    { weight: 4, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 3 }) },
    { weight: 2, arbitrary: fc.integer({ min: 4, max: 40 }) },
    { weight: 1, arbitrary: fc.integer({ min: 41, max: 400 }) },
  ),
  insert: insertion,
});

const SPECIAL = /[/*"'R\\\r\n#{}()]/g;

function editStart(text: string, e: TextEdit): number {
  if (e.anchor === 'edge') return e.at < 500_000 ? 0 : text.length;
  let start = Math.floor((text.length * e.at) / 1_000_000);
  if (e.anchor === 'special') {
    const specials = [...text.matchAll(SPECIAL)].map((m) => m.index ?? 0);
    if (specials.length) start = specials[Math.floor((specials.length * e.at) / 1_000_001)] + e.nudge;
  }
  return Math.max(0, Math.min(text.length, start));
}

function applyTextEdit(text: string, e: TextEdit): string {
  const start = editStart(text, e);
  return text.slice(0, start) + e.insert + text.slice(Math.min(text.length, start + e.remove));
}

/** The versions of a document through a sequence of edits, the original first. */
function versionsOf(original: string, edits: readonly TextEdit[]): string[] {
  const versions = [original];
  for (const e of edits) versions.push(applyTextEdit(versions[versions.length - 1], e));
  return versions;
}

// ---------------------------------------------------------------------------
// Hand-written documents and edits

/** `text` with [start, end) replaced by `insert`. */
const splice = (text: string, start: number, end: number, insert: string) =>
  text.slice(0, start) + insert + text.slice(end);

/** The offset of the `nth` (from 0) occurrence of `needle`; throws when there is none, so the examples stay what they say. */
function offsetOf(text: string, needle: string, nth = 0): number {
  let at = text.indexOf(needle);
  for (let k = 0; k < nth && at >= 0; k++) at = text.indexOf(needle, at + 1);
  if (at < 0) throw new Error(`example text has no occurrence ${nth} of ${JSON.stringify(needle)}`);
  return at;
}

/** The offset where line `line` (from 0, `\n` ends only) starts. */
function lineOffset(text: string, line: number): number {
  return line === 0 ? 0 : offsetOf(text, '\n', line - 1) + 1;
}

/** Ten lines with every kind of comment and literal. */
const UNIT =
  [
    '// kernel: scales a vector {',
    '__global__ void k(float* p, int n) { /* body { */',
    '  int i = blockIdx.x * blockDim.x + threadIdx.x; // index',
    '  /* a block comment',
    '     spanning lines } */',
    '  if (i < n) p[i] = p[i] * 2.0f; // "quoted" text',
    "  const char* s = \"a // b /* c\"; char c = '\\'';",
    '  long big = 1\'000\'000; const char* r = R"x(raw // { )x";',
    '}',
    '',
  ].join('\n') + '\n';

/** About 2000 lines. */
const LONG = UNIT.repeat(200);

/** The long example without block comments (their closers would end one an edit opens). */
const LINE_COMMENTED = LONG.replaceAll('/*', '//').replaceAll('*/', '  ');

const isBlank = (s: string) => /^\s*$/.test(s);

describe('source text made from the previous version', () => {
  it('the long example has about 2000 lines and masks its comments', () => {
    const source = makeSourceText(LONG);
    assert.ok(source.lineStarts.length >= 2000, `${source.lineStarts.length} lines`);
    assert.ok(!source.masked.includes('//') && !source.masked.includes('/*') && !source.masked.includes('raw'));
  });

  it('an edit that opens a block comment swallowing the rest of the file, then one that closes it', () => {
    const text = LINE_COMMENTED;
    const open = lineOffset(text, 10);
    const opened = splice(text, open, open, '/*');
    assert.ok(isBlank(makeSourceText(opened).masked.slice(open)), 'the comment runs to the end');
    const close = lineOffset(opened, 1000);
    const closed = splice(opened, close, close, '*/');
    assert.ok(!isBlank(makeSourceText(closed).masked.slice(close + 2)), 'code follows the comment');
    // Open, close, reopen further down, remove the opener, remove the closer.
    const reopen = lineOffset(closed, 1500);
    const reopened = splice(closed, reopen, reopen, '/*');
    const unopened = splice(reopened, open, open + 2, '');
    const unclosed = splice(unopened, close - 2, close, '');
    assert.equal(unclosed, splice(text, lineOffset(text, 1500), lineOffset(text, 1500), '/*'));
    replay([text, opened, closed, reopened, unopened, unclosed, text]);
    // In the long example with its block comments, an opener swallows up to the next `*/`; then
    // the opener of a comment over two lines is deleted, and its second line becomes code.
    const swallowing = splice(LONG, lineOffset(LONG, 10), lineOffset(LONG, 10), '/*');
    const unopenedTwoLines = splice(LONG, lineOffset(LONG, 3) + 2, lineOffset(LONG, 3) + 4, '');
    assert.ok(makeSourceText(unopenedTwoLines).masked.includes('spanning lines }'));
    replay([LONG, swallowing, LONG, unopenedTwoLines, LONG]);
  });

  it('an edit that closes the block comment a file starts in', () => {
    const text = '/* unterminated\n' + LINE_COMMENTED;
    assert.ok(isBlank(makeSourceText(text).masked));
    const at = lineOffset(text, 6);
    const closed = splice(text, at, at, '*/');
    assert.ok(!isBlank(makeSourceText(closed).masked));
    // And the closer typed one character at a time, then deleted.
    const half = splice(text, at, at, '*');
    replay([text, half, closed, half, text]);
  });

  it('edits inside a raw string: quotes and comment openers, a changed delimiter, a new closer', () => {
    const raw = 'const char* s = R"xy(\nline { // not a comment\n)" still inside /*\n)xy";\nint after; // c\n';
    const text = (raw + UNIT).repeat(20);
    const inside = offsetOf(text, 'line {', 3);
    const quoted = splice(text, inside, inside, '"/*\'');
    const closer = offsetOf(quoted, ')xy"', 3);
    const renamed = splice(quoted, closer + 2, closer + 3, 'z'); // `)xz"`: the raw string runs on to the next `)xy"`
    assert.notEqual(makeSourceText(renamed).masked, makeSourceText(quoted).masked);
    const early = offsetOf(renamed, 'line {', 5);
    const closedEarly = splice(renamed, early, early, ')xy"'); // a closer inside the next raw string
    const unraw = splice(closedEarly, offsetOf(closedEarly, 'R"xy(', 0), offsetOf(closedEarly, 'R"xy(', 0) + 1, ''); // `"xy(`: a string, not a raw one
    replay([text, quoted, renamed, closedEarly, unraw, text]);
  });

  it('a single space inserted anywhere in a long file with many comments', () => {
    const base = makeSourceText(LONG);
    const places = [
      0,
      1,
      offsetOf(LONG, '/* a block', 100) + 3,
      offsetOf(LONG, 'spanning lines', 120) + 3,
      offsetOf(LONG, '"a // b', 150) + 2,
      offsetOf(LONG, 'R"x(', 199) + 1,
      Math.floor(LONG.length / 2),
      LONG.length - 1,
      LONG.length,
    ];
    for (const at of places) {
      const spaced = splice(LONG, at, at, ' ');
      // From the same previous version each time, then back.
      const made = makeSourceText(spaced, base);
      assertSameSource(made, makeSourceText(spaced), `a space at offset ${at}`);
      replay([spaced, LONG], made);
    }
    // One after another, from the end so that the places stay put.
    const versions = [LONG];
    for (const at of [...places].reverse()) versions.push(splice(versions[versions.length - 1], at, at, ' '));
    replay(versions);
  });

  it('a backslash continuing a line comment, deleted and typed again (LF, CRLF and CR)', () => {
    for (const end of ['\n', '\r\n', '\r']) {
      const text = withLineEnds(`${UNIT.repeat(30)}// note \\\nint hidden = 1; { \n${UNIT.repeat(30)}`, [end]);
      const slash = offsetOf(text, '\\' + end);
      assert.ok(isBlank(makeSourceText(text).masked.slice(slash, slash + 20)), 'the next line is part of the comment');
      const cut = splice(text, slash, slash + 1, '');
      assert.ok(makeSourceText(cut).masked.includes('int hidden'), 'the next line is code');
      const spaced = splice(text, slash + 1, slash + 1, ' '); // `\ ` then the line end: not a continuation
      replay([text, cut, text, spaced, text]);
    }
  });

  it('a line typed where a backslash continues a line comment over an empty line', () => {
    const text = `${UNIT.repeat(30)}// note \\\n\nint shown = 1;\n${UNIT.repeat(30)}`;
    const empty = offsetOf(text, '\\\n\n') + 2;
    const typed = splice(text, empty, empty, '#endif');
    assert.ok(
      isBlank(makeSourceText(typed).masked.slice(empty, empty + 6)),
      'the continued line is part of the comment',
    );
    assert.ok(makeSourceText(typed).masked.includes('int shown'), 'the line after it is code');
    replay([text, typed, text]);
  });

  it('an #endif typed at the end blanks the braces of an #else branch at the start', () => {
    const text = `#if A\nif (x) {\n#else\nif (y) {\n${LONG}`;
    const yBrace = offsetOf(text, 'if (y) {') + 7;
    assert.equal(makeSourceText(text).masked[yBrace], '{', 'no #endif: nothing blanked');
    const ended = text + '#endif\n';
    assert.equal(makeSourceText(ended).masked[yBrace], ' ', 'the #else branch opens a brace the #if branch also opens');
    const noElse = splice(ended, offsetOf(ended, '#else'), offsetOf(ended, '#else') + 5, '#elxe');
    const balanced = splice(ended, yBrace, yBrace + 1, '');
    replay([text, ended, noElse, ended, balanced, ended, text]);
  });

  it('line ends: a lone CR turned into CRLF and back, a CR typed before an LF', () => {
    const crlf = withLineEnds(LONG, ['\r\n']);
    const middle = offsetOf(crlf, '\r\n', 1000);
    const loneCr = splice(crlf, middle + 1, middle + 2, ''); // the `\n` deleted: a lone `\r`
    const doubled = splice(crlf, middle, middle, '\r'); // `\r\r\n`
    const mixed = withLineEnds(LONG, ['\n', '\r\n', '\r']);
    const at = offsetOf(mixed, '\r', 300);
    const joined = splice(mixed, at + 1, at + 1, '\n');
    replay([crlf, loneCr, crlf, doubled, loneCr, mixed, joined, mixed]);
  });

  it('digit separators and identifiers ending in R before a quote', () => {
    const text = `${UNIT.repeat(10)}long m = 1'000'000; int h = 0x1'F; auto s = fooR"(not raw // {)"; int t = 1;\n${UNIT.repeat(10)}`;
    const one = offsetOf(text, "1'000'000");
    const noDigit = splice(text, one, one + 1, ''); // `'000'000;`: a character literal
    const foo = offsetOf(text, 'fooR"');
    const raw = splice(text, foo, foo + 3, ''); // `R"(not raw // {)"`: a raw string
    const spaced = splice(text, foo + 3, foo + 3, ' '); // `fooR "(...)"`
    const hex = offsetOf(text, "0x1'F");
    const notHex = splice(text, hex, hex + 2, 'g'); // `g1'F`: not a number
    replay([text, noDigit, text, raw, spaced, raw, notHex, text]);
  });

  it('a line break typed between an identifier and R"( or a separated number, and deleted again', () => {
    // What precedes `R"` and a quote between digits decides what they are; a line break changes that.
    for (const line of ['int xR"(a // {)" + 1; {', "int a1'2'3; {", 'x = 9\'a\' + fooR"("b")";']) {
      const text = `${UNIT.repeat(5)}${line}\n${UNIT.repeat(5)}`;
      const versions = [text];
      for (const mark of ['R"', "1'", "9'"]) {
        if (!line.includes(mark)) continue;
        const at = UNIT.length * 5 + line.indexOf(mark);
        const broken = splice(text, at, at, '\n');
        const replaced = splice(text, at - 1, at, '\n');
        versions.push(broken, text, replaced, text, splice(text, at, at, ' '), text);
      }
      replay(versions);
    }
  });

  it('to and from an empty text, and to the same text', () => {
    replay(['', LONG, '', '', 'x', '/*', '/*', 'R"(', '', UNIT, UNIT]);
  });

  it('a line end typed at the very start of the text', () => {
    replay(['', '\n']);
    replay(['x', '\nx']);
    replay([UNIT, '\n' + UNIT, '\n\n' + UNIT, UNIT]);
    replay([LONG, '\n' + LONG, '\n/*' + LONG]);
  });

  it('text typed at the end after a comment, raw string or literal the previous text left open', () => {
    for (const open of [
      '/* open\n',
      'R"(open\n',
      'R"xy(open )" \n',
      '// continued \\\n',
      '"continued \\\n',
      "'continued \\\n",
    ]) {
      for (const before of ['', UNIT]) {
        const text = before + open;
        replay([text, text + 'int after = 1; {\n', text + 'int after = 1; {\n}\n', text]);
        replay([text, text + '\n']);
      }
    }
  });

  it('makes an edited text from the previous version as a fresh one does', async () => {
    await checkProperty(
      'source text: incremental = fresh',
      [anyDocument, fc.array(textEdit, { minLength: 1, maxLength: 6 })],
      (original, edits) => {
        replay(versionsOf(original, edits));
      },
      fuzzRuns(1000),
    );
  });

  it('makes any text from any previous text as a fresh one does', async () => {
    await checkProperty(
      'source text: any previous',
      [anyDocument, anyDocument],
      (previous, next) => {
        replay([previous, next, next, previous]);
      },
      fuzzRuns(300),
    );
  });

  it('serves a previous version more than once (undo, another edit)', async () => {
    await checkProperty(
      'source text: previous used twice',
      [anyDocument, textEdit, textEdit],
      (original, first, second) => {
        const base = makeSourceText(original);
        const a = applyTextEdit(original, first);
        const b = applyTextEdit(original, second);
        assertSameSource(makeSourceText(a, base), makeSourceText(a), 'first edit from the original');
        assertSameSource(makeSourceText(b, base), makeSourceText(b), 'second edit from the same original');
        assertSameSource(makeSourceText(a, base), makeSourceText(a), 'first edit again from the same original');
        assertSameSource(base, makeSourceText(original), 'the original after serving as previous three times');
      },
      fuzzRuns(300),
    );
  });
});
