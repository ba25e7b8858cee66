/**
 * The layers import one way. The pure core imports nothing that ties it to an editor, the file
 * system or processes, and keeps no state of its own between calls outside its incremental layer
 * (core/incremental/, where every kept table is registered); the server and the CLI reach the
 * analysis through the facade; the client shares only the protocol module with the server.
 */
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CORE = path.join(ROOT, 'server', 'src', 'core');
const FORBIDDEN =
  /^(vscode|vscode-languageserver(\/.*)?|vscode-languageclient(\/.*)?|vscode-languageserver-textdocument|(node:)?fs(\/promises)?|(node:)?child_process)$/;
/** Packages the core may use: the parser. */
const CORE_PACKAGES = /^web-tree-sitter$/;

const sourcesUnder = (dir: string) =>
  (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).sort();
const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);

/** Top-level declarations that hold state: `let`/`var`, and collections not typed read-only. */
function moduleState(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split('\n')) {
    if (/^(export\s+)?(let|var)\s/.test(line)) found.push(line.trim());
    const collection = /^(export\s+)?const\s+\w+\s*(:\s*([^=]+))?=\s*(new\s+(Map|Set|WeakMap|WeakSet|Array)\b|\[)/.exec(
      line,
    );
    if (collection && !/^(Readonly|readonly\s)/.test((collection[3] ?? '').trim())) found.push(line.trim());
  }
  return found;
}

describe('layering', () => {
  const files = sourcesUnder(CORE);

  it('has core modules to check', () => {
    assert.ok(files.length >= 30, files.join(', '));
  });

  for (const file of files) {
    it(`core/${file} imports no vscode, language server, fs or child_process module, nor anything outside the core but the parser`, () => {
      const imports = importsOf(path.join(CORE, file));
      const bad = imports.filter((i) => FORBIDDEN.test(i) || (!i.startsWith('.') && !CORE_PACKAGES.test(i)));
      const outside = imports.filter(
        (i) => i.startsWith('.') && !path.resolve(path.dirname(path.join(CORE, file)), i).startsWith(CORE),
      );
      assert.deepEqual([...bad, ...outside], [], `${file} imports ${[...bad, ...outside].join(', ')}`);
    });
  }

  for (const file of files.filter((f) => !f.startsWith(`incremental${path.sep}`))) {
    it(`core/${file} keeps no module-level state (that lives in core/incremental/)`, () => {
      assert.deepEqual(moduleState(readFileSync(path.join(CORE, file), 'utf8')), []);
    });
  }

  it('finds module-level state where there is some', () => {
    assert.deepEqual(
      moduleState(
        'let n = 0;\nconst cache = new Map<string, number>();\nconst NAMES: ReadonlySet<string> = new Set();\nconst xs = [];\n  let inner = 1;',
      ),
      ['let n = 0;', 'const cache = new Map<string, number>();', 'const xs = [];'],
    );
  });

  it('the server and the CLI reach the analysis through the facade only', () => {
    for (const entry of [
      'server/src/lsp/cuda-occupancy-server.ts',
      'server/src/cli/check-command.ts',
      'server/src/cli/check-analysis.ts',
      'server/src/cli/check-worker.ts',
    ]) {
      const core = importsOf(path.join(ROOT, entry)).filter((i) => i.includes('/core/'));
      assert.deepEqual(
        core.filter((i) => !/\/core\/(analyzer|types)$/.test(i)),
        [],
        entry,
      );
    }
  });

  it('the client imports nothing from the server but the protocol module', () => {
    const client = path.join(ROOT, 'client', 'src');
    for (const file of sourcesUnder(client)) {
      const fromServer = importsOf(path.join(client, file)).filter((i) => i.includes('server/'));
      assert.deepEqual(
        fromServer.filter((i) => !/server\/src\/protocol$/.test(i)),
        [],
        file,
      );
    }
  });
});
