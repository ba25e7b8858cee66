/**
 * The npm package: what `npm pack` puts in it (.npmignore), and that it installs with
 * `npm install -g` and runs as `cuda-occupancy` and `cuda-occupancy-lsp` from there.
 * Needs a build (dist/); runs npm offline from a local tarball (the package has no dependencies).
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LspSession, REPO_ROOT } from '../support/lsp-session';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  dependencies?: Record<string, string>;
};

function npmJson(
  args: string[],
  cwd: string,
): Array<{ filename: string; files: Array<{ path: string; size: number }> }> {
  const out = execFileSync(npm, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  return JSON.parse(out.slice(out.indexOf('[')));
}

describe('the npm package', function () {
  this.timeout(120_000);

  it('ships the bundles, both wasm files, README.md and LICENSE, and nothing from the sources or tests', () => {
    const [pack] = npmJson(['pack', '--dry-run', '--json'], REPO_ROOT);
    const files = pack.files.map((f) => f.path).sort();
    for (const needed of [
      'dist/cli/cuda-occupancy.js',
      'dist/cli/check-worker.js',
      'dist/server/server.js',
      'dist/wasm/tree-sitter.wasm',
      'dist/wasm/tree-sitter-cuda.wasm',
      'README.md',
      'LICENSE',
      'package.json',
    ]) {
      assert.ok(files.includes(needed), `${needed} is not in the package: ${files.join(', ')}`);
    }
    for (const bin of Object.values(pkg.bin))
      assert.ok(files.includes(bin.replace(/^\.\//, '')), `bin ${bin} is not in the package`);
    const unwanted = files.filter(
      (f) =>
        /^(src|server|client|test|out|node_modules|scripts|grammars|examples|\.ci)\//.test(f) ||
        /\.(ts|map)$/.test(f) ||
        /^\.|\/\./.test(f),
    );
    assert.deepEqual(unwanted, [], 'sources, tests, source maps or dotfiles in the package');
    assert.deepEqual(
      pkg.dependencies ?? {},
      {},
      'the bundles carry their dependencies: the package needs none at run time',
    );
  });

  it('installs with npm install -g and runs the CLI and the language server from there', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-npm-'));
    try {
      const [pack] = npmJson(['pack', '--json', '--pack-destination', dir], REPO_ROOT);
      const tarball = path.join(dir, pack.filename);
      const prefix = path.join(dir, 'prefix');
      execFileSync(
        npm,
        ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball],
        { stdio: 'pipe', env: { ...process.env, npm_config_update_notifier: 'false' } },
      );
      const binDir = process.platform === 'win32' ? prefix : path.join(prefix, 'bin');
      const cli = path.join(binDir, 'cuda-occupancy');
      const lsp = path.join(binDir, 'cuda-occupancy-lsp');
      assert.ok(existsSync(cli) && existsSync(lsp), 'both bins are linked');

      const version = spawnSync(cli, ['--version'], { encoding: 'utf8' });
      assert.equal(version.status, 0, version.stderr);
      assert.equal(version.stdout.trim(), `cuda-occupancy ${pkg.version}`);

      const calc = spawnSync(cli, ['calc', '--arch', 'sm_90', '--block', '256', '--regs', '64', '--json'], {
        encoding: 'utf8',
      });
      assert.equal(calc.status, 0, calc.stderr);
      assert.equal(JSON.parse(calc.stdout).occupancy, 0.5);

      // check needs the grammar wasm from the installed package's dist/wasm.
      const check = spawnSync(
        cli,
        ['check', '--no-nvcc', '--format', 'json', path.join(REPO_ROOT, 'examples', 'reduce.cu')],
        { encoding: 'utf8', cwd: dir },
      );
      assert.equal(check.status, 1, check.stderr);
      const codes = JSON.parse(check.stdout).files[0].diagnostics.map((d: { code: string }) => d.code);
      assert.ok(codes.includes('launch-exceeds-bounds'), codes.join(', '));
      // Its worker threads too: the worker's bundle ships beside the CLI's.
      const examples = ['check', '--no-nvcc', '--format', 'json', path.join(REPO_ROOT, 'examples')];
      const onWorkers = spawnSync(cli, [...examples, '--jobs', '2'], {
        encoding: 'utf8',
        cwd: dir,
        env: { ...process.env, CUDA_OCCUPANCY_WORKER_MIN_BYTES: '0' },
      });
      const inProcess = spawnSync(cli, [...examples, '--jobs', '1'], { encoding: 'utf8', cwd: dir });
      assert.equal(onWorkers.status, inProcess.status, onWorkers.stderr);
      assert.equal(onWorkers.stdout, inProcess.stdout);

      // Run through its shebang (`env -S` with the server's environment and Node options), as an editor starts it.
      const lspVersion = spawnSync(lsp, ['--version'], { encoding: 'utf8' });
      assert.equal(lspVersion.status, 0, lspVersion.stderr);
      assert.equal(lspVersion.stdout.trim(), `cuda-occupancy-lsp ${pkg.version}`);

      const session = await LspSession.start({ serverPath: realpathSync(lsp), rootDir: dir });
      try {
        assert.equal(session.initializeResult.serverInfo?.name, 'cuda-occupancy-lsp');
        assert.equal(session.initializeResult.capabilities.hoverProvider, true);
      } finally {
        await session.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
