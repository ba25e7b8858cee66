/**
 * Macro uses in code, read as the compiler reads them: expanded through the unit's macros at that
 * point (preprocess/), spelled out, and parsed on their own by the same grammar, every piece of the
 * expansion mapped back to where it stands in the file (an argument to its own place, a body's
 * tokens to the use). A macro the unit knows several definitions of expands once per definition.
 */
import type { Node as SyntaxNode, Tree } from 'web-tree-sitter';
import type { Range } from './expr';
import { BODY_PLACEHOLDER, type ExpandedExpression, type MacroHooks } from './expr-builder';
import type { ExpandedSnippetLike } from './function-ir';
import { tokenize } from '../preprocess/tokens';
import { expandTokens, ExpansionLimit, toExpand, type MacroDef, type XToken } from '../preprocess/macro-expansion';
import type { MacroScope } from '../preprocess/unit';

export interface SnippetParser {
  parseApart(text: string): Tree;
}

/** At most this many configurations of one use are read (the rest make it unknown). */
const MAX_CONFIGURATIONS = 8;

const EXPRESSION_PREFIX = 'auto __occupancy_lens_value = (';
const STATEMENTS_PREFIX = 'void __occupancy_lens_block() {\n';

/**
 * The macro hooks of one file of a unit: `text` is the file's view, `scopeAt` the unit's macros
 * at an offset of it. Trees of the expansions live until `dispose`.
 */
export class UnitMacroHooks implements MacroHooks {
  private readonly trees: Tree[] = [];

  constructor(
    private readonly parser: SnippetParser,
    private readonly text: string,
    private readonly scopeAt: (offset: number) => MacroScope,
  ) {}

  dispose(): void {
    for (const t of this.trees) t.delete();
    this.trees.length = 0;
  }

  isMacro(name: string, offset: number): boolean {
    const state = this.scopeAt(offset).state(name);
    return state.options.some((o) => o !== null && o.body !== null);
  }

  expandExpression(start: number, end: number): ExpandedExpression[] | null {
    const configurations = this.configurations(start, end);
    if (!configurations) return null;
    const out: ExpandedExpression[] = [];
    for (const { tokens, head } of configurations) {
      const { text, map } = spelled(tokens, EXPRESSION_PREFIX.length, [start, end]);
      const tree = this.parse(`${EXPRESSION_PREFIX}${text});`);
      const value = tree.rootNode.namedChildren[0]?.childForFieldName('declarator')?.childForFieldName('value');
      const inner = value?.type === 'parenthesized_expression' ? value.namedChildren[0] : null;
      if (!inner || inner.hasError) return null;
      out.push({ node: inner, map, origin: head ? { name: head.name, file: head.file, defAt: head.at } : null });
    }
    return out;
  }

  expand(start: number, end: number, _kind: 'statements', body?: SyntaxNode): ExpandedSnippetLike[] | null {
    const configurations = this.configurations(start, end);
    if (!configurations) return null;
    const out: ExpandedSnippetLike[] = [];
    for (const { tokens, head } of configurations) {
      const { text, map } = spelled(tokens, STATEMENTS_PREFIX.length, [start, end]);
      const tree = this.parse(`${STATEMENTS_PREFIX}${text}${body ? ` ${BODY_PLACEHOLDER};` : ''}\n}`);
      const block = tree.rootNode.namedChildren[0]?.childForFieldName('body');
      if (!block) return null;
      out.push({
        statements: block.namedChildren.filter((c): c is SyntaxNode => !!c),
        map,
        body: body ?? null,
        origin: head ? { name: head.name, file: head.file, defAt: head.at } : null,
      });
    }
    return out;
  }

  /** A file-scope use expanded (the configuration the view has) and spelled out, with its map; null when it cannot be. */
  expandDeclarations(start: number, end: number): { text: string; map: (s: number, e: number) => Range } | null {
    const configurations = this.configurations(start, end);
    if (!configurations || configurations.length === 0) return null;
    return spelled(configurations[0].tokens, 0, [start, end]);
  }

  private parse(text: string): Tree {
    const tree = this.parser.parseApart(text);
    this.trees.push(tree);
    return tree;
  }

  /**
   * The use's tokens expanded once per configuration of the macros it reads that the unit cannot
   * tell apart; null when there are too many or the expansion goes past its bounds.
   */
  private configurations(start: number, end: number): Array<{ tokens: XToken[]; head: MacroDef | null }> | null {
    const scope = this.scopeAt(start);
    const tokens = toExpand(tokenize(this.text, start, end));
    const headName = tokens[0]?.kind === 'ident' ? tokens[0].text : null;
    const several = new Map<string, Array<MacroDef | null>>();
    const pick = (choice: Map<string, MacroDef | null> | null) => (name: string) => {
      const state = scope.state(name);
      const known = state.options.filter((o) => o === null || o.body !== null);
      if (known.length > 1 && !several.has(name)) several.set(name, known);
      if (choice?.has(name)) return choice.get(name)!;
      return known[0] ?? null;
    };
    try {
      const first = expandTokens(tokens, pick(null));
      const head = (choice: Map<string, MacroDef | null> | null) => (headName ? pick(choice)(headName) : null);
      if (several.size === 0) return [{ tokens: first, head: head(null) }];
      const names = [...several.keys()];
      let count = 1;
      for (const n of names) count *= several.get(n)!.length;
      if (count > MAX_CONFIGURATIONS) return null;
      const out: Array<{ tokens: XToken[]; head: MacroDef | null }> = [];
      for (let c = 0; c < count; c++) {
        let rest = c;
        const choice = new Map<string, MacroDef | null>();
        for (const n of names) {
          const options = several.get(n)!;
          choice.set(n, options[rest % options.length]);
          rest = Math.floor(rest / options.length);
        }
        out.push({ tokens: expandTokens(tokens, pick(choice)), head: head(choice) });
      }
      return out;
    } catch (e) {
      if (e instanceof ExpansionLimit) return null;
      throw e;
    }
  }
}

/**
 * Tokens written out, with a map from a range of the parsed text (which starts with `prefix`
 * characters of wrapping) to the file: the smallest range holding the tokens it covers.
 */
function spelled(
  tokens: readonly XToken[],
  prefix: number,
  use: Range,
): { text: string; map: (s: number, e: number) => Range } {
  let text = '';
  const starts: number[] = [];
  const ends: number[] = [];
  for (let k = 0; k < tokens.length; k++) {
    if (k > 0) text += ' ';
    starts.push(prefix + text.length);
    text += tokens[k].text;
    ends.push(prefix + text.length);
  }
  const map = (s: number, e: number): Range => {
    let lo = Infinity;
    let hi = -Infinity;
    for (let k = 0; k < tokens.length; k++) {
      if (ends[k] <= s || starts[k] >= e) continue;
      lo = Math.min(lo, tokens[k].start);
      hi = Math.max(hi, tokens[k].end);
    }
    return lo === Infinity ? use : [lo, hi];
  };
  return { text, map };
}
