/**
 * The few values an integer expression can take when the source fixes them but not which one:
 * a ternary on a run-time condition (`wide ? 256 : 128`), a local that an if-chain or a `switch`
 * changes (`int threads = 256; if (n > 4096) threads <<= 1; else if (...) threads <<= 2;`), and
 * expressions of those. Null when any part is not one of a few known values: null beats wrong.
 */
import { evaluateInteger, type Lookup } from './const-eval';
import { isIdentCharAt, isSpaceAt } from './source-text';
import { assignmentPatternOf } from './constant-table';

/** Sorted, without repeats, at most MAX_VALUES. */
export type ValueSet = readonly number[];
export type SetLookup = (name: string) => ValueSet | null;

/** More values than a hover can list in a row each: the set is not "a few". */
export const MAX_VALUES = 16;

function normalize(values: Iterable<number>): ValueSet | null {
  const set = [...new Set(values)].sort((a, b) => a - b);
  return set.length > MAX_VALUES ? null : set;
}

/** The values `text` can take, each of its names taking the values `lookup` gives. */
export function evaluateSet(text: string, lookup: SetLookup, depth = 0): ValueSet | null {
  if (depth > 16) return null;
  const t = stripParens(text.trim());
  const ternary = splitTernary(t);
  if (ternary) {
    const [condition, whenTrue, whenFalse] = ternary;
    const c = evaluateSet(condition, lookup, depth + 1);
    if (c && c.every((v) => v !== 0)) return evaluateSet(whenTrue, lookup, depth + 1);
    if (c && c.every((v) => v === 0)) return evaluateSet(whenFalse, lookup, depth + 1);
    // Either arm, whichever the condition picks at run time.
    const a = evaluateSet(whenTrue, lookup, depth + 1);
    const b = a && evaluateSet(whenFalse, lookup, depth + 1);
    return a && b ? normalize([...a, ...b]) : null;
  }
  return enumerate(t, lookup);
}

/** Every combination of the values of the names `text` asks for, evaluated. */
function enumerate(text: string, lookup: SetLookup): ValueSet | null {
  const multi = new Map<string, ValueSet>();
  // The evaluator asks for names in order and stops at the first it cannot read: run it again, each
  // several-valued name bound to its first value, until it asks for no new one.
  for (let round = 0; round < 8; round++) {
    let missing = false;
    let grew = false;
    const probe: Lookup = (name) => {
      const known = multi.get(name);
      if (known) return known[0];
      const values = lookup(name);
      if (values === null || values.length === 0) {
        missing = true;
        return null;
      }
      if (values.length === 1) return values[0];
      multi.set(name, values);
      grew = true;
      return values[0];
    };
    const first = evaluateInteger(text, probe);
    if (missing) return null;
    if (!grew) {
      if (multi.size === 0) return first === null ? null : [first];
      break;
    }
  }
  const names = [...multi.keys()];
  let combinations = 1;
  for (const values of multi.values()) combinations *= values.length;
  if (combinations > 256) return null;
  const out: number[] = [];
  const chosen = new Map<string, number>();
  const bound: Lookup = (name) => chosen.get(name) ?? (lookup(name)?.length === 1 ? lookup(name)![0] : null);
  const visit = (k: number): boolean => {
    if (k === names.length) {
      const v = evaluateInteger(text, bound);
      if (v === null) return false;
      out.push(v);
      return true;
    }
    for (const v of multi.get(names[k])!) {
      chosen.set(names[k], v);
      if (!visit(k + 1)) return false;
    }
    return true;
  };
  return visit(0) ? normalize(out) : null;
}

/**
 * `(x)` → `x` when the parentheses enclose the whole text, as often as they do. In one pass over the text
 * (the matching parentheses first): stripping one pair at a time took 18 s for 40,000 nested pairs.
 */
function stripParens(text: string): string {
  if (!text.startsWith('(')) return text;
  const match = new Int32Array(text.length).fill(-1);
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') open.push(i);
    else if (text[i] === ')' && open.length > 0) match[open.pop()!] = i;
  }
  let from = 0;
  let to = text.length - 1;
  while (from < to && text[from] === '(' && match[from] === to) {
    from++;
    to--;
    while (from <= to && isBlank(text[from])) from++;
    while (to >= from && isBlank(text[to])) to--;
  }
  return text.slice(from, to + 1);
}

/** What String.prototype.trim removes (\s is the same set). */
function isBlank(c: string): boolean {
  return BLANK.test(c);
}

const BLANK = /\s/;

/** `c ? a : b` at the top level of `text` (not in parentheses), or null. */
function splitTernary(text: string): [string, string, string] | null {
  let depth = 0;
  let question = -1;
  let nested = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (depth !== 0) continue;
    else if (c === '?') {
      if (question < 0) question = i;
      else nested++;
    } else if (c === ':' && question >= 0) {
      if (text[i + 1] === ':' || text[i - 1] === ':') continue;
      if (nested > 0) nested--;
      else return [text.slice(0, question), text.slice(question + 1, i), text.slice(i + 1)];
    }
  }
  return null;
}

/**
 * The values local `name` can hold at `to`, from its declaration's end at `from` (holding `init`):
 * the statements in between read in order, both ways of an `if` whose condition is not known, each
 * `case` of a `switch`; a path that returns or throws holds nothing. Null when a loop, a directive,
 * an address taken or an assignment that is not `name = e` / `name op= e` could change it.
 */
export function valuesAt(
  masked: string,
  name: string,
  init: ValueSet,
  from: number,
  to: number,
  evaluate: (text: string, self: ValueSet) => ValueSet | null,
): ValueSet | null {
  const reader = new StatementReader(masked, name, to, evaluate);
  const end = reader.run(from, to, new Set(init));
  return end === null ? null : normalize(end);
}

type State = Set<number> | null;

class StatementReader {
  constructor(
    private readonly masked: string,
    private readonly name: string,
    private readonly limit: number,
    private readonly evaluate: (text: string, self: ValueSet) => ValueSet | null,
  ) {}

  /** The values after the statements in [from, to). */
  run(from: number, to: number, state: State): State {
    let i = from;
    while (state !== null) {
      i = this.skip(i, to);
      if (i >= to) return state;
      const read = this.statement(i, to, state);
      if (read.end > this.limit && this.assigns(i, this.limit)) return null;
      if (read.end > to) return read.end > this.limit ? state : null;
      state = read.state;
      i = read.end;
    }
    return null;
  }

  /** Past blanks, empty statements and labels (`default:` outside a switch is none). */
  private skip(i: number, to: number): number {
    const m = this.masked;
    for (;;) {
      while (i < to && (isSpaceAt(m, i) || m[i] === ';')) i++;
      return i;
    }
  }

  private word(i: number): string {
    let j = i;
    while (j < this.masked.length && isIdentCharAt(this.masked, j)) j++;
    return this.masked.slice(i, j);
  }

  /** The statement at `i`: its end (one past it) and the values after it. */
  private statement(i: number, to: number, state: Set<number>): { end: number; state: State } {
    const m = this.masked;
    if (m[i] === '#') return { end: to + 1, state: null };
    if (m[i] === '{') {
      const close = matchBracket(m, i);
      if (close < 0) return { end: to + 1, state: null };
      return { end: close + 1, state: this.run(i + 1, close, state) };
    }
    const word = this.word(i);
    if (word === 'if') return this.ifStatement(i, to, state);
    if (word === 'switch') return this.switchStatement(i, to, state);
    if (word === 'for' || word === 'while' || word === 'do') {
      const end = this.loopEnd(i, word);
      if (end < 0) return { end: to + 1, state: null };
      return { end, state: this.assigns(i, end) ? null : state };
    }
    const end = this.simpleEnd(i);
    if (end < 0) return { end: to + 1, state: null };
    if (word === 'return' || word === 'throw') return { end, state: new Set() };
    if (word === 'break' || word === 'continue' || word === 'goto') return { end, state: null };
    return { end, state: this.assignment(i, end, state) };
  }

  private ifStatement(i: number, to: number, state: Set<number>): { end: number; state: State } {
    const m = this.masked;
    let open = this.skipBlanks(i + 2);
    if (this.word(open) === 'constexpr') open = this.skipBlanks(open + 9);
    if (m[open] !== '(') return { end: to + 1, state: null };
    const close = matchBracket(m, open);
    if (close < 0) return { end: to + 1, state: null };
    const condition = m.slice(open + 1, close);
    const thenStart = this.skipBlanks(close + 1);
    const then = this.statement(thenStart, to, new Set(state));
    if (then.end > to) return then;
    let end = then.end;
    let otherwise: State = state;
    const elseAt = this.skipBlanks(end);
    if (this.word(elseAt) === 'else') {
      const other = this.statement(this.skipBlanks(elseAt + 4), to, new Set(state));
      if (other.end > to) return other;
      otherwise = other.state;
      end = other.end;
    }
    const c = this.evaluate(condition, [...state]);
    if (c && c.every((v) => v !== 0)) return { end, state: then.state };
    if (c && c.every((v) => v === 0)) return { end, state: otherwise };
    return { end, state: then.state && otherwise ? new Set([...then.state, ...otherwise]) : null };
  }

  /** Each case from its label to a `break` (falling through to the next), and no case at all without `default`. */
  private switchStatement(i: number, to: number, state: Set<number>): { end: number; state: State } {
    const m = this.masked;
    const open = this.skipBlanks(i + 6);
    const close = m[open] === '(' ? matchBracket(m, open) : -1;
    const bodyOpen = close < 0 ? -1 : this.skipBlanks(close + 1);
    const bodyClose = bodyOpen >= 0 && m[bodyOpen] === '{' ? matchBracket(m, bodyOpen) : -1;
    if (bodyClose < 0) return { end: to + 1, state: null };
    const end = bodyClose + 1;
    if (!this.assigns(bodyOpen, bodyClose)) return { end, state };
    const labels: number[] = [];
    let hasDefault = false;
    let depth = 0;
    for (let k = bodyOpen + 1; k < bodyClose; k++) {
      const c = m[k];
      if (c === '{' || c === '(') depth++;
      else if (c === '}' || c === ')') depth--;
      else if (depth === 0 && isIdentCharAt(m, k) && !isIdentCharAt(m, k - 1)) {
        const w = this.word(k);
        if (w === 'case' || w === 'default') {
          const colon = labelEnd(m, k + w.length, bodyClose);
          if (colon < 0) return { end, state: null };
          labels.push(colon + 1);
          if (w === 'default') hasDefault = true;
          k = colon;
        } else k += w.length - 1;
      }
    }
    const out = new Set<number>(hasDefault ? [] : state);
    for (const start of labels) {
      // From this label on, through the labels after it, until a `break`.
      const after = this.caseValues(start, bodyClose, state);
      if (after === null) return { end, state: null };
      for (const v of after) out.add(v);
    }
    return { end, state: out };
  }

  /** The values a case leaves at its `break` (falling through the labels after it). */
  private caseValues(from: number, to: number, state: Set<number>): State {
    let i = from;
    let current: State = new Set(state);
    while (current !== null) {
      i = this.skip(i, to);
      if (i >= to) return current;
      const w = this.word(i);
      if (w === 'break') return current;
      if (w === 'case' || w === 'default') {
        const colon = labelEnd(this.masked, i + w.length, to);
        if (colon < 0) return null;
        i = colon + 1;
        continue;
      }
      const read = this.statement(i, to, current);
      if (read.end > to) return null;
      current = read.state;
      i = read.end;
    }
    return null;
  }

  private skipBlanks(i: number): number {
    while (i < this.masked.length && isSpaceAt(this.masked, i)) i++;
    return i;
  }

  private loopEnd(i: number, word: string): number {
    const m = this.masked;
    if (word === 'do') {
      const body = this.statementEnd(this.skipBlanks(i + 2));
      if (body < 0) return -1;
      return this.simpleEnd(this.skipBlanks(body));
    }
    const open = this.skipBlanks(i + word.length);
    const close = m[open] === '(' ? matchBracket(m, open) : -1;
    return close < 0 ? -1 : this.statementEnd(this.skipBlanks(close + 1));
  }

  /** One past the statement at `i`, whatever it is. */
  private statementEnd(i: number): number {
    const m = this.masked;
    if (m[i] === '{') {
      const close = matchBracket(m, i);
      return close < 0 ? -1 : close + 1;
    }
    const w = this.word(i);
    if (w === 'if' || w === 'for' || w === 'while' || w === 'switch') {
      const open = this.skipBlanks(i + w.length);
      const close = m[open] === '(' ? matchBracket(m, open) : -1;
      if (close < 0) return -1;
      const end = this.statementEnd(this.skipBlanks(close + 1));
      if (end < 0 || w !== 'if') return end;
      const e = this.skipBlanks(end);
      return this.word(e) === 'else' ? this.statementEnd(this.skipBlanks(e + 4)) : end;
    }
    return this.simpleEnd(i);
  }

  /** One past the `;` ending the expression statement at `i` (brackets, lambdas included), or -1. */
  private simpleEnd(i: number): number {
    const m = this.masked;
    let depth = 0;
    for (let k = i; k < m.length; k++) {
      const c = m[k];
      if (c === '(' || c === '[' || c === '{') depth++;
      else if (c === ')' || c === ']' || c === '}') {
        if (--depth < 0) return -1;
      } else if (c === ';' && depth === 0) return k + 1;
    }
    return -1;
  }

  /** The text [from, to) changes `name` in some way. */
  private assigns(from: number, to: number): boolean {
    const text = this.masked.slice(from, to);
    return text.includes(this.name) && changes(this.name).test(text);
  }

  /** The values after the expression statement [i, end): `name = e;`, `name op= e;`, or anything that leaves `name` alone. */
  private assignment(i: number, end: number, state: Set<number>): State {
    if (!this.assigns(i, end)) return state;
    const text = this.masked.slice(i, end - 1).trim();
    const m = new RegExp(String.raw`^${this.name}\s*((?:[-+*/%&|^]|<<|>>)?)=(?!=)([\s\S]*)$`).exec(text);
    if (!m || changes(this.name).test(m[2])) return null;
    const out = new Set<number>();
    for (const v of state) {
      const rhs = this.evaluate(m[2], [v]);
      if (rhs === null) return null;
      for (const r of rhs) {
        const next = m[1] ? evaluateInteger(`(${v}) ${m[1]} (${r})`) : r;
        if (next === null) return null;
        out.add(next);
      }
    }
    return out.size > MAX_VALUES ? null : out;
  }
}

/** What changes `name`: an assignment, `++`/`--`, its address taken (built once per name). */
function changes(name: string): RegExp {
  return assignmentPatternOf(name);
}

/** The `:` ending a `case` label (not a `::`), or -1. */
function labelEnd(masked: string, from: number, to: number): number {
  for (let k = from; k < to; k++) {
    if (masked[k] === ':' && masked[k + 1] !== ':' && masked[k - 1] !== ':') return k;
    if (masked[k] === ';' || masked[k] === '{' || masked[k] === '}') return -1;
  }
  return -1;
}

/** The bracket closing the one at `open`, through brackets of every kind, or -1. */
function matchBracket(masked: string, open: number): number {
  let depth = 0;
  for (let i = open; i < masked.length; i++) {
    const c = masked[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (--depth === 0) return i;
      if (depth < 0) return -1;
    }
  }
  return -1;
}
