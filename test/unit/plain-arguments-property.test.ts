/**
 * A property of the argument builder (issue 34): whatever file names and option values a repository holds, no
 * string nvcc is given needs quoting. Random file and folder names and option values, drawn from a generator of
 * shell metacharacters, go through the argument policy, the staging of paths and the builders of the figures and
 * PTX compiles; a shell then reads each argument back, bare and in double quotes (as nvcc pastes them into its
 * stages' command lines), and must get the same word.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { applyArgumentPolicy, isPlainWord, type ArgumentOrigin } from '../../server/src/nvcc/argument-policy';
import { resolveCompileFlags } from '../../server/src/nvcc/compile-commands';
import { nvccArguments } from '../../server/src/nvcc/compile-resources';
import { ptxArguments } from '../../server/src/nvcc/compile-ptx';
import { mapNames, stageInputs } from '../../server/src/nvcc/staged-inputs';
import { dumpResourceUsage } from '../../server/src/nvcc/cuobjdump';
import { FAKE_CUOBJDUMP, fakeObject } from '../support/fake-cuobjdump';

/** Characters a shell reads, the ones nvcc splits lists at, and plain ones. */
const METACHARACTERS = [...'$`"\'\\;|&<>()*?[]{}~!#^ \t\n\r=,:@%+'];
const PLAIN = [...'abcXYZ019_-./'];
const OTHER = ['ü', '日', '\u00a0', '\u202e'];

const word = (min: number) =>
  fc
    .array(fc.oneof(fc.constantFrom(...METACHARACTERS), fc.constantFrom(...PLAIN), fc.constantFrom(...OTHER)), {
      minLength: min,
      maxLength: 14,
    })
    .map((chars) => chars.join(''));

/** A file or folder name: any character but `/` and NUL. */
const name = word(1)
  .map((n) => n.replace(/\//g, '_'))
  .filter((n) => n !== '.' && n !== '..');

/** An option of a family nvcc takes, in each of its spellings, with a random value. */
const FAMILIES = [
  '-D',
  '--define-macro',
  '-U',
  '-I',
  '--include-path',
  '-isystem',
  '--system-include',
  '-include',
  '--pre-include',
  '-Xptxas',
  '--ptxas-options',
  '-std',
  '-maxrregcount',
  '--default-stream',
  '-ccbin',
  '-Xcompiler',
  '-G',
];
const option = fc
  .tuple(fc.constantFrom(...FAMILIES), fc.constantFrom('separate', 'equals', 'attached'), word(0))
  .map(([family, form, value]) =>
    form === 'separate' ? [family, value] : form === 'equals' ? [`${family}=${value}`] : [`${family}${value}`],
  );

const ORIGINS: ArgumentOrigin[] = ['compile_commands.json', 'workspace settings', 'user settings'];

/** Each word as a shell reads it bare and in double quotes; a shell without PATH, so that nothing could run. */
function shellReads(words: readonly string[], cwd: string): string[] {
  const script = words.map((w) => `printf '%s\\0' ${w} "${w}"`).join('\n');
  const out = execFileSync('/bin/sh', ['-c', script], { cwd, env: { PATH: '/nonexistent' }, encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('the arguments nvcc is given need no quoting, whatever the repository holds', function () {
  this.timeout(120_000);
  if (process.platform === 'win32') return;
  let scratch: string;
  beforeEach(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'cuda-occ-plain-'));
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('for random file names, folder names and option values of every origin', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(name, { minLength: 1, maxLength: 3 }),
        name,
        fc.array(option, { maxLength: 6 }),
        fc.constantFrom(...ORIGINS),
        fc.array(word(1), { maxLength: 2 }),
        async (folders, file, options, origin, defines) => {
          const dir = path.join(scratch, `run${run++}`);
          const filePath = path.join('/work', ...folders, file);
          const flags =
            origin === 'compile_commands.json'
              ? applyArgumentPolicy(options.flat(), origin, { allowedCompilers: ['/**'] }, '/work').args
              : resolveCompileFlags({
                  database: null,
                  filePath,
                  settings: { nvccArgs: options.flat(), defines, includePaths: folders },
                  workspaceRoot: '/work',
                  policy: { allowedCompilers: ['/**'] },
                  nvccArgsOrigin: origin,
                  settingsOrigin: origin,
                }).flags;
          execFileSync('mkdir', ['-m', '700', dir]);
          const staged = await stageInputs({
            dir,
            filePath,
            content: Buffer.from('__global__ void k() {}\n'),
            flags,
            cwd: '/work',
          });
          const argv = [
            ...nvccArguments({
              filePath: staged.sourcePath,
              flags: staged.flags,
              archs: ['sm_80', 'sm_90'],
              outputDir: dir,
              keep: true,
            }),
            ...ptxArguments({
              filePath: staged.sourcePath,
              flags: staged.flags,
              arch: 'sm_80',
              output: path.join(dir, 'x.ptx'),
            }),
          ];
          for (const arg of argv) assert.ok(isPlainWord(arg), `nvcc would be given ${JSON.stringify(arg)}`);
          const read = shellReads(argv, dir);
          assert.deepEqual(
            read,
            argv.flatMap((a) => [a, a]),
          );
          assert.equal(mapNames(staged.sourcePath, staged.names), filePath, 'the compiled file maps back');
        },
      ),
      { numRuns: 150 },
    );
  });

  it('gives cuobjdump an object in a folder whose name a shell would read under a plain name, and names the real one', async () => {
    const dir = path.join(scratch, 'build$(touch${IFS}MARK)');
    mkdirSync(dir);
    const object = path.join(dir, 'k`id`.o');
    writeFileSync(object, fakeObject({ sm_80: { _Z1kPf: { reg: 40 } } }));
    const result = await dumpResourceUsage({ cuobjdumpPath: FAKE_CUOBJDUMP, file: object, timeoutMs: 10_000 });
    assert.equal(result.status, 'ok', JSON.stringify(result));
    assert.match((result as { text: string }).text, /REG:40/);
    const plain = path.join(dir, 'host.o');
    writeFileSync(plain, 'not device code');
    const failed = await dumpResourceUsage({ cuobjdumpPath: FAKE_CUOBJDUMP, file: plain, timeoutMs: 10_000 });
    assert.deepEqual(failed, {
      status: 'failed',
      message: `cuobjdump info    : File '${plain}' does not contain device code`,
    });
  });

  it('drops an option whose value a shell would read, with its value, and keeps the next option whole', () => {
    for (const origin of ORIGINS) {
      const result = applyArgumentPolicy(
        ['-Xptxas', '-v;touch x;#', '-D', 'A=$(id)', '-DB=`id`', '-DOK', '-I', '/repo/$(id)/inc'],
        origin,
        { allowedCompilers: [] },
      );
      assert.deepEqual(result.args, ['-DOK', '-I', '/repo/$(id)/inc'], 'a path is kept: the compile stages it');
      assert.deepEqual(
        result.dropped.map((d) => d.text),
        ['-Xptxas -v;touch x;#', '-D A=$(id)', '-DB=`id`'],
      );
    }
  });
});
