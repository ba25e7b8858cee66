/**
 * The tree-sitter grammar for tests: the wasm bytes from node_modules and a
 * shared parser. `parseCuda(text)` gives the tree a test needs in one call.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  createCudaParser,
  type CudaParser,
  type GrammarBytes,
  type Tree,
} from '../../server/src/core/syntax/cuda-parser';

const ROOT = path.resolve(__dirname, '..', '..', '..');

let bytes: GrammarBytes | null = null;
let parser: Promise<CudaParser> | null = null;

/** The web-tree-sitter runtime and the tree-sitter-cuda grammar, read once. */
export function loadGrammarBytes(): GrammarBytes {
  bytes ??= {
    runtime: fs.readFileSync(path.join(ROOT, 'node_modules', 'web-tree-sitter', 'tree-sitter.wasm')),
    grammar: fs.readFileSync(path.join(ROOT, 'node_modules', 'tree-sitter-cuda', 'tree-sitter-cuda.wasm')),
  };
  return bytes;
}

/** One parser shared by all tests. */
export function getCudaParser(): Promise<CudaParser> {
  parser ??= createCudaParser(loadGrammarBytes());
  return parser;
}

/** Parse `text` with tree-sitter-cuda. */
export async function parseCuda(text: string): Promise<Tree> {
  return (await getCudaParser()).parse(text);
}
