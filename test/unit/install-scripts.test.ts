/**
 * `npm ci` quiet: npm 11 lists the dependencies whose install scripts package.json's `allowScripts`
 * does not cover (and npm 12 skips them). Every one in the lockfile is covered: esbuild's and
 * vsce-sign's run (their platform binaries); the native tree-sitter builds do not (the analysis
 * loads the grammar's wasm, never a native binding), nor keytar's (vsce's optional credential
 * store, for publishing).
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli-run';

const json = (name: string) => JSON.parse(readFileSync(path.join(REPO_ROOT, name), 'utf8'));

describe('install scripts of the dependencies', () => {
  it("are each allowed or denied in package.json's allowScripts, the native tree-sitter builds denied", () => {
    const lock = json('package-lock.json') as {
      packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
    };
    const allow = json('package.json').allowScripts as Record<string, boolean>;
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([where, p]) => ({
        name: where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length),
        version: p.version,
      }));
    assert.ok(withScripts.length > 0);
    const uncovered = withScripts.filter(
      (p) => allow[p.name] === undefined && allow[`${p.name}@${p.version}`] === undefined,
    );
    assert.deepEqual(
      uncovered.map((p) => p.name),
      [],
    );
    for (const name of ['tree-sitter-c', 'tree-sitter-cpp', 'tree-sitter-cuda']) assert.equal(allow[name], false, name);
    assert.equal(allow.esbuild, true);
  });
});
