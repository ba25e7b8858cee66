/**
 * Workspace trust: in an untrusted workspace the server never runs an nvcc path
 * or flags taken from workspace settings, says so in its status, and the static
 * analysis keeps working.
 */
import * as assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LspSession, fileUri } from '../support/lsp-session';
import type { ServerStatus } from '../../server/src/protocol';

describe('workspace trust', function () {
  this.timeout(60000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-trust-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const trusted of [false, true]) {
    it(`${trusted ? 'runs' : 'never runs'} the nvcc named in the settings when the workspace is ${trusted ? '' : 'not '}trusted`, async () => {
      const marker = path.join(dir, `ran-${trusted}`);
      const fake = path.join(dir, `fake-nvcc-${trusted}.sh`);
      writeFileSync(fake, `#!/bin/sh\necho ran > '${marker}'\nexit 1\n`);
      chmodSync(fake, 0o755);
      const file = path.join(dir, `k-${trusted}.cu`);
      const text =
        '__global__ void __launch_bounds__(128) k(float* p) { p[threadIdx.x] = 0; }\nvoid run(float* p) { k<<<1, 256>>>(p); }\n';
      writeFileSync(file, text);
      const statuses: ServerStatus[] = [];
      const session = await LspSession.start({
        rootDir: dir,
        initializationOptions: { workspaceTrusted: trusted, cacheDir: null },
        settings: { nvcc: { path: fake, args: ['-DFROM_WORKSPACE'] } },
      });
      session.connection.onNotification('cudaOccupancy/status', (s: ServerStatus) => void statuses.push(s));
      try {
        const uri = fileUri(file);
        session.open(uri, text);
        const diagnostics = await session.waitForDiagnostics(uri, (d) =>
          d.some((x) => x.code === 'launch-exceeds-bounds'),
        );
        assert.ok(diagnostics.length > 0, 'the static analysis works either way');
        // Wait until the compile the open asked for has finished (the status leaves "compiling").
        const deadline = Date.now() + 30000;
        while (
          Date.now() < deadline &&
          !(statuses.some((s) => s.state === 'compiling') && statuses[statuses.length - 1].state !== 'compiling')
        ) {
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(
          statuses.some((s) => s.state === 'compiling'),
          JSON.stringify(statuses.map((s) => s.state)),
        );
        assert.equal(existsSync(marker), trusted);
        const last = statuses[statuses.length - 1];
        if (!trusted) {
          assert.ok(['untrusted', 'nvcc-missing'].includes(last.state), last.state);
          assert.match(
            last.message,
            /Untrusted workspace: nvcc runs without flags from workspace settings or compile_commands\.json/,
          );
        }
      } finally {
        await session.stop();
      }
    });
  }
});
