// One build for everything that ships: the client, the server and the CLI bundled
// into dist/, with the tree-sitter runtime and the CUDA grammar copied beside them.
// Usage: node scripts/build.mjs [--watch] [--minify]
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_ENV, SERVER_NODE_ARGS, shebangFor } from './server-launch.cjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const watch = process.argv.includes('--watch');
const minify = !process.argv.includes('--no-minify');

function copyVerified(from, to, sha256) {
  const bytes = readFileSync(from);
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== sha256) {
    throw new Error(`${from}: sha256 ${actual} does not match the pinned ${sha256} (grammars/tree-sitter-cuda.json)`);
  }
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}

const lock = JSON.parse(readFileSync(join(root, 'grammars/tree-sitter-cuda.json'), 'utf8'));
rmSync(join(root, 'dist'), { recursive: true, force: true });
const grammarFrom = join(root, 'node_modules', lock.package, lock.file);
const runtimeFrom = join(root, 'node_modules', lock.runtime.package, lock.runtime.file);
copyVerified(grammarFrom, join(root, 'grammars', lock.file), lock.sha256);
copyVerified(runtimeFrom, join(root, 'grammars', lock.runtime.file), lock.runtime.sha256);
copyVerified(grammarFrom, join(root, 'dist/wasm', lock.file), lock.sha256);
copyVerified(runtimeFrom, join(root, 'dist/wasm', lock.runtime.file), lock.runtime.sha256);

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const common = {
  // web-tree-sitter's ESM build calls createRequire(import.meta.url): give the CommonJS bundle that URL.
  define: {
    SERVER_VERSION: JSON.stringify(pkg.version),
    SERVER_NODE_ARGS: JSON.stringify(SERVER_NODE_ARGS),
    SERVER_ENV: JSON.stringify(SERVER_ENV),
    'import.meta.url': '__importMetaUrl',
  },
  banner: { js: "const __importMetaUrl = require('url').pathToFileURL(__filename).href;" },
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  minify,
  logLevel: 'warning',
  absWorkingDir: root,
};
const serverShebang = { js: `${shebangFor(SERVER_NODE_ARGS, SERVER_ENV)}\n${common.banner.js}` };
const shebang = { js: `${shebangFor([])}\n${common.banner.js}` };
const builds = [
  { ...common, entryPoints: ['client/src/extension.ts'], outfile: 'dist/client/extension.js', external: ['vscode'] },
  { ...common, entryPoints: ['server/src/server.ts'], outfile: 'dist/server/server.js', banner: serverShebang },
  // Beside the server, which starts it as a worker thread (see server/src/lsp/fresh-parses.ts).
  { ...common, entryPoints: ['server/src/lsp/fresh-parse-thread.ts'], outfile: 'dist/server/fresh-parse-thread.js' },
  // The connection's thread, which answers from completed analyses (see server/src/lsp/answer-thread.ts).
  { ...common, entryPoints: ['server/src/lsp/answer-thread.ts'], outfile: 'dist/server/answer-thread.js' },
  { ...common, entryPoints: ['server/src/cli/main.ts'], outfile: 'dist/cli/cuda-occupancy.js', banner: shebang },
  // check's worker threads (check-workers.ts starts them from beside the CLI).
  { ...common, entryPoints: ['server/src/cli/check-worker.ts'], outfile: 'dist/cli/check-worker.js' },
  // The chart webview's script: a browser bundle with Chart.js in it (no network; the CSP allows only this file).
  {
    ...common,
    entryPoints: ['client/src/chart/chart-view.ts'],
    outfile: 'dist/client/chart-view.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    banner: {},
    define: { 'process.env.NODE_ENV': '"production"' },
  },
];

if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
  console.log('watching for changes');
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
  console.log('built dist/ (client, server, cli, wasm)');
}
