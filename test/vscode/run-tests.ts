/**
 * Runs the extension's suite in a real VS Code. VS Code cannot be downloaded on
 * our machines, so by default runTests is pointed at test/rig/code-server-shim.mjs
 * (code-server 4.100.3 = VS Code 1.100.3, in Debian's chromium, headless), which
 * `npm run test:setup` installs. Where VS Code can be downloaded,
 * VSCODE_TEST_DOWNLOAD=1 runs the same suite with the ordinary runTests.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';

const repo = path.resolve(__dirname, '..', '..', '..');
const shim = process.env.VSCODE_TEST_SHIM ?? path.join(repo, 'test', 'rig', 'code-server-shim.mjs');
const rigDir = process.env.RIG_DIR ?? '/tmp/rig';

async function main(): Promise<void> {
  const download = process.env.VSCODE_TEST_DOWNLOAD === '1';
  if (!download) {
    if (!existsSync(shim))
      throw new Error(
        `no VS Code to test in: ${shim} is missing (set VSCODE_TEST_SHIM, or VSCODE_TEST_DOWNLOAD=1 where VS Code can be downloaded)`,
      );
    if (!existsSync(path.join(rigDir, 'cs', 'node_modules', '.bin', 'code-server'))) {
      throw new Error(`the VS Code rig is not installed in ${rigDir}: run \`npm run test:setup\` (RIG_DIR=${rigDir})`);
    }
    if (!existsSync(path.join(repo, 'dist', 'client', 'extension.js')))
      throw new Error('dist/ is missing: run `npm run build` first');
  }
  // The suite applies quick fixes and saves: it works on a copy of the examples.
  const workspace = mkdtempSync(path.join(tmpdir(), 'cuda-occupancy-ws-'));
  cpSync(path.join(repo, 'examples'), workspace, { recursive: true });
  // A fresh profile each run: nothing left from an earlier run (settings, state) can change the outcome.
  const profile = mkdtempSync(path.join(tmpdir(), 'cuda-occupancy-vscode-'));
  try {
    await run(download, workspace, profile);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
    if (process.env.KEEP_VSCODE_PROFILE !== '1') rmSync(profile, { recursive: true, force: true });
    else console.log(`VS Code profile kept in ${profile}`);
  }
}

async function run(download: boolean, workspace: string, profile: string): Promise<void> {
  const code = await runTests({
    ...(download ? {} : { vscodeExecutablePath: shim }),
    extensionDevelopmentPath: repo,
    extensionTestsPath: path.join(__dirname, 'suite', 'index.js'),
    launchArgs: [
      workspace,
      '--disable-extensions',
      `--user-data-dir=${path.join(profile, 'data')}`,
      `--extensions-dir=${path.join(profile, 'extensions')}`,
    ],
    extensionTestsEnv: { CUDA_OCC_REPO: repo },
  });
  if (code !== 0) throw new Error(`VS Code tests exited with ${code}`);
}

main().catch((error) => {
  console.error(`VS Code tests failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
