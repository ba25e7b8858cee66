/** The pure core imports nothing that ties it to an editor, the file system or processes. */
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const CORE = path.resolve(__dirname, '..', '..', '..', 'server', 'src', 'core');
const FORBIDDEN = /^(vscode|vscode-languageserver(\/.*)?|vscode-languageclient(\/.*)?|(node:)?fs(\/promises)?|(node:)?child_process)$/;

describe('pure core', () => {
  const files = (readdirSync(CORE, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).sort();

  it('has modules to check', () => {
    assert.ok(files.length >= 10, files.join(', '));
  });

  for (const file of files) {
    it(`${file} imports no vscode, vscode-languageserver, fs or child_process`, () => {
      const text = readFileSync(path.join(CORE, file), 'utf8');
      const imports = [...text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);
      const bad = imports.filter((i) => FORBIDDEN.test(i));
      assert.deepEqual(bad, [], `${file} imports ${bad.join(', ')}`);
    });
  }
});
