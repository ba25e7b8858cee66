/**
 * The repository stands alone: a clone in an empty folder builds and tests with what it holds and
 * what `npm run test:setup` installs. No script, test, document or source file reaches for a
 * folder beside the checkout (the shared folder the project grew up next to), and CI runs exactly
 * the README's test command.
 */
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..', '..');
/** Build outputs, installed packages and VCS data: not the project's files. */
const SKIP_DIRS = new Set(['.git', 'node_modules', 'out', 'dist', '.vscode-test', '.bench', '.rig']);
const BINARY = /\.(png|jpe?g|gif|wasm|vsix|ico|gz|zip)$/i;

function projectFiles(dir = REPO): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) files.push(...projectFiles(full));
    } else if (entry.isFile() && !BINARY.test(entry.name) && statSync(full).size < 5_000_000) {
      files.push(full);
    }
  }
  return files;
}

// Spelled in pieces, so that this file does not name them itself.
const SHARED = ['..', 'shared'].join('/');
const FORBIDDEN = [
  SHARED,
  ...['vscode-rig', 'oracle', 'cli-contract', 'seeds', 'ux-sketch', 'dev-corpus', 'style.md', 'hooks'].map((name) =>
    ['shared', name].join('/'),
  ),
  ['', 'work', 'shared'].join('/'),
];

describe('the repository stands alone', () => {
  it('has no file that names the shared folder beside the checkout, its VS Code rig, its oracle or its notes', () => {
    const files = projectFiles();
    assert.ok(files.length > 100, `found only ${files.length} files under ${REPO}`);
    const hits: string[] = [];
    for (const file of files) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        const found = FORBIDDEN.find((f) => line.includes(f));
        if (found) hits.push(`${path.relative(REPO, file)}:${i + 1}: ${found}`);
      });
    }
    assert.deepEqual(hits, []);
  });

  it("CI (.ci/run) runs exactly the README's test command", () => {
    const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('Run the tests'));
    const command = /```sh\n(.+)\n```/.exec(section)?.[1];
    assert.equal(command, 'npm ci && npm run test:setup && npm test');
    const ci = readFileSync(path.join(REPO, '.ci', 'run'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.trim().startsWith('#'));
    assert.equal(ci.filter((l) => /^\s*npm\b/.test(l)).join('\n'), command, 'the one npm line of .ci/run');
  });

  it('sets the test rig up with its own script, from npm and apt only', () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    assert.equal(pkg.scripts['test:setup'], 'bash scripts/setup-test-rig.sh');
    const setup = readFileSync(path.join(REPO, 'scripts', 'setup-test-rig.sh'), 'utf8');
    // Downloads come through npm and apt-get; nothing fetches a URL itself.
    assert.doesNotMatch(setup, /\b(curl|wget)\b|https?:\/\//);
  });
});
