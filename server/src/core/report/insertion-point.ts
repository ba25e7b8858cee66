/**
 * Where a statement that must run exactly when a launch runs can go (the dynamic shared memory opt-in a quick
 * fix inserts). Read from the masked text, forward from the block that holds the launch:
 * - the launch is (in) an expression statement of a block, not under a condition inside that statement:
 *   before the statement (after a `case`/`default`/label on its line, never before it);
 * - that statement is the body of a brace-less `if`, `else`, `for`, `while`, `do` or `switch`: before it, with
 *   braces around the two;
 * - the launch is under a condition inside its statement (`c ? k<<<...>>>() : 0`, `a && (k<<<...>>>(), 1)`), in
 *   a control header (`for (...; ...; k<<<...>>>())`), or not in a function body: a comma expression
 *   `(stmt, launch)`, the only form that runs exactly when the launch does.
 * Pure.
 */
import type { SourceText } from '../text/source-text';
import { isIdentCharAt } from '../text/source-text';

export type InsertionPoint =
  | {
      kind: 'statement';
      /** Offset of the statement's first character: the new statement goes right before it. */
      statementStart: number;
      /** The statement starts its line (only blanks before it): the new statement gets a line of its own. */
      ownLine: boolean;
      /** Set when the statement is the body of a brace-less control statement: braces go around it. */
      braces: { afterHeader: number; statementEnd: number; kind: string } | null;
    }
  | { kind: 'comma'; start: number; end: number; why: string };

const CONTROL_WITH_HEADER: ReadonlySet<string> = new Set(['if', 'for', 'while', 'switch', 'catch']);
const CONTROL_WITHOUT_HEADER: ReadonlySet<string> = new Set(['else', 'do', 'try']);

interface Frame {
  /** The character that opened it, and where. */
  open: string;
  openAt: number;
  /** The keyword before a `(` (`if`, `for`, `while`, `switch`), when it is a control header. */
  control: string | null;
  /** A `?`, a ternary `:`, `&&` or `||` at this level since the last `,` (the operand after it runs conditionally). */
  conditional: boolean;
  /** Unmatched `?` at this level. */
  ternaries: number;
}

/**
 * Where a statement must go to run exactly when the launch at `[start, end)` runs. `directives` are the
 * preprocessor lines (skipped: a statement never starts inside one).
 */
export function insertionPointFor(
  source: SourceText,
  directives: ReadonlyArray<readonly [number, number]>,
  start: number,
  end: number,
): InsertionPoint {
  const masked = source.masked;
  const inDirective = (i: number) => directives.find(([a, b]) => i >= a && i < b);
  const block = enclosingBlock(masked, start, inDirective);
  const comma = (why: string): InsertionPoint => ({ kind: 'comma', start, end, why });
  if (block < 0 || !opensStatementBlock(masked, block, inDirective)) return comma('not in a function body');

  // At block level: where the current statement starts, and the brace-less control statement it is the body of.
  let statementStart = -1;
  let control: { kind: string; afterHeader: number } | null = null;
  /** A nested `{` at block level that opened a compound statement (its `}` ends a statement). */
  const compound: boolean[] = [];
  /** The last `(...)` closed at block level. */
  let lastParen: { open: number; close: number } | null = null;
  const stack: Frame[] = [{ open: '{', openAt: block, control: null, conditional: false, ternaries: 0 }];
  const top = () => stack[stack.length - 1];
  const atBlockLevel = () => stack.length === 1;
  const beginStatement = () => {
    statementStart = -1;
    top().conditional = false;
    top().ternaries = 0;
  };

  for (let i = block + 1; i < start; i++) {
    const directive = inDirective(i);
    if (directive) {
      i = directive[1] - 1;
      continue;
    }
    const c = masked[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v') continue;
    if (atBlockLevel() && statementStart < 0) statementStart = i;
    if (isIdentCharAt(masked, i) && !isIdentCharAt(masked, i - 1)) {
      let j = i;
      while (j < masked.length && isIdentCharAt(masked, j)) j++;
      const word = masked.slice(i, j);
      if (atBlockLevel() && i === statementStart) {
        if (CONTROL_WITHOUT_HEADER.has(word)) {
          control = { kind: word, afterHeader: j };
          beginStatement();
        } else if (CONTROL_WITH_HEADER.has(word)) {
          let open = skipBlanks(masked, j);
          if (word === 'if' && masked.startsWith('constexpr', open))
            open = skipBlanks(masked, open + 'constexpr'.length);
          if (masked[open] === '(') {
            stack.push({ open: '(', openAt: open, control: word, conditional: false, ternaries: 0 });
            i = open;
            continue;
          }
        } else if (word === 'case' || word === 'default') {
          // A label: the statement starts after its `:`.
          // (A labelled statement that is a control statement's body stays its body: the braces take the label in.)
          const colon = labelColon(masked, j, start);
          if (colon >= 0) {
            i = colon;
            beginStatement();
            continue;
          }
        } else if (isPlainLabel(masked, j)) {
          i = skipBlanks(masked, j);
          beginStatement();
          continue;
        }
      }
      i = j - 1;
      continue;
    }
    if (c === '(' || c === '[') {
      stack.push({ open: c, openAt: i, control: null, conditional: false, ternaries: 0 });
      continue;
    }
    if (c === '{') {
      // A compound statement: at a statement's start, or after `name(...)` (a loop macro, `FOR_EACH(i, n) {`; or a
      // function's body where the brackets before it are not balanced). After `](...)` or `=` it is a lambda or an initializer.
      if (atBlockLevel()) compound.push(i === statementStart || isAfterCall(masked, i, lastParen));
      stack.push({ open: '{', openAt: i, control: null, conditional: false, ternaries: 0 });
      continue;
    }
    if (c === ')' || c === ']' || c === '}') {
      if (stack.length === 1) return comma('unbalanced brackets before the launch');
      const frame = stack.pop()!;
      if (c === ')' && atBlockLevel()) lastParen = { open: frame.openAt, close: i };
      if (atBlockLevel() && frame.control && c === ')') {
        // A control header ends: the next statement is its body.
        control = { kind: frame.control, afterHeader: i + 1 };
        beginStatement();
      } else if (atBlockLevel() && c === '}' && compound.pop()) {
        control = null;
        beginStatement();
      }
      continue;
    }
    if (c === ';') {
      if (atBlockLevel()) {
        control = null;
        beginStatement();
      } else if (top().open !== '{') {
        // A `;` inside brackets (not in a nested block) is a `for` header's, or the brackets are not balanced (code being typed).
        const innerBlock = stack.map((f) => f.open).lastIndexOf('{');
        if (!stack.slice(innerBlock + 1).some((f) => f.control === 'for'))
          return comma('unbalanced brackets before the launch');
      }
      continue;
    }
    const frame = top();
    if (c === ',') {
      if (frame.ternaries === 0) frame.conditional = false;
    } else if (c === '?') {
      frame.conditional = true;
      frame.ternaries++;
    } else if (c === ':') {
      if (masked[i + 1] === ':' || masked[i - 1] === ':') {
        i += masked[i + 1] === ':' ? 1 : 0;
        continue;
      }
      frame.conditional = true;
      if (frame.ternaries > 0) frame.ternaries--;
    } else if ((c === '&' && masked[i + 1] === '&') || (c === '|' && masked[i + 1] === '|')) {
      frame.conditional = true;
      i++;
    }
  }

  if (stack.some((f) => f.control !== null))
    return comma(`in the header of a \`${stack.find((f) => f.control)!.control}\``);
  if (stack.some((f) => f.conditional)) return comma('under a condition inside its statement');
  if (statementStart < 0) statementStart = start;
  const lineStart =
    Math.max(masked.lastIndexOf('\n', statementStart - 1), masked.lastIndexOf('\r', statementStart - 1)) + 1;
  const ownLine = /^[ \t]*$/.test(masked.slice(lineStart, statementStart));
  if (!control) return { kind: 'statement', statementStart, ownLine, braces: null };
  const statementEnd = statementEndAfter(masked, end, inDirective);
  if (statementEnd < 0) return comma('the end of its statement is not in view');
  // Braces on both sides of a preprocessor line could end up in different branches.
  if (directives.some(([a, b]) => b > control!.afterHeader && a < statementEnd))
    return comma('a preprocessor line lies inside the statement');
  return {
    kind: 'statement',
    statementStart,
    ownLine,
    braces: { afterHeader: control.afterHeader, statementEnd, kind: control.kind },
  };
}

/** Whether the `{` at `open` follows `name(...)` or `name<...>(...)` (a lambda's parameters follow `]`). */
function isAfterCall(masked: string, open: number, lastParen: { open: number; close: number } | null): boolean {
  let p = open - 1;
  while (p >= 0 && /\s/.test(masked[p])) p--;
  if (masked[p] !== ')' || !lastParen || lastParen.close !== p) return false;
  let q = lastParen.open - 1;
  while (q >= 0 && /\s/.test(masked[q])) q--;
  return q >= 0 && (isIdentCharAt(masked, q) || masked[q] === '>');
}

function skipBlanks(masked: string, i: number): number {
  while (i < masked.length && /\s/.test(masked[i])) i++;
  return i;
}

/** The innermost `{` before `at` that is still open there, or -1 (braces in directives do not count). */
function enclosingBlock(
  masked: string,
  at: number,
  inDirective: (i: number) => readonly [number, number] | undefined,
): number {
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    const c = masked[i];
    if (c !== '{' && c !== '}') continue;
    const directive = inDirective(i);
    if (directive) {
      i = directive[0];
      continue;
    }
    if (c === '}') depth++;
    else if (depth === 0) return i;
    else depth--;
  }
  return -1;
}

/**
 * Whether the `{` at `open` opens a block of statements (a function or lambda body, a compound statement),
 * not a namespace, a class or an initializer: it follows a `)`, a statement's end, a label, `else`, `do`,
 * `try`, or a function's trailing specifiers.
 */
function opensStatementBlock(
  masked: string,
  open: number,
  inDirective: (i: number) => readonly [number, number] | undefined,
): boolean {
  let i = open - 1;
  for (;;) {
    while (i >= 0 && /\s/.test(masked[i])) i--;
    const directive = i >= 0 ? inDirective(i) : undefined;
    if (!directive) break;
    i = directive[0] - 1;
  }
  if (i < 0) return false;
  const c = masked[i];
  // `]`: a lambda without parameters (`[&] { ... }`).
  if (c === ')' || c === ']' || c === ';' || c === '{' || c === '}') return true;
  if (c === ':') return masked[i - 1] !== ':';
  if (!isIdentCharAt(masked, i)) return false;
  let j = i;
  while (j > 0 && isIdentCharAt(masked, j - 1)) j--;
  const word = masked.slice(j, i + 1);
  if (['else', 'do', 'try', 'const', 'noexcept', 'override', 'final', 'mutable', 'volatile'].includes(word))
    return true;
  // `-> T {` (a trailing return type) or `) __attribute__ {`: a function body when a `)` comes before the words.
  for (let k = j - 1; k >= 0; k--) {
    const d = masked[k];
    if (d === ')')
      return !/(?:namespace|struct|class|union|enum)\s[^)]*$/.test(masked.slice(Math.max(0, k - 200), open));
    if (d === ';' || d === '{' || d === '}' || d === '=') return false;
  }
  return false;
}

/** The `:` ending a `case ...`/`default` label that starts at `from`, or -1. */
function labelColon(masked: string, from: number, limit: number): number {
  let depth = 0;
  for (let i = from; i < limit; i++) {
    const c = masked[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ';' || c === '{' || c === '}') return -1;
    else if (c === ':' && depth === 0) {
      if (masked[i + 1] === ':') {
        i++;
        continue;
      }
      return i;
    }
  }
  return -1;
}

/** `name :` (not `name ::`) right after the identifier ending at `end`: a label. */
function isPlainLabel(masked: string, end: number): boolean {
  const i = skipBlanks(masked, end);
  return masked[i] === ':' && masked[i + 1] !== ':';
}

/** The offset just past the `;` that ends the statement the launch ending at `from` is in, or -1. */
function statementEndAfter(
  masked: string,
  from: number,
  inDirective: (i: number) => readonly [number, number] | undefined,
): number {
  let depth = 0;
  for (let i = from; i < masked.length; i++) {
    const directive = inDirective(i);
    if (directive) {
      i = directive[1] - 1;
      continue;
    }
    const c = masked[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return -1;
      depth--;
    } else if (c === ';' && depth === 0) return i + 1;
  }
  return -1;
}
