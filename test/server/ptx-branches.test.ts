/**
 * Divergence costs from the PTX, through the bundled server and the real nvcc:
 * after a saved `.cu` file compiles, its divergent branch is priced in PTX
 * instructions (warning and hover); an unsaved edit makes the PTX's `.loc`
 * lines stale, and the estimate from the syntax comes back until the next save.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { LspSession, REPO_ROOT } from '../support/lsp-session';
import { realNvccOrSkip } from '../support/nvcc';

describe('divergence costs from the PTX (bundled server, real nvcc)', function () {
  this.timeout(120_000);
  const nvcc = realNvccOrSkip();
  let dir: string;
  let session: LspSession | null = null;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptx-branches-'));
  });
  afterEach(async () => {
    await session?.stop();
    session = null;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prices a divergent branch in PTX instructions once the file compiles, and falls back to the estimate after an unsaved edit', async () => {
    const file = path.join(dir, 'ptx-branches.cu');
    const text = fs.readFileSync(path.join(REPO_ROOT, 'test/fixtures/divergence/ptx-branches.cu'), 'utf8');
    fs.writeFileSync(file, text);
    session = await LspSession.start({
      rootDir: dir,
      settings: { architectures: ['sm_80'], nvcc: { path: nvcc } },
      initializationOptions: { cacheDir: null },
    });
    const uri = pathToFileURL(file).href;
    session.open(uri, text);
    const divergent = (d: Array<{ code?: string | number }>) =>
      d.find((x) => x.code === 'divergent-branch') as
        { message: string; range: { start: { line: number; character: number } } } | undefined;

    const priced = await session.waitForDiagnostics(
      uri,
      (d) => /PTX instructions/.test(divergent(d)?.message ?? ''),
      90_000,
    );
    const warning = divergent(priced)!;
    assert.match(
      warning.message,
      /^`t % 2 == 0` splits every warp into two groups of 16 lanes: the warp runs both paths one after the other: \d+ issue slots against \d+ if the lanes agreed \(issue efficiency \d+%; PTX instructions\)\.$/,
    );
    const at = { line: warning.range.start.line, character: warning.range.start.character + 1 };
    const hover = await session.hover(uri, at);
    assert.ok(hover && typeof hover.contents === 'object' && 'value' in hover.contents);
    assert.match(
      hover.contents.value,
      /\nPath costs \(issue slots per warp, from the PTX\): then \d+ · else \d+\.\n\n\*\*Warning:\*\* [\d.]+ issue slots per warp with lanes idle, \d+% of the kernel's \d+; /,
    );
    assert.ok(
      session.logs.some((l) => /PTX kept from the figures compile ok for .*ptx-branches\.cu \(sm_80\)/.test(l)),
      session.logs.join('\n'),
    );

    // An unsaved line above the branch: the PTX no longer describes this text.
    session.change(uri, [
      { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '// edited\n' },
    ]);
    const estimated = await session.waitForDiagnostics(
      uri,
      (d) => /estimated from the syntax/.test(divergent(d)?.message ?? ''),
      10_000,
    );
    assert.equal(divergent(estimated)!.range.start.line, warning.range.start.line + 1);
  });
});
