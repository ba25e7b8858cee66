/**
 * A kernel whose braces a preprocessor branch splits (`#ifdef P` / `if (a) {` / `#else` / `{` /
 * `#endif`) parses with errors: tree-sitter reads both branches as one text, and the statements
 * after it land inside the wrong `if`. For the thread-dependence walk such a kernel is parsed again
 * with one branch of each `#if` group inside it kept, the one a build without `-D` options compiles
 * (`#ifdef P` with `P` defined nowhere in the file: the `#else`), and the others blanked to spaces,
 * so that every offset, line and column stays where it was. Only the definition is parsed again;
 * the new tree is used only when it reads the kernel without an error.
 */
import { Parser, type Language, type Tree, type Node as SyntaxNode } from 'web-tree-sitter';
import { memoByObject } from '../incremental/kept-tables';

/** One parser per grammar, made when a kernel first needs one. */
const parserFor = memoByObject('reparse parsers', (language: Language) => new Parser().setLanguage(language));

/**
 * A tree of `text` in which the `#if` groups of a kernel's definition (its node, or the offsets of
 * its text when the parse lost it in an error) keep one branch each, or null when the definition
 * has no error, holds no group, or still has an error that way. The caller deletes the tree.
 */
export function reparseSplitBranches(
  tree: Tree,
  text: string,
  definition: SyntaxNode | { startIndex: number; endIndex: number },
): Tree | null {
  if ('hasError' in definition && !definition.hasError) return null;
  const { startIndex: start, endIndex: end } = definition;
  const region = text.slice(start, end);
  if (!/^[ \t]*#[ \t]*(if|ifdef|ifndef)\b/m.test(region)) return null;
  const variant = keepOneBranch(text, start, end);
  if (variant === text) return null;
  // Only the definition's text is parsed (at its own offsets, lines and columns): what a branch
  // keeps inside it does not change how the rest of the file parses, and a 10k-line file is not
  // parsed again for each such kernel. Its calls are followed into the file's tree.
  const reparsed = parserFor(tree.language).parse(variant, null, {
    includedRanges: [
      { startIndex: start, endIndex: end, startPosition: pointAt(text, start), endPosition: pointAt(text, end) },
    ],
  });
  if (!reparsed) return null;
  const again = reparsed.rootNode.descendantForIndex(start, Math.max(start, end - 1));
  let node: SyntaxNode | null = again;
  while (node && !(node.startIndex <= start && node.endIndex >= end)) node = node.parent;
  if (!node || node.hasError) {
    reparsed.delete();
    return null;
  }
  return reparsed;
}

/** tree-sitter's point of an offset: rows end at `\n`. */
function pointAt(text: string, offset: number): { row: number; column: number } {
  let row = 0;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    row++;
    lineStart = i + 1;
  }
  return { row, column: offset - lineStart };
}

/** `text` with, between `start` and `end`, every `#if` group reduced to the branch a plain build compiles (the rest, directives included, blanked). */
export function keepOneBranch(text: string, start: number, end: number): string {
  const defined = new Set([...text.matchAll(/^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)/gm)].map((m) => m[1]));
  // Only the characters between `start` and `end` change.
  const chars = text.slice(start, end).split('');
  const blank = (from: number, to: number) => {
    for (let i = Math.max(from, start); i < Math.min(to, end); i++)
      if (chars[i - start] !== '\n' && chars[i - start] !== '\r') chars[i - start] = ' ';
  };
  // A stack of open groups: whether the branch being read is kept, and whether one was kept already.
  const stack: Array<{ keeping: boolean; taken: boolean; outer: boolean }> = [];
  const keepingNow = () => stack.every((g) => g.keeping);
  const lineRe = /^[^\n]*(\n|$)/gm;
  lineRe.lastIndex = start;
  for (let m = lineRe.exec(text); m && m.index < end; m = lineRe.exec(text)) {
    if (m[0].length === 0) break;
    const lineStart = m.index;
    const lineEnd = lineStart + m[0].length;
    const directive = /^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$/.exec(m[0].replace(/\r?\n$/, ''));
    if (directive) {
      const [, kind, rest] = directive;
      if (kind === 'if' || kind === 'ifdef' || kind === 'ifndef') {
        const value =
          kind === 'ifdef'
            ? defined.has(rest.trim())
            : kind === 'ifndef'
              ? !defined.has(rest.trim())
              : evaluateCondition(rest, defined);
        const keep = value !== false;
        stack.push({ keeping: keep, taken: keep, outer: keepingNow() });
      } else if (stack.length > 0) {
        const group = stack[stack.length - 1];
        if (kind === 'endif') stack.pop();
        else if (kind === 'else') {
          group.keeping = !group.taken;
          group.taken = true;
        } else {
          const value = evaluateCondition(rest, defined);
          group.keeping = !group.taken && value !== false;
          group.taken ||= group.keeping;
        }
      }
      blank(lineStart, lineEnd);
      continue;
    }
    if (!keepingNow()) blank(lineStart, lineEnd);
  }
  return text.slice(0, start) + chars.join('') + text.slice(end);
}

/**
 * A `#if`/`#elif` condition where it can be told without the build's options: `0`, `1`,
 * `defined(X)`, `!defined(X)` with `X` defined or not in the file; null (kept, as the first branch
 * would be) for anything else.
 */
function evaluateCondition(condition: string, defined: ReadonlySet<string>): boolean | null {
  const c = condition.replace(/\/\/.*$|\/\*.*?\*\//g, '').trim();
  if (/^0+$/.test(c)) return false;
  if (/^[1-9]\d*$/.test(c)) return true;
  const d = /^(!)?\s*defined\s*\(?\s*([A-Za-z_]\w*)\s*\)?$/.exec(c);
  if (d) return Boolean(d[1]) !== defined.has(d[2]);
  return null;
}
