/**
 * Register-capping quick fixes checked by ptxas, through the bundled server: once a file's own
 * figures are in, the server compiles each cap its fixes propose (`__launch_bounds__(256, 5)` on the
 * kernel, `-maxrregcount=48` for the file) from a copy in the temp dir, and the fix's short title
 * ("checking…", then the registers and occupancy ptxas gave, ⚠ when it spilled) and the hover's next
 * step (in full) say what ptxas did. nvcc is
 * test/fixtures/fake-nvcc/nvcc-capped, which caps and spills by a fixed rule.
 */
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { CodeAction } from 'vscode-languageserver-protocol';
import { LspSession, REPO_ROOT, fileUri } from '../support/lsp-session';
import { fakeNvcc, loggedRuns } from '../support/nvcc';

const FIXTURE = path.join(REPO_ROOT, 'test', 'fixtures', 'register-caps', 'capped.cu');

describe('quick fixes checked by ptxas (bundled server, fake nvcc)', function () {
  this.timeout(60000);
  let dir: string;
  let session: LspSession | null = null;
  let argsLog: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cuda-occ-caps-'));
    cpSync(FIXTURE, path.join(dir, 'capped.cu'));
    argsLog = path.join(dir, 'args.log');
  });
  afterEach(async () => {
    await session?.stop();
    session = null;
    rmSync(dir, { recursive: true, force: true });
  });

  const titlesAt = async (uri: string, line: number) => {
    const actions =
      (await session!.request<CodeAction[]>('textDocument/codeAction', {
        textDocument: { uri },
        range: { start: { line, character: 4 }, end: { line, character: 4 } },
        context: { diagnostics: [] },
      })) ?? [];
    return actions.map((a) => a.title);
  };
  const until = async <T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string) => {
    const deadline = Date.now() + 30000;
    let value = await read();
    while (!accept(value)) {
      if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(value)}\n${session!.logs.join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
      value = await read();
    }
    return value;
  };

  it('says "checking…" while the caps compile, then what ptxas did: no spills for roomy, spills for heavy', async () => {
    session = await LspSession.start({
      rootDir: dir,
      settings: { architectures: ['sm_80'], nvcc: { path: fakeNvcc('nvcc-capped') } },
      initializationOptions: { cacheDir: null },
      env: { FAKE_NVCC_DELAY_MS: '700', FAKE_NVCC_ARGS_LOG: argsLog },
    });
    const file = path.join(dir, 'capped.cu');
    const uri = fileUri(file);
    session.open(uri, readFileSync(file, 'utf8'));
    const roomy = 15; // roomy<<<...>>>
    const heavy = 16;

    const checking = await until(
      () => titlesAt(uri, heavy),
      (t) => t.some((x) => x.endsWith(' · checking…')),
      'no fix checking with ptxas',
    );
    assert.ok(checking.includes('Add __launch_bounds__(256, 5): 5 blocks/SM · checking…'), checking.join('\n'));

    const checked = (t: string[]) => t.filter((x) => / ⚠ spills$|: 48 regs → /.test(x)).length === 2;
    const done = await until(() => titlesAt(uri, heavy), checked, 'no checked fixes');
    assert.deepEqual(done, [
      'Add __launch_bounds__(256, 5): 48 regs → 62.5% ⚠ spills',
      'Add -maxrregcount=48 (all kernels): 48 regs → 62.5% ⚠ spills',
    ]);
    const roomyTitles = await until(() => titlesAt(uri, roomy), checked, 'no checked fixes for roomy');
    assert.deepEqual(roomyTitles, [
      'Add __launch_bounds__(256, 5): 48 regs → 62.5%',
      'Add -maxrregcount=48 (all kernels): 48 regs → 62.5%',
    ]);
    const heavyHover = await session.hover(uri, { line: heavy, character: 4 });
    assert.match(
      (heavyHover?.contents as { value: string }).value,
      /Try `__launch_bounds__\(256, 5\)` \(ptxas: 48 registers, 128 B spill stores \/ 132 B loads → 62\.5%: the spills may cost more than the occupancy gains\)\./,
    );

    const hover = await session.hover(uri, { line: roomy, character: 4 });
    assert.match(
      (hover?.contents as { value: string }).value,
      /\*\*Next step:\*\* at ≤ 48 registers per thread, 5 blocks fit \(62\.5%\) on sm_80\. Try `__launch_bounds__\(256, 5\)` \(ptxas: 48 registers, no spills → 62\.5%\)\. With `-maxrregcount=48`: ptxas: 48 registers, no spills → 62\.5%\./,
    );

    // The variants: a copy in the temp dir with the bound (one per kernel), and the file with the flag (compiled once: the cache answers for the other kernel).
    const runs = loggedRuns(argsLog);
    const variants = runs.filter((args) => args[args.length - 1] !== file && !args.includes('-ptx'));
    assert.equal(variants.length, 3, JSON.stringify(runs));
    assert.ok(
      variants.every((args) => path.basename(args[args.length - 1]) === 'capped.cu' && args.includes(`-I${dir}`)),
    );
    assert.equal(variants.filter((args) => args.includes('-maxrregcount=48')).length, 1);
  });

  it('publishes the diagnostics again when a check finishes, so a client that re-reads code actions then (VS Code) shows the outcome', async () => {
    session = await LspSession.start({
      rootDir: dir,
      settings: { architectures: ['sm_80'], nvcc: { path: fakeNvcc('nvcc-capped') } },
      initializationOptions: { cacheDir: null },
      env: { FAKE_NVCC_DELAY_MS: '300' },
    });
    const file = path.join(dir, 'capped.cu');
    const uri = fileUri(file);
    // Like VS Code's light bulb: the code actions are read when the document's diagnostics arrive, and only then.
    const seen: string[][] = [];
    let reading = Promise.resolve();
    let count = 0;
    const watch = setInterval(() => {
      const published = session!.published.filter((p) => p.uri === uri).length;
      if (published === count) return;
      count = published;
      reading = reading.then(async () => void seen.push(await titlesAt(uri, 16)));
    }, 20);
    try {
      session.open(uri, readFileSync(file, 'utf8'));
      const deadline = Date.now() + 30000;
      while (!seen.some((t) => t.filter((x) => / ⚠ spills$|: 48 regs → /.test(x)).length === 2)) {
        if (Date.now() > deadline)
          throw new Error(`the code actions read on each publication never showed the checks: ${JSON.stringify(seen)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      clearInterval(watch);
      await reading;
    }
    // They said "checking…" first, from a publication before the checks finished.
    assert.ok(
      seen.some((t) => t.some((x) => x.endsWith(' · checking…'))),
      JSON.stringify(seen),
    );
  });
});
