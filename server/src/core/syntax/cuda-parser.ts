/**
 * The CUDA parser: web-tree-sitter with the tree-sitter-cuda grammar. The wasm
 * bytes are handed in by the caller (the core reads no files), so the server,
 * the CLI and the tests each load them from where they live.
 */
import { Language, Parser, type Tree } from 'web-tree-sitter';
import { memoByObject, once } from '../incremental/kept-tables';
import { keepAlive } from '../incremental/engine-seams';

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
  return {
    parse(text, oldTree) {
      const input = treeLines(text);
      // After error recovery an incremental parse can differ from a fresh one
      // (tree-sitter/tree-sitter#1444, #633): the old tree is reused only
      // between trees without errors, so a version's tree never depends on
      // the edits that led to it.
      const reuse = oldTree && !oldTree.rootNode.hasError ? oldTree : null;
      // Read in small pieces when re-parsing: it reads a few tokens at each place the edit
      // reaches, and a whole string is copied into the parser 5,000 characters at a time.
      let tree = parser.parse(reuse ? (index: number) => input.slice(index, index + INCREMENTAL_READ) : input, reuse);
      if (tree && reuse && tree.rootNode.hasError) {
        tree.delete();
        tree = parser.parse(input);
      }
      if (!tree) throw new Error('tree-sitter returned no tree');
      return tree;
    },
    dispose() {
      parser.delete();
    },
  };
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
