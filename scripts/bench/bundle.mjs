// Bundles for the benchmark, built into a temporary directory (never into dist/): the core analysis and
// the ptxas path as one CommonJS module, and an unminified copy of the server for readable CPU profiles.
// Both are unminified and carry a source map, so a profile names functions and files as the sources do
// (keepNames stays off: its __name calls would show up in the profile).
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire, SourceMap } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { SERVER_ENV, SERVER_NODE_ARGS, shebangFor } from '../server-launch.cjs';

// What the server computes per document version (through the facade, core/analyzer.ts: see
// makeOpenDocument in bench.mjs), and the ptxas path.
const CORE_ENTRY = `
export { createCudaParser } from './server/src/core/syntax/cuda-parser';
export { readGrammarBytes } from './server/src/files/grammar-files';
export { analyzeDocument } from './server/src/core/incremental/document-analysis';
export { Analyzer, FIRST_PASS_BUDGET_MS, BACKGROUND_SLICE_MS } from './server/src/core/analyzer';
export { WorkspaceIndex } from './server/src/core/facts/workspace-index';
export { toIndexPath } from './server/src/files/workspace-files';
export { buildDocumentReport, DEFAULT_REPORT_SETTINGS } from './server/src/core/report/document-report';
export { toDiagnostic } from './server/src/lsp/lsp-convert';
export { FiguresRegistry } from './server/src/core/compiler/figures-registry';
export { resolveArchs } from './server/src/core/report/launch-analysis';
export { parseArch } from './server/src/core/gpu/arch-table';
export { analyzeDivergence } from './server/src/core/body/divergence';
export { compileResources } from './server/src/nvcc/compile-resources';
export { compilePtx } from './server/src/nvcc/compile-ptx';
export { modulePressure } from './server/src/core/report/pressure-report';
export { ResourceCache } from './server/src/nvcc/resource-cache';
export { nvccVersion } from './server/src/nvcc/nvcc-runner';
`;

function common(root) {
  return {
    // As scripts/build.mjs: web-tree-sitter's ESM build calls createRequire(import.meta.url).
    define: { SERVER_VERSION: '"bench"', 'import.meta.url': '__importMetaUrl' },
    banner: { js: "const __importMetaUrl = require('url').pathToFileURL(__filename).href;" },
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    minify: false,
    sourcemap: 'external',
    logLevel: 'warning',
    absWorkingDir: root,
  };
}

/** The core (parser, analysis, report, ptxas path) as a module loaded into this process. */
export async function buildCore({ root, outDir }) {
  const outfile = join(outDir, 'bench-core.cjs');
  await esbuild.build({
    ...common(root),
    stdin: { contents: CORE_ENTRY, resolveDir: root, sourcefile: 'bench-entry.ts', loader: 'ts' },
    outfile,
  });
  return { path: outfile, module: createRequire(import.meta.url)(outfile) };
}

/** An unminified server with the wasm files beside it (server/server.js, wasm/), as dist/ lays them out. */
export async function buildProfilingServer({ root, outDir }) {
  const outfile = join(outDir, 'server', 'server.js');
  const options = common(root);
  // The shebang dist/server/server.js has: LspClient starts a server the way it says.
  await esbuild.build({
    ...options,
    banner: { js: `${shebangFor(SERVER_NODE_ARGS, SERVER_ENV)}\n${options.banner.js}` },
    entryPoints: ['server/src/server.ts'],
    outfile,
  });
  mkdirSync(join(outDir, 'wasm'), { recursive: true });
  for (const file of ['tree-sitter.wasm', 'tree-sitter-cuda.wasm'])
    copyFileSync(join(root, 'dist', 'wasm', file), join(outDir, 'wasm', file));
  return outfile;
}

/** For a bundle: (line, column), 0-based -> { file, line } in the sources (1-based line), from its source map. */
export function sourceLocator(bundlePath, root) {
  const map = new SourceMap(JSON.parse(readFileSync(`${bundlePath}.map`, 'utf8')));
  return (line, column) => {
    const entry = map.findEntry(line, column);
    if (!entry || !entry.originalSource) return null;
    const file = relative(root, resolve(dirname(bundlePath), entry.originalSource.replace(/^file:\/\//, '')));
    return { file: file.replace(/^.*node_modules\//, 'node_modules/'), line: entry.originalLine + 1 };
  };
}
