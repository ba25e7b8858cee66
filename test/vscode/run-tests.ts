/**
 * Runs the extension's suite in a real VS Code. VS Code cannot be downloaded on
 * our machines, so by default runTests is pointed at the code-server shim of
 * ../shared/vscode-rig (code-server 4.100.3 = VS Code 1.100.3 in headless
 * Chromium). Where VS Code can be downloaded, VSCODE_TEST_DOWNLOAD=1 runs the
 * same suite with the ordinary runTests.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';

const repo = path.resolve(__dirname, '..', '..', '..');
const shim = process.env.VSCODE_TEST_SHIM ?? path.resolve(repo, '..', 'shared', 'vscode-rig', 'code-server-test-shim.mjs');
const rigDir = process.env.RIG_DIR ?? '/tmp/rig';

async function main(): Promise<void> {
  const download = process.env.VSCODE_TEST_DOWNLOAD === '1';
  if (!download) {
    if (!existsSync(shim)) throw new Error(`no VS Code to test in: ${shim} is missing (set VSCODE_TEST_SHIM, or VSCODE_TEST_DOWNLOAD=1 where VS Code can be downloaded)`);
    if (!existsSync(path.join(rigDir, 'cs', 'node_modules', '.bin', 'code-server'))) {
      throw new Error(`the VS Code rig is not installed in ${rigDir}: run \`bash ../shared/vscode-rig/setup.sh ${rigDir}\` (or \`bash .ci/run\`, which does it)`);
    }
    if (!existsSync(path.join(repo, 'dist', 'client', 'extension.js'))) throw new Error('dist/ is missing: run `npm run build` first');
  }
  // The suite applies quick fixes and saves: it works on a copy of the examples.
  const workspace = mkdtempSync(path.join(tmpdir(), 'cuda-occupancy-ws-'));
  cpSync(path.join(repo, 'examples'), workspace, { recursive: true });
  try {
    await run(download, workspace);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

async function run(download: boolean, workspace: string): Promise<void> {
  const code = await runTests({
    ...(download ? {} : { vscodeExecutablePath: shim }),
    extensionDevelopmentPath: repo,
    extensionTestsPath: path.join(__dirname, 'suite', 'index.js'),
    launchArgs: [workspace, '--disable-extensions'],
    extensionTestsEnv: { CUDA_OCC_REPO: repo },
  });
  if (code !== 0) throw new Error(`VS Code tests exited with ${code}`);
}

main().catch((error) => {
  console.error(`VS Code tests failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
