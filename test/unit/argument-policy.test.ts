/**
 * What nvcc may be told (issue 25, cases 1 and 10): a compile database or workspace settings name no program
 * the user has not allowed, and nobody makes nvcc write outside its temporary directory or run the program.
 */
import * as assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  applyArgumentPolicy,
  globToRegExp,
  matchesAllowList,
  type ArgumentPolicy,
} from '../../server/src/nvcc/argument-policy';
import { parseCompileCommands, resolveCompileFlags } from '../../server/src/nvcc/compile-commands';
import { chooseNvcc } from '../../server/src/nvcc/locate-nvcc';
import { runCli } from '../support/cli-run';
import { realNvccOrSkip } from '../support/nvcc';

const NONE: ArgumentPolicy = { allowedCompilers: [] };
const kept = (
  args: string[],
  origin: Parameters<typeof applyArgumentPolicy>[1] = 'compile_commands.json',
  policy = NONE,
) => applyArgumentPolicy(args, origin, policy, '/ws/build').args;

describe('nvcc argument policy', () => {
  describe('options that write outside the temporary directory or run the program: dropped from every origin', () => {
    const spellings: Array<[string, string[]]> = [
      ['-keep', ['-keep']],
      ['--keep', ['--keep']],
      ['-save-temps', ['-save-temps']],
      ['-keep-dir', ['-keep-dir', '/ws/tmp']],
      ['--keep-dir=', ['--keep-dir=/ws/tmp']],
      ['-keep-dir=', ['-keep-dir=/ws/tmp']],
      ['--run', ['--run']],
      ['-run', ['-run']],
      ['--run-args', ['--run-args', '-x']],
      ['-o', ['-o', '/ws/out.o']],
      ['-o=', ['-o=/ws/out.o']],
      ['-o attached', ['-o/ws/out.o']],
      ['--output-file', ['--output-file', '/ws/out.o']],
      ['--output-directory', ['--output-directory', '/ws/o']],
      ['--output-directory=', ['--output-directory=/ws/o']],
      ['-odir', ['-odir', '/ws/o']],
      ['-MF', ['-MF', '/ws/dep.d']],
      ['-MF attached', ['-MF/ws/dep.d']],
      ['-MF=', ['-MF=/ws/dep.d']],
      ['--dependency-output', ['--dependency-output', '/ws/d']],
      ['--dependency-output=', ['--dependency-output=/ws/d']],
      ['-MD', ['-MD']],
      ['--generate-dependencies-with-compile', ['--generate-dependencies-with-compile']],
      ['--options-file', ['--options-file', '/ws/opts']],
      ['-optf', ['-optf', '/ws/opts']],
      ['-Xptxas -o', ['-Xptxas', '-v,-o,/ws/x.cubin']],
      ['--ptxas-options=--output-file', ['--ptxas-options=--output-file=/ws/x']],
      ['-Xlinker', ['-Xlinker', '-o/ws/x']],
      ['-Xnvlink', ['-Xnvlink', '-o,/ws/x']],
    ];
    for (const [name, args] of spellings) {
      for (const origin of ['user settings', 'workspace settings', 'compile_commands.json'] as const) {
        it(`${name} (${origin})`, () => {
          const result = applyArgumentPolicy(['-DA', ...args, '-DB'], origin, NONE);
          assert.deepEqual(result.args, ['-DA', '-DB']);
          assert.equal(result.dropped.length, 1);
          assert.equal(result.dropped[0].text, args.join(' '));
        });
      }
    }

    it('keeps options that only look alike', () => {
      for (const arg of [
        '-keep-device-functions',
        '--keep-device-functions',
        '-O3',
        '-opt-info=inline',
        '--optimization-info',
        '-maxrregcount=64',
        '-Xptxas',
        '-v',
      ]) {
        assert.ok(kept(['-Xptxas', '-v', arg]).includes(arg), arg);
      }
    });
  });

  describe('compilers named by the workspace: dropped unless the allow-list has them', () => {
    const spellings = [
      ['-ccbin', '/opt/evil/gcc'],
      ['-ccbin=/opt/evil/gcc'],
      ['--compiler-bindir', '/opt/evil/gcc'],
      ['--compiler-bindir=/opt/evil/gcc'],
      ['-compiler-bindir=/opt/evil/gcc'],
      ['--ccbin', '/opt/evil/gcc'],
    ];
    for (const args of spellings) {
      it(`${args.join(' ')}: dropped from compile_commands.json and workspace settings, kept from the user's settings`, () => {
        for (const origin of ['compile_commands.json', 'workspace settings'] as const) {
          const result = applyArgumentPolicy(args, origin, NONE);
          assert.deepEqual(result.args, []);
          assert.deepEqual(
            result.dropped.map((d) => [d.text, d.origin]),
            [[args.join(' '), origin]],
          );
          assert.match(result.dropped[0].reason, /not in cudaOccupancy\.nvcc\.allowedCompilers/);
        }
        assert.deepEqual(applyArgumentPolicy(args, 'user settings', NONE).args, args);
      });
    }

    it("passes a compiler the allow-list matches, as an absolute path (relative ones resolved against the command's directory)", () => {
      const policy: ArgumentPolicy = { allowedCompilers: ['/usr/bin/g++-*', '/opt/gcc-*/bin/**'] };
      assert.deepEqual(kept(['-ccbin', '/usr/bin/g++-12'], 'compile_commands.json', policy), [
        '--compiler-bindir=/usr/bin/g++-12',
      ]);
      assert.deepEqual(kept(['-ccbin=../../opt/gcc-13/bin/x86/g++'], 'compile_commands.json', policy), [
        '--compiler-bindir=/opt/gcc-13/bin/x86/g++',
      ]);
      assert.deepEqual(
        kept(['-ccbin', '/usr/bin/../../tmp/g++-12'], 'compile_commands.json', policy),
        [],
        'the path is normalised before it is matched',
      );
      assert.deepEqual(
        kept(['-ccbin', './g++-12'], 'compile_commands.json', policy),
        [],
        '/ws/build/g++-12 is not allowed',
      );
    });

    it('looks a bare compiler name up on PATH, and matches what it finds', () => {
      const policy: ArgumentPolicy = {
        allowedCompilers: ['/usr/bin/*'],
        findOnPath: (name) => (name === 'g++' ? '/usr/bin/g++' : name === 'evil' ? '/ws/bin/evil' : null),
      };
      assert.deepEqual(kept(['-ccbin', 'g++'], 'compile_commands.json', policy), ['--compiler-bindir=/usr/bin/g++']);
      assert.deepEqual(kept(['-ccbin', 'evil'], 'compile_commands.json', policy), []);
      assert.deepEqual(kept(['-ccbin', 'missing'], 'compile_commands.json', policy), []);
    });

    it('drops host compiler options and response files from the workspace only', () => {
      for (const args of [
        ['-Xcompiler', '-B/ws/evil'],
        ['--compiler-options=-fplugin=/ws/x.so'],
        ['-forward-unknown-to-host-compiler'],
        ['@/ws/opts.rsp'],
      ]) {
        assert.deepEqual(kept(args, 'workspace settings'), [], args.join(' '));
        assert.deepEqual(kept(args, 'compile_commands.json'), [], args.join(' '));
        assert.deepEqual(kept(args, 'user settings'), args, args.join(' '));
      }
    });
  });

  it('matches globs: * and ? within a component, ** across them', () => {
    assert.equal(globToRegExp('/usr/bin/g++-*').test('/usr/bin/g++-12'), true);
    assert.equal(globToRegExp('/usr/bin/g++-*').test('/usr/bin/g++-12/x'), false);
    assert.equal(globToRegExp('/opt/**/nvcc').test('/opt/nvcc'), true);
    assert.equal(globToRegExp('/opt/**/nvcc').test('/opt/cuda/12/bin/nvcc'), true);
    assert.equal(globToRegExp('/opt/**/nvcc').test('/opt/xnvcc'), false);
    assert.equal(globToRegExp('/usr/bin/gcc-1?').test('/usr/bin/gcc-13'), true);
    assert.equal(globToRegExp('/usr/bin/gcc-[0-9]*').test('/usr/bin/gcc-9'), true);
    assert.equal(globToRegExp('/a.b/(x)').test('/aXb/(x)'), false, 'other characters are literal');
    assert.equal(matchesAllowList('/usr/bin/gcc', []), false);
    assert.equal(matchesAllowList('/usr/bin/gcc', ['', '   ']), false);
  });

  it('reduces a hostile compile_commands.json entry to the flags that change device code', () => {
    const database = parseCompileCommands(
      JSON.stringify([
        {
          directory: '/ws/build',
          file: '/ws/src/k.cu',
          command:
            'nvcc -ccbin /ws/tools/gcc --compiler-bindir=/ws/tools/gcc -keep -keep-dir /ws/keep --run -odir /ws/o -MF /ws/k.d --dependency-output=/ws/k2.d -Xptxas -v,-o,/ws/x -Xcompiler -B/ws/evil -optf /ws/opts -I../inc -DN=4 -c /ws/src/k.cu -o k.o',
        },
      ]),
      '/ws',
    );
    const flags = resolveCompileFlags({
      database,
      filePath: '/ws/src/k.cu',
      settings: { nvccArgs: ['-keep', '--run', '-maxrregcount=64'] },
      nvccArgsOrigin: 'workspace settings',
    });
    assert.deepEqual(flags.flags, ['-I/ws/inc', '-DN=4', '-maxrregcount=64']);
    assert.deepEqual(
      flags.dropped?.map((d) => `${d.origin}: ${d.text}`),
      [
        'compile_commands.json: -ccbin /ws/tools/gcc',
        'compile_commands.json: --compiler-bindir=/ws/tools/gcc',
        'compile_commands.json: -Xptxas -v,-o,/ws/x',
        'workspace settings: -keep',
        'workspace settings: --run',
      ],
    );
  });

  it('runs nvcc.path from the workspace settings only when the allow-list has it', () => {
    const env = { PATH: '/nowhere' };
    assert.deepEqual(chooseNvcc({ configured: '/ws/evil/nvcc', fromWorkspace: false, allowedCompilers: [], env }), {
      nvccPath: '/ws/evil/nvcc',
      note: null,
    });
    const refused = chooseNvcc({
      configured: '/ws/evil/nvcc',
      fromWorkspace: true,
      allowedCompilers: ['/opt/cuda-*/bin/nvcc'],
      env,
    });
    assert.notEqual(refused.nvccPath, '/ws/evil/nvcc');
    assert.match(
      refused.note ?? '',
      /`\/ws\/evil\/nvcc` from the workspace settings is not in cudaOccupancy\.nvcc\.allowedCompilers/,
    );
    assert.deepEqual(
      chooseNvcc({
        configured: '/opt/cuda-13/bin/nvcc',
        fromWorkspace: true,
        allowedCompilers: ['/opt/cuda-*/bin/nvcc'],
        env,
      }),
      { nvccPath: '/opt/cuda-13/bin/nvcc', note: null },
    );
  });

  describe('`cuda-occupancy check DIR` on a repository whose compile_commands.json names a compiler (real nvcc)', function () {
    this.timeout(120_000);
    const nvcc = realNvccOrSkip();
    let repo: string;
    let marker: string;
    before(function () {
      if (!nvcc) return;
      repo = mkdtempSync(path.join(tmpdir(), 'cuda-occ-hostile-db-'));
      marker = path.join(repo, 'ran');
      mkdirSync(path.join(repo, 'tools'));
      const evil = path.join(repo, 'tools', 'gcc-evil');
      writeFileSync(evil, `#!/bin/sh\necho "$@" >> '${marker}'\nexec gcc "$@"\n`);
      chmodSync(evil, 0o755);
      writeFileSync(
        path.join(repo, 'k.cu'),
        '__global__ void k(float* p) { p[threadIdx.x] = 1; }\nvoid run(float* p) { k<<<1, 256>>>(p); }\n',
      );
      writeFileSync(
        path.join(repo, 'compile_commands.json'),
        JSON.stringify([
          {
            directory: repo,
            file: 'k.cu',
            arguments: ['nvcc', '-ccbin', evil, '-keep', '-keep-dir', repo, '-c', 'k.cu', '-o', 'k.o'],
          },
        ]),
      );
    });
    after(() => repo && rmSync(repo, { recursive: true, force: true }));

    it('runs nothing the repository names, writes nothing into it, and says what it dropped', async () => {
      const before = readdirSync(repo).sort();
      const run = await runCli(['check', '--nvcc', nvcc, '--arch', 'sm_80', '--format', 'json', repo], repo);
      assert.equal(run.code, 0, run.err);
      assert.equal(existsSync(marker), false, 'the compiler named by -ccbin ran');
      assert.deepEqual(readdirSync(repo).sort(), before, 'nvcc wrote into the repository');
      const dropped = run.err.split('\n').filter((l) => l.includes('dropped nvcc option'));
      assert.deepEqual(dropped, [
        `cuda-occupancy: dropped nvcc option \`-ccbin ${path.join(repo, 'tools', 'gcc-evil')}\` from compile_commands.json: the compiler it names is not in cudaOccupancy.nvcc.allowedCompilers`,
      ]);
      const json = JSON.parse(run.out) as {
        files: Array<{ kernels: Array<{ instances: Array<{ resources: Record<string, { source: string }> }> }> }>;
      };
      assert.equal(
        json.files[0].kernels[0].instances[0].resources.sm_80.source,
        'ptxas',
        'nvcc still compiled the file',
      );
    });

    it('runs it with --allow-compiler GLOB', async () => {
      const run = await runCli(
        ['check', '--nvcc', nvcc, '--arch', 'sm_80', '--allow-compiler', path.join(repo, 'tools', 'gcc-*'), repo],
        repo,
      );
      assert.equal(run.code, 0, run.err);
      assert.equal(existsSync(marker), true);
    });
  });
});
