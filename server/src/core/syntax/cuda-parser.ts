/**
 * The CUDA parser: web-tree-sitter with the tree-sitter-cuda grammar. The wasm
 * bytes are handed in by the caller (the core reads no files), so the server,
 * the CLI and the tests each load them from where they live.
 */
import { Language, Parser, type Tree } from 'web-tree-sitter';
import { counter, memoByObject, once } from '../incremental/kept-tables';
import { keepAlive } from '../incremental/engine-seams';
import { subtreeShape } from './subtree-shape';

export interface GrammarBytes {
  /** web-tree-sitter's runtime, `tree-sitter.wasm`. */
  runtime: Uint8Array;
  /** The CUDA grammar, `tree-sitter-cuda.wasm`. */
  grammar: Uint8Array;
}

export interface TextEdit {
  startIndex: number;
  oldEndIndex: number;
  newEndIndex: number;
  startPosition: { row: number; column: number };
  oldEndPosition: { row: number; column: number };
  newEndPosition: { row: number; column: number };
}

export interface CudaParser {
  /**
   * Parse from scratch, or incrementally when `oldTree` was edited to match
   * `text` (an edit that starts right after a `\r` must start at that `\r`:
   * whether it ends a line depends on the character after it).
   */
  parse(text: string, oldTree?: Tree): Tree;
  /**
   * An incremental parse that is not parsed again from scratch where it may differ from a fresh
   * parse (error recovery near the edit): `settled` is false then, and a fresh parse elsewhere (a
   * worker thread) can tell whether it does, by comparing `treeShape`s.
   */
  parseIncremental?(text: string, oldTree: Tree): { tree: Tree; settled: boolean };
  /** A piece of code parsed on its own (a macro's expansion, one function of a header): not a document's parse. */
  parseApart(text: string): Tree;
  dispose(): void;
}

/** Characters handed to an incremental parse per read: about 25% faster than whole-string reads on a 35k-line file. */
const INCREMENTAL_READ = 256;

/** web-tree-sitter's WebAssembly runtime: one per process, started by the first parser's bytes. */
const runtime = once('tree-sitter runtime', (wasmBinary: Uint8Array) => Parser.init({ wasmBinary } as object));
const loadLanguage = memoByObject('tree-sitter grammars', (grammar: Uint8Array) => Language.load(grammar));

export async function createCudaParser(bytes: GrammarBytes): Promise<CudaParser> {
  await runtime(bytes.runtime);
  const parser = new Parser();
  parser.setLanguage(await loadLanguage(bytes.grammar));
  keepShapesAlive(parser);
  // Read in small pieces when re-parsing: it reads a few tokens at each place the edit reaches,
  // and a whole string is copied into the parser 5,000 characters at a time.
  const reparse = (input: string, oldTree: Tree) =>
    parser.parse((index: number) => input.slice(index, index + INCREMENTAL_READ), oldTree);
  const incremental = (text: string, oldTree: Tree): { tree: Tree; settled: boolean } => {
    const input = treeLines(text);
    const tree = parsed(reparse(input, oldTree));
    // After error recovery an incremental parse can differ from a fresh one
    // (tree-sitter/tree-sitter#1444, #633): it is settled only where it cannot depend on the
    // edits that led to it (see settledAround).
    if (!(oldTree.rootNode.hasError || tree.rootNode.hasError) || settledAround(oldTree, tree))
      return { tree, settled: true };
    // Again, the edited top-level items read token by token (nothing in them reused).
    const reread = rereadEdited(oldTree);
    if (!reread) return { tree, settled: false };
    const again = parsed(reparse(input, oldTree));
    if (settledAround(oldTree, again, reread)) {
      tree.delete();
      return { tree: again, settled: true };
    }
    again.delete();
    return { tree, settled: false };
  };
  return {
    parse(text, oldTree) {
      if (!oldTree) {
        countFromScratch();
        return parsed(parser.parse(treeLines(text)));
      }
      const { tree, settled } = incremental(text, oldTree);
      if (settled) return tree;
      tree.delete();
      countFromScratch();
      return parsed(parser.parse(treeLines(text)));
    },
    parseIncremental(text, oldTree) {
      return incremental(text, oldTree);
    },
    parseApart(text) {
      return parsed(parser.parse(treeLines(text)));
    },
    dispose() {
      parser.delete();
    },
  };
}

function parsed(tree: Tree | null): Tree {
  if (!tree) throw new Error('tree-sitter returned no tree');
  return tree;
}

/**
 * The tree's shape where error recovery could make two parses of one text differ (see
 * subtreeShape): equal for an incremental parse and a fresh one exactly when they agree.
 */
export function treeShape(tree: Tree): string {
  return subtreeShape(tree.rootNode);
}

/** Parses of a whole text from scratch, for tests of when an incremental parse is kept. */
const countFromScratch = counter('parses from scratch');

/** tree-sitter's parse state of a node built while the parser held more than one version (fragile). */
const NO_STATE = 65535;

/**
 * Whether an incremental parse with errors is the one a fresh parse gives: everything it built
 * again (the edited top-level items and the ranges whose structure changed) lies in top-level
 * items that are not fragile (built while the parser held one version), between items that are
 * not either, and either has no error or lies in the items `reread` made it build again whole
 * (nothing of the old tree reused in them). The parser then reached
 * that stretch as a fresh parse does, in the one state the unchanged text before it leaves (the
 * old tree was a fresh parse of it), read it as a fresh parse reads it (token by token where it
 * recovered from an error: reusing whole subtrees there is what makes the two differ), and left
 * it in one state into text it parses as before; the errors elsewhere stay as the old tree had them.
 */
function settledAround(old: Tree, now: Tree, reread?: { start: number; end: number } | null): boolean {
  const ranges = old.getChangedRanges(now).map((r) => [r.startIndex, r.endIndex]);
  for (let k = 0; k < old.rootNode.childCount; k++) {
    const child = old.rootNode.child(k)!;
    if (child.hasChanges) ranges.push([child.startIndex, child.endIndex]);
  }
  if (ranges.length === 0) return !old.rootNode.hasChanges || !now.rootNode.hasError;
  const from = Math.min(...ranges.map((r) => r[0]));
  const to = Math.max(...ranges.map((r) => r[1]));
  const root = now.rootNode;
  let first = -1;
  let last = -1;
  for (let k = 0; k < root.childCount; k++) {
    const child = root.child(k)!;
    if (child.endIndex < from || child.startIndex > to) continue;
    if (child.parseState === NO_STATE) return false;
    if (first < 0) first = k;
    last = k;
  }
  if (first < 0) return false;
  const region = { start: root.child(first)!.startIndex, end: root.child(last)!.endIndex };
  if (
    root.children.slice(first, last + 1).some((c) => c!.hasError) &&
    !(reread && reread.start <= region.start && region.end <= reread.end)
  )
    return false;
  const before = first > 0 ? root.child(first - 1) : null;
  const after = last + 1 < root.childCount ? root.child(last + 1) : null;
  return (!before || before.parseState !== NO_STATE) && (!after || after.parseState !== NO_STATE);
}

/**
 * Marks the edited top-level items of an edited tree as changed throughout (an edit that writes
 * them over with themselves), so that a parse with it builds them again token by token: where
 * they lie, or null when the edit touched none.
 */
function rereadEdited(old: Tree): { start: number; end: number } | null {
  const edited = old.rootNode.children.filter((c) => c!.hasChanges);
  if (edited.length === 0) return null;
  const first = edited[0]!;
  const last = edited[edited.length - 1]!;
  old.edit({
    startIndex: first.startIndex,
    oldEndIndex: last.endIndex,
    newEndIndex: last.endIndex,
    startPosition: first.startPosition,
    oldEndPosition: last.endPosition,
    newEndPosition: last.endPosition,
  });
  return { start: first.startIndex, end: last.endIndex };
}

/**
 * A syntax tree's nodes, a cursor and a point, kept for as long as the process runs (see
 * engine-seams.ts). Between two keystrokes no syntax node is alive, so each full collection used
 * to discard the optimized tree walks (web-tree-sitter's accessors and every pass over the tree),
 * compiled again over the next few keystrokes.
 */
const keepShapesAlive = once('syntax node shapes', (parser: Parser): void => {
  const tree = parser.parse('int x;');
  if (!tree) return;
  const root = tree.rootNode;
  const cursor = tree.walk();
  keepAlive([tree, root, root.firstChild, root.startPosition, root.endPosition, cursor, cursor.currentNode]);
});

/**
 * tree-sitter ends rows at `\n` only; LSP and SourceText also end lines at a
 * lone `\r`. A lone `\r` is parsed as `\n` (same length, so offsets hold) to
 * keep node rows and columns equal to LSP positions.
 */
function treeLines(text: string): string {
  return text.includes('\r') ? text.replace(/\r(?!\n)/g, '\n') : text;
}

export type { Tree, Node as SyntaxNode } from 'web-tree-sitter';
