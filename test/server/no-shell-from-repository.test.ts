/**
 * The shipped server runs no command a repository names through nvcc's shell (issue 34, case 1): opening a file
 * whose name holds `$(...)`, backticks or `;` ran it, in an untrusted workspace too, and so did option values from
 * compile_commands.json and the settings. Each case opens a file with the real nvcc and a marker file (MARK in the
 * server's environment) that must not appear.
 */
import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { LspSession, fileUri } from '../support/lsp-session';
import { realNvccOrSkip } from '../support/nvcc';

const TOUCH = '$(touch${IFS}$MARK)';
const BACKTICKS = '`touch${IFS}$MARK`';
const SEMICOLONS = '";touch${IFS}$MARK;"';
const KERNEL =
  '#include "values.h"\n__global__ void k(float* p) { p[threadIdx.x] = VALUE; }\nvoid run(float* p) { k<<<1, 128>>>(p); }\n';

async function waitFor(what: string, test: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the server runs nothing a repository names through nvcc', function () {
  this.timeout(120_000);
  if (process.platform !== 'linux') return;
  const nvcc = realNvccOrSkip();
  let root: string;
  let mark: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cuda-occ-shell-server-'));
    mark = path.join(root, 'MARKER');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** Opens `file` in a session over `repo` and waits for its figures compile; returns the server's log. */
  async function compileOnOpen(
    repo: string,
    file: string,
    options: { trusted: boolean; settings?: Record<string, unknown> },
  ): Promise<string[]> {
    const session = await LspSession.start({
      rootDir: repo,
      env: { MARK: mark },
      initializationOptions: { workspaceTrusted: options.trusted, cacheDir: null },
      settings: {
        architectures: ['sm_80'],
        ...options.settings,
        nvcc: { path: nvcc, ...(options.settings?.nvcc ?? {}) },
      },
    });
    try {
      session.open(fileUri(file), KERNEL);
      await waitFor('the compile', () => session.logs.some((l) => /^nvcc (ok|failed)/.test(l)));
      return [...session.logs];
    } finally {
      await session.stop();
    }
  }

  for (const trusted of [false, true])
    for (const hostile of [TOUCH, BACKTICKS, SEMICOLONS]) {
      it(`compiles an opened file in a folder and under a name holding ${hostile} (${trusted ? '' : 'un'}trusted workspace), and runs nothing`, async () => {
        const repo = path.join(root, `repo${hostile}`);
        mkdirSync(repo);
        const file = path.join(repo, `k${hostile}.cu`);
        writeFileSync(file, KERNEL);
        writeFileSync(path.join(repo, 'values.h'), '#define VALUE 1.0f\n');
        const logs = await compileOnOpen(repo, file, { trusted });
        assert.equal(existsSync(mark), false, 'the marker appeared');
        assert.ok(
          logs.some((l) => l.startsWith(`nvcc ok for ${file}`)),
          logs.join('\n'),
        );
      });
    }

  it('drops the option values of compile_commands.json a shell would read, and reaches a hostile include folder', async () => {
    const repo = path.join(root, 'repo');
    const inc = path.join(repo, `inc${BACKTICKS}`);
    mkdirSync(inc, { recursive: true });
    writeFileSync(path.join(inc, 'values.h'), '#define VALUE 1.0f\n');
    writeFileSync(path.join(repo, 'k.cu'), KERNEL);
    writeFileSync(
      path.join(repo, 'compile_commands.json'),
      JSON.stringify([
        {
          directory: repo,
          file: 'k.cu',
          arguments: [
            'nvcc',
            '-I',
            inc,
            `-DFOO=${TOUCH}`,
            '-Xptxas',
            `-v;touch \${MARK};#`,
            `--std=${SEMICOLONS}`,
            '-c',
            'k.cu',
          ],
        },
      ]),
    );
    const logs = await compileOnOpen(repo, path.join(repo, 'k.cu'), { trusted: true });
    assert.equal(existsSync(mark), false, 'the marker appeared');
    assert.ok(
      logs.some((l) => l.startsWith('nvcc ok for')),
      logs.join('\n'),
    );
    assert.deepEqual(
      logs.filter((l) => l.startsWith('dropped nvcc option')).map((l) => l.replace(/`.*`/, 'X')),
      Array(3).fill(
        'dropped nvcc option X from compile_commands.json: it holds a character a shell would interpret, and nvcc runs its compiler stages through /bin/sh',
      ),
    );
  });

  for (const origin of ['workspace settings', 'user settings'] as const) {
    it(`drops the defines, standard and nvcc arguments of the ${origin} a shell would read, and reaches hostile include paths`, async () => {
      const repo = path.join(root, 'repo');
      const inc = path.join(root, `inc${TOUCH}`);
      mkdirSync(repo);
      mkdirSync(inc);
      writeFileSync(path.join(inc, 'values.h'), '#define VALUE 1.0f\n');
      writeFileSync(path.join(repo, 'k.cu'), KERNEL);
      const nvccSettings = {
        includePaths: [inc],
        defines: [`A=${TOUCH}`, `B${BACKTICKS}`],
        std: `c++17${SEMICOLONS}`,
        args: [`-Xptxas=-v${SEMICOLONS}`, '-D', `C=${TOUCH}`],
      };
      const logs = await compileOnOpen(repo, path.join(repo, 'k.cu'), {
        trusted: true,
        settings: {
          nvcc: nvccSettings,
          ...(origin === 'workspace settings'
            ? { $workspaceKeys: ['nvcc.includePaths', 'nvcc.defines', 'nvcc.std', 'nvcc.args'] }
            : {}),
        },
      });
      assert.equal(existsSync(mark), false, 'the marker appeared');
      assert.ok(
        logs.some((l) => l.startsWith('nvcc ok for')),
        logs.join('\n'),
      );
      const dropped = logs.filter((l) => l.startsWith('dropped nvcc option'));
      assert.equal(dropped.length, 5, dropped.join('\n'));
      for (const line of dropped) assert.ok(line.includes(`from ${origin}: it holds a character a shell`), line);
    });
  }
});
