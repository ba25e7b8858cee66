/**
 * The layers import one way. The pure core imports nothing that ties it to an editor, the file
 * system or processes, and keeps no state of its own between calls outside its incremental layer
 * (core/incremental/, where every kept table is registered); the server and the CLI reach the
 * analysis through the facade; the client shares only the protocol module with the server.
 */
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import * as protocol from '../../server/src/protocol';
import * as format from '../../server/src/core/report/format';

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

  it('the server, the CLI, the workers, nvcc/ and files/ reach the core through the facade only', () => {
    const SERVER = path.join(ROOT, 'server', 'src');
    const adapters = ['lsp', 'cli', 'nvcc', 'files'].flatMap((dir) =>
      sourcesUnder(path.join(SERVER, dir)).map((f) => path.join(dir, f)),
    );
    const outside = readdirSync(SERVER).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
    assert.ok(adapters.includes(path.join('lsp', 'cuda-occupancy-server.ts')) && adapters.length > 50, adapters.join());
    const below: string[] = [];
    for (const file of [...adapters, ...outside]) {
      for (const i of importsOf(path.join(SERVER, file)))
        if (/(^|\/)core\//.test(i) && !/(^|\/)core\/(analyzer|types)$/.test(i)) below.push(`${file} imports ${i}`);
    }
    assert.deepEqual(below, []);
  });

  it('the client bundle holds no core code (protocol.ts passes the core types only)', async () => {
    for (const entry of ['client/src/extension.ts', 'client/src/chart/chart-view.ts']) {
      const { metafile } = await esbuild.build({
        entryPoints: [entry],
        bundle: true,
        write: false,
        metafile: true,
        external: ['vscode'],
        platform: 'node',
        absWorkingDir: ROOT,
        outdir: path.join(ROOT, 'out', 'client-bundle-check'),
        logLevel: 'silent',
      });
      const inputs = Object.keys(metafile.inputs);
      assert.ok(inputs.includes('server/src/protocol.ts'), `${entry}: ${inputs.join(', ')}`);
      assert.deepEqual(
        inputs.filter((i) => i.startsWith('server/src/core/')),
        [],
        entry,
      );
    }
  });

  it("protocol.ts's display helpers write what the core's do", () => {
    assert.deepEqual(protocol.LIMIT_NAMES, format.LIMIT_NAMES);
    for (const n of [0, 1, 512, 1023, 1024, 1536, 10 * 1024, 10 * 1024 + 1, 48 * 1024, 228 * 1024 + 17])
      assert.equal(protocol.bytes(n), format.bytes(n), String(n));
    for (const f of [0, 0.125, 1 / 3, 0.5, 2 / 3, 0.875, 1])
      assert.equal(protocol.percent(f), format.percent(f), String(f));
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
