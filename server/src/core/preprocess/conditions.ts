/**
 * `#if` and `#elif` conditions, evaluated over what the unit knows of each macro: a definition, no
 * definition, one of a few (a macro defined differently in the arms of a condition the unit cannot
 * decide), or nothing at all (no flag and no file read sets it: the build or a header not read
 * may). A condition is true, false, or unknown; unknown only when its value depends on a macro
 * the unit cannot know.
 *
 * Arithmetic is in intmax_t (64 bits, BigInt here) as the standard says; `&&`, `||` and `?:`
 * short-circuit, so `defined(X) && X > 2` with X undefined is false, not unknown.
 */
import { tokenize, type PpToken } from './tokens';
import { expandTokens, ExpansionLimit, toExpand, type MacroDef, type XToken } from './macro-expansion';

/** What the unit knows of a macro name at a point. */
export interface MacroState {
  /** The definitions it may have (null: not defined); one entry when the unit knows which. */
  readonly options: ReadonlyArray<MacroDef | null>;
  /** The build or a header the unit did not read may define it (or define it otherwise). */
  readonly open: boolean;
}

export type Truth = true | false | 'unknown';

export interface ConditionContext {
  state(name: string): MacroState;
  /** `__has_include(<x>)`: true or false where the unit can tell, else unknown. */
  hasInclude?(name: string, system: boolean): Truth;
}

/** At most this many combinations of the several definitions a condition reads are tried. */
const MAX_COMBINATIONS = 16;

/** The condition's truth over every definition its macros may have; unknown where they disagree or one is open. */
export function evaluateCondition(tokens: readonly PpToken[], ctx: ConditionContext): Truth {
  // Which names with several definitions it reads is found by reading it once with the first of each.
  const several = new Map<string, ReadonlyArray<MacroDef | null>>();
  const first = evaluateWith(tokens, ctx, (name) => {
    const s = ctx.state(name);
    if (s.options.length > 1) several.set(name, s.options);
    return s.options[0] ?? null;
  });
  if (several.size === 0) return first;
  const names = [...several.keys()];
  let combinations = 1;
  for (const n of names) combinations *= several.get(n)!.length;
  if (combinations > MAX_COMBINATIONS) return 'unknown';
  let result: Truth | null = null;
  for (let c = 0; c < combinations; c++) {
    let rest = c;
    const choice = new Map<string, MacroDef | null>();
    for (const n of names) {
      const options = several.get(n)!;
      choice.set(n, options[rest % options.length]);
      rest = Math.floor(rest / options.length);
    }
    const t = evaluateWith(tokens, ctx, (name) =>
      choice.has(name) ? choice.get(name)! : (ctx.state(name).options[0] ?? null),
    );
    if (t === 'unknown') return 'unknown';
    if (result === null) result = t;
    else if (result !== t) return 'unknown';
  }
  return result ?? 'unknown';
}

/**
 * The condition's truth in one configuration: each macro is `definition(name)` (the first of its
 * options, or the choice being tried), and a name nothing defines is unknown if open, else 0.
 */
function evaluateWith(
  tokens: readonly PpToken[],
  ctx: ConditionContext,
  definition: (name: string) => MacroDef | null,
): Truth {
  let expanded: XToken[];
  try {
    expanded = expandTokens(replaceDefined(toExpand(tokens), ctx, definition), (name) => definition(name));
  } catch (e) {
    if (e instanceof ExpansionLimit) return 'unknown';
    throw e;
  }
  const parser = new ConditionParser(expanded, ctx, definition);
  const v = parser.parse();
  if (v === null) return 'unknown';
  return v.value !== 0n;
}

const UNKNOWN_MARK = '\u0000unknown';

/** `defined X` and `defined(X)` (and the `__has_*` queries) are read before expansion, as the standard says. */
function replaceDefined(
  tokens: XToken[],
  ctx: ConditionContext,
  definition: (name: string) => MacroDef | null,
): XToken[] {
  const out: XToken[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind === 'ident' && t.text === 'defined') {
      const paren = tokens[k + 1]?.text === '(';
      const name = tokens[k + (paren ? 2 : 1)];
      if (name?.kind === 'ident' && (!paren || tokens[k + 3]?.text === ')')) {
        // Defined in the files read is defined; not defined there is unknown if the build may define it.
        const def = definition(name.text);
        const text = def ? '1' : ctx.state(name.text).open ? UNKNOWN_MARK : '0';
        out.push({ ...t, kind: text === UNKNOWN_MARK ? 'other' : 'number', text });
        k += paren ? 3 : 1;
        continue;
      }
    }
    if (t.kind === 'ident' && /^__has_include(_next)?$/.test(t.text) && tokens[k + 1]?.text === '(') {
      let j = k + 2;
      let depth = 1;
      for (; j < tokens.length; j++) {
        if (tokens[j].text === '(') depth++;
        else if (tokens[j].text === ')' && --depth === 0) break;
      }
      const inner = tokens.slice(k + 2, j);
      const spelled = inner.map((x) => x.text).join('');
      const header = /^<(.*)>$/.exec(spelled) ?? /^"(.*)"$/.exec(spelled);
      const truth = header && ctx.hasInclude ? ctx.hasInclude(header[1], spelled.startsWith('<')) : 'unknown';
      out.push({
        ...t,
        kind: truth === 'unknown' ? 'other' : 'number',
        text: truth === 'unknown' ? UNKNOWN_MARK : truth ? '1' : '0',
      });
      k = j;
      continue;
    }
    if (
      t.kind === 'ident' &&
      /^__has_(builtin|attribute|cpp_attribute|feature|extension|declspec_attribute|c_attribute)$/.test(t.text) &&
      tokens[k + 1]?.text === '('
    ) {
      let j = k + 2;
      let depth = 1;
      for (; j < tokens.length; j++) {
        if (tokens[j].text === '(') depth++;
        else if (tokens[j].text === ')' && --depth === 0) break;
      }
      out.push({ ...t, kind: 'other', text: UNKNOWN_MARK });
      k = j;
      continue;
    }
    out.push(t);
  }
  return out;
}

interface Value {
  value: bigint;
  unsigned: boolean;
}

const I64 = (v: bigint): bigint => BigInt.asIntN(64, v);
const U64 = (v: bigint): bigint => BigInt.asUintN(64, v);

/** Operators by precedence, lowest first (C's binary operators). */
const BINARY: ReadonlyArray<readonly string[]> = [
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
];

/** A recursive-descent reader of the expanded condition; null for an unknown value. Depth-bounded. */
class ConditionParser {
  private k = 0;
  private depth = 0;
  private bad = false;

  constructor(
    private readonly tokens: readonly XToken[],
    private readonly ctx: ConditionContext,
    private readonly definition: (name: string) => MacroDef | null,
  ) {}

  parse(): Value | null {
    if (this.tokens.length === 0) return null;
    const v = this.conditional();
    if (this.bad || this.k < this.tokens.length) return null;
    return v;
  }

  private peek(): string | undefined {
    return this.tokens[this.k]?.text;
  }

  private conditional(): Value | null {
    if (++this.depth > 256) {
      this.bad = true;
      return null;
    }
    try {
      const c = this.binary(0);
      if (this.peek() !== '?') return c;
      this.k++;
      const a = this.conditional();
      if (this.peek() !== ':') {
        this.bad = true;
        return null;
      }
      this.k++;
      const b = this.conditional();
      if (c === null) return a && b && a.value === b.value ? a : null;
      return c.value !== 0n ? a : b;
    } finally {
      this.depth--;
    }
  }

  private binary(level: number): Value | null {
    if (level >= BINARY.length) return this.unary();
    let left = this.binary(level + 1);
    for (let op = this.peek(); op !== undefined && BINARY[level].includes(op); op = this.peek()) {
      this.k++;
      const right = this.binary(level + 1);
      left = apply(op, left, right);
    }
    return left;
  }

  private unary(): Value | null {
    if (++this.depth > 256) {
      this.bad = true;
      return null;
    }
    try {
      const t = this.tokens[this.k];
      if (!t) {
        this.bad = true;
        return null;
      }
      if (t.text === '!' || t.text === '-' || t.text === '+' || t.text === '~') {
        this.k++;
        const v = this.unary();
        if (v === null) return null;
        if (t.text === '!') return { value: v.value === 0n ? 1n : 0n, unsigned: false };
        if (t.text === '-') return wrap(-v.value, v.unsigned);
        if (t.text === '~') return wrap(~v.value, v.unsigned);
        return v;
      }
      return this.primary();
    } finally {
      this.depth--;
    }
  }

  private primary(): Value | null {
    const t = this.tokens[this.k++];
    if (t.text === '(') {
      const v = this.conditional();
      if (this.peek() !== ')') {
        this.bad = true;
        return null;
      }
      this.k++;
      return v;
    }
    if (t.text === UNKNOWN_MARK) return null;
    if (t.kind === 'number') return integerLiteral(t.text);
    if (t.kind === 'char') return charLiteral(t.text);
    if (t.kind === 'ident') {
      if (t.text === 'true') return { value: 1n, unsigned: false };
      if (t.text === 'false') return { value: 0n, unsigned: false };
      // A name left after expansion: 0 when nothing may define it, unknown when the build may, or
      // when it is defined with a value not known here (a built-in of unknown version).
      const def = this.definition(t.text);
      if (def) {
        // A built-in of a value not known here; or a name painted blue (`#define X X`), or a
        // function-like macro's name without arguments, which the standard reads as 0.
        if (def.body === null) return null;
        if (def.params !== null && this.peek() === '(') {
          this.skipCall();
          return null;
        }
        return { value: 0n, unsigned: false };
      }
      return this.ctx.state(t.text).open ? null : { value: 0n, unsigned: false };
    }
    this.bad = true;
    return null;
  }

  private skipCall(): void {
    let depth = 0;
    for (; this.k < this.tokens.length; this.k++) {
      const x = this.tokens[this.k].text;
      if (x === '(') depth++;
      else if (x === ')' && --depth === 0) {
        this.k++;
        return;
      }
    }
  }
}

function wrap(v: bigint, unsigned: boolean): Value {
  return { value: unsigned ? U64(v) : I64(v), unsigned };
}

function apply(op: string, a: Value | null, b: Value | null): Value | null {
  // Short-circuits: a known side decides, whatever the other is.
  if (op === '&&') {
    if ((a && a.value === 0n) || (b && b.value === 0n)) return { value: 0n, unsigned: false };
    return a && b ? { value: 1n, unsigned: false } : null;
  }
  if (op === '||') {
    if ((a && a.value !== 0n) || (b && b.value !== 0n)) return { value: 1n, unsigned: false };
    return a && b ? { value: 0n, unsigned: false } : null;
  }
  if (!a || !b) return null;
  const unsigned = a.unsigned || b.unsigned;
  const x = unsigned ? U64(a.value) : a.value;
  const y = unsigned ? U64(b.value) : b.value;
  const bool = (c: boolean): Value => ({ value: c ? 1n : 0n, unsigned: false });
  switch (op) {
    case '|':
      return wrap(x | y, unsigned);
    case '^':
      return wrap(x ^ y, unsigned);
    case '&':
      return wrap(x & y, unsigned);
    case '==':
      return bool(x === y);
    case '!=':
      return bool(x !== y);
    case '<':
      return bool(x < y);
    case '>':
      return bool(x > y);
    case '<=':
      return bool(x <= y);
    case '>=':
      return bool(x >= y);
    case '<<':
      return y < 0n || y >= 64n ? null : wrap(x << y, a.unsigned);
    case '>>':
      return y < 0n || y >= 64n ? null : wrap(x >> y, a.unsigned);
    case '+':
      return wrap(x + y, unsigned);
    case '-':
      return wrap(x - y, unsigned);
    case '*':
      return wrap(x * y, unsigned);
    case '/':
      return y === 0n ? null : wrap(x / y, unsigned);
    case '%':
      return y === 0n ? null : wrap(x % y, unsigned);
  }
  return null;
}

/** An integer literal of a condition (`0x10`, `1'000`, `20UL`), or null for anything else (a float is not allowed). */
export function integerLiteral(text: string): Value | null {
  const m = /^(0[xX][0-9a-fA-F']+|0[bB][01']+|0[0-7']*|[1-9][0-9']*)([uUlLzZ]*)$/.exec(text);
  if (!m) return null;
  const digits = m[1].replace(/'/g, '');
  let value: bigint;
  try {
    value = /^0[0-7]+$/.test(digits) ? BigInt(`0o${digits.slice(1)}`) : BigInt(digits);
  } catch {
    return null;
  }
  const unsigned = /[uU]/.test(m[2]) || value > 0x7fffffffffffffffn;
  return wrap(value, unsigned);
}

function charLiteral(text: string): Value | null {
  const m = /^'(\\?.)'$/.exec(text);
  if (!m) return null;
  const c = m[1];
  const escapes: Record<string, number> = { '\\n': 10, '\\t': 9, '\\0': 0, '\\r': 13, "\\'": 39, '\\\\': 92 };
  const code = c.length === 1 ? c.charCodeAt(0) : escapes[c];
  return code === undefined ? null : { value: BigInt(code), unsigned: false };
}

/** A condition read from text (tests, flags). */
export function conditionTokens(text: string): PpToken[] {
  return tokenize(text);
}
