/**
 * Integer constant expressions as they appear in launch configurations and
 * attributes: literals, arithmetic, shifts, bitwise operators, comparisons,
 * ternaries, `sizeof` of built-in types and identifiers looked up by the caller.
 * Anything else evaluates to null: null beats wrong.
 */

import { ownCopy } from '../incremental/engine-seams';
import { memoByText } from '../incremental/kept-tables';

export type Lookup = (name: string) => number | null;

/** Bytes of the built-in and CUDA vector types `sizeof` knows. */
export const BUILTIN_TYPE_SIZES: Readonly<Record<string, number>> = {
  char: 1,
  'signed char': 1,
  'unsigned char': 1,
  bool: 1,
  int8_t: 1,
  uint8_t: 1,
  char1: 1,
  __nv_fp8_e4m3: 1,
  __nv_fp8_e5m2: 1,
  __nv_fp8_e8m0: 1,
  uchar1: 1,
  short: 2,
  __nv_fp8x2_e4m3: 2,
  __nv_fp8x2_e5m2: 2,
  'unsigned short': 2,
  int16_t: 2,
  uint16_t: 2,
  half: 2,
  __half: 2,
  __nv_bfloat16: 2,
  nv_bfloat16: 2,
  char2: 2,
  uchar2: 2,
  short1: 2,
  ushort1: 2,
  int: 4,
  __nv_fp8x4_e4m3: 4,
  __nv_fp8x4_e5m2: 4,
  unsigned: 4,
  'unsigned int': 4,
  float: 4,
  int32_t: 4,
  uint32_t: 4,
  half2: 4,
  __half2: 4,
  __nv_bfloat162: 4,
  nv_bfloat162: 4,
  char4: 4,
  uchar4: 4,
  short2: 4,
  ushort2: 4,
  int1: 4,
  uint1: 4,
  float1: 4,
  long: 8,
  'unsigned long': 8,
  'long long': 8,
  'unsigned long long': 8,
  double: 8,
  int64_t: 8,
  uint64_t: 8,
  size_t: 8,
  ptrdiff_t: 8,
  int2: 8,
  uint2: 8,
  float2: 8,
  short4: 8,
  ushort4: 8,
  long1: 8,
  ulong1: 8,
  longlong1: 8,
  ulonglong1: 8,
  double1: 8,
  int3: 12,
  uint3: 12,
  float3: 12,
  int4: 16,
  uint4: 16,
  float4: 16,
  double2: 16,
  long2: 16,
  ulong2: 16,
  longlong2: 16,
  ulonglong2: 16,
  double3: 24,
  double4: 32,
  long4: 32,
  ulong4: 32,
  longlong4: 32,
  ulonglong4: 32,
};

export function sizeofType(typeText: string): number | null {
  // One word (`float`, `T`): what the general case below reads it as.
  if (ONE_WORD.test(typeText) && typeText !== 'const' && typeText !== 'volatile')
    return BUILTIN_TYPE_SIZES[typeText] ?? null;
  const normalized = typeText
    .replace(/\b(const|volatile)\b/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (/\*\s*$/.test(normalized)) return 8;
  const withoutStd = normalized.replace(/^std::/, '');
  return BUILTIN_TYPE_SIZES[withoutStd] ?? null;
}

const ONE_WORD = /^\w+$/;

type Token = { kind: 'num'; value: number } | { kind: 'id'; text: string } | { kind: 'op'; text: string };

const OPERATORS: readonly string[] = [
  '<<',
  '>>',
  '<=',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  '::',
  '+',
  '-',
  '*',
  '/',
  '%',
  '(',
  ')',
  '?',
  ':',
  '<',
  '>',
  '&',
  '|',
  '^',
  '~',
  '!',
  ',',
];

// Sticky: each matches exactly at its `lastIndex`.
const NUMBER = /(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9][0-9']*(\.[0-9]*)?([eE][+-]?[0-9]+)?)([uUlLfF]*)/y;
const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/y;

/**
 * Token lists by text, shared (they are never changed): the same few hundred
 * texts (`256`, `BLOCK`, `(n + 255) / 256`) are evaluated at every version of a file.
 * Tokenized from a copy: the identifiers cut from it must not keep the document's text alive.
 */
const tokensOf: (text: string) => readonly Token[] | null = memoByText(
  'expression tokens',
  (text: string) => text,
  (text: string) => tokenize(ownCopy(text)),
);

function tokenize(text: string): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    NUMBER.lastIndex = i;
    const number = c >= '0' && c <= '9' ? NUMBER.exec(text) : null;
    if (number) {
      const body = number[1].replace(/'/g, '');
      if (number[2] !== undefined || number[3] !== undefined || /[fF]/.test(number[4])) return null; // floating point
      let value: number;
      if (/^0[xX]/.test(body)) value = parseInt(body.slice(2), 16);
      else if (/^0[bB]/.test(body)) value = parseInt(body.slice(2), 2);
      else if (/^0[0-7]+$/.test(body)) value = parseInt(body, 8);
      else value = parseInt(body, 10);
      if (!Number.isSafeInteger(value)) return null;
      tokens.push({ kind: 'num', value });
      i += number[0].length;
      continue;
    }
    IDENTIFIER.lastIndex = i;
    const ident = IDENTIFIER.exec(text);
    if (ident) {
      tokens.push({ kind: 'id', text: ident[0] });
      i += ident[0].length;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (!op) return null;
    tokens.push({ kind: 'op', text: op });
    i += op.length;
  }
  return tokens;
}

/** Evaluate `text` as an integer constant expression, or null. */
export function evaluateInteger(text: string, lookup: Lookup = () => null): number | null {
  const tokens = tokensOf(text);
  if (!tokens || tokens.length === 0) return null;
  const evaluator = new Evaluator(tokens, lookup);
  const value = evaluator.ternary();
  if (evaluator.failed || evaluator.pos !== tokens.length) return null;
  return Number.isSafeInteger(value) ? value : null;
}

const INTEGER_TYPES =
  /^(const\s+)?((unsigned|signed)\s+)?(int|long|long long|short|char|size_t|int32_t|uint32_t|int64_t|uint64_t|unsigned|signed)$/;
const CAST_TEMPLATES: ReadonlySet<string> = new Set([
  'static_cast',
  'int',
  'unsigned',
  'size_t',
  'int32_t',
  'uint32_t',
  'int64_t',
  'uint64_t',
  'long',
]);
const FUNCTIONAL_CASTS: ReadonlySet<string> = new Set([
  'int',
  'unsigned',
  'size_t',
  'int32_t',
  'uint32_t',
  'int64_t',
  'uint64_t',
  'long',
]);

function isOp(t: Token | undefined, op: string): boolean {
  return t !== undefined && t.kind === 'op' && t.text === op;
}

/**
 * One evaluation over a token list (recursive descent, precedence climbing for the binary
 * operators). Most launch texts name a run-time value and fail: a failure sets `failed` and yields 0
 * rather than throwing, each step returns at once when it is set, and the result is null. One object
 * per evaluation, not a closure per rule: launches and constants evaluate thousands of texts per file.
 */
class Evaluator {
  pos = 0;
  failed = false;
  /** Nesting deeper than any real expression (10,000 parentheses, generated or half-typed) fails the evaluation instead of the stack. */
  private depth = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly lookup: Lookup,
  ) {}

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }

  private fail(): number {
    this.failed = true;
    return 0;
  }

  private check(v: number): number {
    return Number.isSafeInteger(v) ? v : this.fail();
  }

  private enter(): boolean {
    return !this.failed && ++this.depth <= MAX_NESTING;
  }

  ternary(): number {
    if (!this.enter()) return this.fail();
    const value = this.ternaryAt();
    this.depth--;
    return value;
  }

  private ternaryAt(): number {
    const condition = this.binary(0);
    if (isOp(this.peek(), '?')) {
      this.pos++;
      const whenTrue = this.ternary();
      if (!isOp(this.peek(), ':')) return this.fail();
      this.pos++;
      const whenFalse = this.ternary();
      return condition !== 0 ? whenTrue : whenFalse;
    }
    return condition;
  }

  /** Operands joined by binary operators that bind at least as tightly as `minLevel` (precedence climbing, left to right). */
  private binary(minLevel: number): number {
    let left = this.unary();
    for (;;) {
      const t = this.peek();
      const op = t !== undefined && t.kind === 'op' ? t.text : '';
      const level = BINARY_LEVEL.get(op);
      if (this.failed || level === undefined || level < minLevel) return left;
      this.pos++;
      const right = this.binary(level + 1);
      if (this.failed) return 0;
      left = this.check(this.apply(op, left, right));
    }
  }

  private apply(op: string, a: number, b: number): number {
    switch (op) {
      case '||':
        return a !== 0 || b !== 0 ? 1 : 0;
      case '&&':
        return a !== 0 && b !== 0 ? 1 : 0;
      case '|':
        return Number(BigInt(a) | BigInt(b));
      case '^':
        return Number(BigInt(a) ^ BigInt(b));
      case '&':
        return Number(BigInt(a) & BigInt(b));
      case '==':
        return a === b ? 1 : 0;
      case '!=':
        return a !== b ? 1 : 0;
      case '<':
        return a < b ? 1 : 0;
      case '>':
        return a > b ? 1 : 0;
      case '<=':
        return a <= b ? 1 : 0;
      case '>=':
        return a >= b ? 1 : 0;
      case '<<':
        return b < 0 || b > 62 ? this.fail() : a * 2 ** b;
      case '>>':
        return b < 0 || b > 62 ? this.fail() : Math.floor(a / 2 ** b);
      case '+':
        return a + b;
      case '-':
        return a - b;
      case '*':
        return a * b;
      case '/':
        return b === 0 ? this.fail() : Math.trunc(a / b);
      case '%':
        return b === 0 ? this.fail() : a % b;
    }
    return this.fail();
  }

  private unary(): number {
    if (!this.enter()) return this.fail();
    const value = this.unaryAt();
    this.depth--;
    return value;
  }

  private unaryAt(): number {
    const t = this.peek();
    if (isOp(t, '-')) {
      this.pos++;
      return this.check(-this.unary());
    }
    if (isOp(t, '+')) {
      this.pos++;
      return this.unary();
    }
    if (isOp(t, '!')) {
      this.pos++;
      return this.unary() === 0 ? 1 : 0;
    }
    if (isOp(t, '~')) {
      this.pos++;
      return this.check(-this.unary() - 1);
    }
    return this.primary();
  }

  private primary(): number {
    const { tokens } = this;
    const t = this.peek();
    if (!t) return this.fail();
    if (t.kind === 'num') {
      this.pos++;
      return t.value;
    }
    if (isOp(t, '(')) {
      // A C-style cast to an integer type: `(int)x`, `(unsigned)(a*b)`.
      const cast = this.castLength();
      if (cast > 0) {
        this.pos += cast;
        return this.unary();
      }
      this.pos++;
      const v = this.ternary();
      if (!isOp(this.peek(), ')')) return this.fail();
      this.pos++;
      return v;
    }
    if (t.kind === 'id') {
      if (t.text === 'sizeof') return this.sizeofExpression();
      if (CAST_TEMPLATES.has(t.text) && isOp(tokens[this.pos + 1], '<')) {
        // static_cast<int>(x)
        let j = this.pos + 2;
        while (j < tokens.length && !isOp(tokens[j], '>')) j++;
        this.pos = j + 1;
        return this.primary();
      }
      if (FUNCTIONAL_CASTS.has(t.text) && isOp(tokens[this.pos + 1], '(')) {
        this.pos++; // functional cast int(x)
        return this.primary();
      }
      // Qualified names: ns::NAME, Enum::Value
      let name = t.text;
      this.pos++;
      while (isOp(this.peek(), '::') && tokens[this.pos + 1]?.kind === 'id') {
        name += '::' + (tokens[this.pos + 1] as { text: string }).text;
        this.pos += 2;
      }
      if (name === 'true') return 1;
      if (name === 'false') return 0;
      // A call without arguments: a function that returns a constant (`threads()`, `dh::WarpThreads()`).
      if (isOp(this.peek(), '(') && isOp(tokens[this.pos + 1], ')')) {
        this.pos += 2;
        const v = this.lookup(`${name}()`);
        return v === null ? this.fail() : v;
      }
      const v = this.lookup(name);
      return v === null ? this.fail() : v;
    }
    return this.fail();
  }

  private castLength(): number {
    const { tokens, pos } = this;
    let j = pos + 1;
    const words: string[] = [];
    while (tokens[j]?.kind === 'id') {
      words.push((tokens[j] as { text: string }).text);
      j++;
    }
    if (words.length === 0 || !isOp(tokens[j], ')')) return 0;
    return INTEGER_TYPES.test(words.join(' ')) ? j - pos + 1 : 0;
  }

  private sizeofExpression(): number {
    const { tokens } = this;
    this.pos++;
    if (!isOp(this.peek(), '(')) return this.fail();
    let depth = 0;
    const start = this.pos + 1;
    let j = this.pos;
    for (; j < tokens.length; j++) {
      if (isOp(tokens[j], '(')) depth++;
      else if (isOp(tokens[j], ')') && --depth === 0) break;
    }
    if (j >= tokens.length) return this.fail();
    const inner = tokens
      .slice(start, j)
      .map((x) => (x.kind === 'num' ? String(x.value) : x.text))
      .join(' ')
      .replace(/ \* /g, ' *')
      .replace(/\s*\*$/, '*');
    this.pos = j + 1;
    const size = sizeofType(inner.replace(/\s*\*/g, '*').replace(/\*/g, ' *'));
    return size ?? this.fail();
  }
}

const MAX_NESTING = 256;

/** Binary operators by how tightly they bind: 0 the loosest. */
const BINARY_LEVEL: ReadonlyMap<string, number> = new Map(
  [
    ['||'],
    ['&&'],
    ['|'],
    ['^'],
    ['&'],
    ['==', '!='],
    ['<', '>', '<=', '>='],
    ['<<', '>>'],
    ['+', '-'],
    ['*', '/', '%'],
  ].flatMap((ops, level) => ops.map((op) => [op, level] as const)),
);
