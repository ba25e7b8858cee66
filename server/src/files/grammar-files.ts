/**
 * Where the shipped wasm files are: `dist/wasm/` beside the bundle, or
 * `grammars/` and node_modules when run from the sources (tests). Reading them
 * is the adapter's job; the core gets bytes.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { GrammarBytes } from '../core/analyzer';

const GRAMMAR = 'tree-sitter-cuda.wasm';
const RUNTIME = 'tree-sitter.wasm';

export function locateWasmDir(start = __dirname): string {
  const candidates = [
    path.join(start, '..', 'wasm'), // dist/server -> dist/wasm
    path.join(start, 'wasm'),
  ];
  for (let dir = start, i = 0; i < 6; i++, dir = path.dirname(dir)) {
    candidates.push(path.join(dir, 'dist', 'wasm'), path.join(dir, 'grammars'));
  }
  const found = candidates.find((dir) => existsSync(path.join(dir, GRAMMAR)) && existsSync(path.join(dir, RUNTIME)));
  if (!found) {
    throw new Error(
      `cannot find ${GRAMMAR} and ${RUNTIME} near ${start} (looked in ${candidates.slice(0, 4).join(', ')}, ...): run \`npm run build\``,
    );
  }
  return found;
}

export function readGrammarBytes(dir = locateWasmDir()): GrammarBytes {
  return {
    runtime: new Uint8Array(readFileSync(path.join(dir, RUNTIME))),
    grammar: new Uint8Array(readFileSync(path.join(dir, GRAMMAR))),
  };
}
