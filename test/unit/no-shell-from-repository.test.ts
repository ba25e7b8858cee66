/**
 * A repository can never run a command through nvcc (issue 34, case 1). nvcc runs its own stages (the host
 * compiler, cicc, ptxas) with /bin/sh and pastes the source path and option values into their command lines, so a
 * file named `x$(cmd).cu` ran `cmd`, and so did `-DFOO=$(cmd)` in compile_commands.json. Now files and folders
 * with such names are compiled through plain names, and option values a shell would read are dropped with one
 * line each. Every case runs the bundled CLI with the real nvcc and a marker file that must not appear.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli-run';
import { realNvccOrSkip } from '../support/nvcc';
import type { CheckJson } from '../../server/src/cli/check-json-types';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'cuda-occupancy.js');

/** What each hostile name or value runs when a shell reads it: `touch $MARK` (MARK is set in nvcc's environment). */
export const HOSTILE = {
  'command substitution': '$(touch${IFS}$MARK)',
  backticks: '`touch${IFS}$MARK`',
  semicolons: ';touch${IFS}$MARK;',
  'a double quote and semicolons': '";touch${IFS}$MARK;"',
} as const;

const KERNEL = (include: string) =>
  `${include}\n__global__ void k(float* p) { p[threadIdx.x] = VALUE; }\nvoid run(float* p) { k<<<1, 128>>>(p); }\n`;

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function cli(args: string[], cwd: string, mark: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd, env: { ...process.env, MARK: mark }, maxBuffer: 64 * 1024 * 1024 },
      (error, out, err) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out: String(out), err: String(err) }),
    );
  });
}

/** Each kernel's sm_80 registers as ptxas reported them, by file (relative path as check prints it). */
function ptxasRegisters(json: CheckJson): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const file of json.files) {
    const figures = file.kernels[0]?.instances[0]?.resources?.sm_80;
    out[file.path] = figures?.source === 'ptxas' ? figures.numRegs : null;
  }
  return out;
}

describe('nothing from a repository reaches a shell (CLI, real nvcc)', function () {
  this.timeout(120_000);
  if (process.platform !== 'linux') return;
  realNvccOrSkip();
  let root: string;
  let mark: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cuda-occ-shell-'));
    mark = path.join(root, 'MARKER');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  for (const [what, hostile] of Object.entries(HOSTILE)) {
    it(`compiles a file whose name holds ${what}, with the header beside it, and runs nothing`, async () => {
      const repo = path.join(root, 'repo');
      mkdirSync(repo);
      const name = `x${hostile}.cu`;
      writeFileSync(path.join(repo, name), KERNEL('#include "values.h"'));
      writeFileSync(path.join(repo, 'values.h'), '#define VALUE 1.0f\n');
      const run = await cli(['check', '--format', 'json', '--arch', 'sm_80', repo], root, mark);
      assert.equal(existsSync(mark), false, `the marker appeared: ${run.err}`);
      assert.equal(run.code, 0, run.err);
      const registers = ptxasRegisters(JSON.parse(run.out) as CheckJson);
      assert.deepEqual(Object.keys(registers), [`repo/${name}`]);
      assert.equal(typeof registers[`repo/${name}`], 'number', 'ptxas compiled it');
    });

    it(`compiles a file in a folder whose name holds ${what}, with headers beside it and above it, and runs nothing`, async () => {
      const folder = path.join(root, `src${hostile}`);
      mkdirSync(path.join(folder, 'sub'), { recursive: true });
      writeFileSync(path.join(folder, 'sub', 'k.cu'), KERNEL('#include "near.h"\n#include "../far.h"'));
      writeFileSync(path.join(folder, 'sub', 'near.h'), '#define NEAR 1\n');
      writeFileSync(path.join(folder, 'far.h'), '#define VALUE (NEAR + 1.0f)\n');
      const run = await cli(['check', '--format', 'json', '--arch', 'sm_80', folder], root, mark);
      assert.equal(existsSync(mark), false, `the marker appeared: ${run.err}`);
      assert.equal(run.code, 0, run.err);
      assert.equal(typeof Object.values(ptxasRegisters(JSON.parse(run.out) as CheckJson))[0], 'number', run.err);
    });
  }

  it("names the real file in nvcc's messages, not the copy it compiled", async () => {
    const folder = path.join(root, `a${HOSTILE['command substitution']}`);
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'k.cu'), KERNEL('#include "missing.h"'));
    const run = await cli(['check', '--verbose', '--arch', 'sm_80', folder], root, mark);
    assert.equal(existsSync(mark), false);
    assert.match(run.err, new RegExp(`${escape(path.join(folder, 'k.cu'))}:1:10: fatal error: missing\\.h`), run.err);
    assert.doesNotMatch(run.err, /cuda-occupancy-\w+\//, 'a temporary name leaked');
  });

  it('drops every option family of compile_commands.json whose value a shell would read, and reaches hostile include folders under plain names', async () => {
    const repo = path.join(root, 'repo');
    const inc = path.join(repo, `inc${HOSTILE.backticks}`);
    const sys = path.join(repo, `sys${HOSTILE['command substitution']}`);
    const pre = path.join(repo, `pre${HOSTILE.semicolons}`);
    for (const dir of [inc, sys, pre]) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(inc, 'lib.h'), '#define FROM_INC 1\n');
    writeFileSync(path.join(sys, 'sys.h'), '#define FROM_SYS 1\n');
    writeFileSync(path.join(pre, 'pre.h'), '#define VALUE (FROM_INC + FROM_SYS + 1.0f)\n');
    writeFileSync(path.join(repo, 'k.cu'), KERNEL('#include <lib.h>\n#include <sys.h>'));
    const touch = HOSTILE['command substitution'];
    const hostileArgs = [
      `-DFOO=${touch}`,
      '-D',
      `BAR=${HOSTILE.backticks}`,
      `--define-macro=BAZ${HOSTILE.semicolons}`,
      `-U${touch}`,
      '-Xptxas',
      `-v;touch \${MARK};#`,
      `--ptxas-options=-v${HOSTILE.backticks}`,
      `--std=c++17${touch}`,
      `-maxrregcount=64${touch}`,
      `--default-stream=${touch}`,
      '-ccbin',
      `/usr/bin/${touch}/gcc`,
    ];
    writeFileSync(
      path.join(repo, 'compile_commands.json'),
      JSON.stringify([
        {
          directory: repo,
          file: 'k.cu',
          arguments: [
            'nvcc',
            `-I${inc}`,
            '-isystem',
            sys,
            '-include',
            path.join(pre, 'pre.h'),
            ...hostileArgs,
            '-c',
            'k.cu',
          ],
        },
      ]),
    );
    const run = await cli(
      ['check', '--format', 'json', '--arch', 'sm_80', '--allow-compiler', '/usr/bin/**', repo],
      root,
      mark,
    );
    assert.equal(existsSync(mark), false, `the marker appeared: ${run.err}`);
    assert.equal(run.code, 0, run.err);
    assert.equal(ptxasRegisters(JSON.parse(run.out) as CheckJson)['repo/k.cu'], 8, run.err);
    const dropped = run.err.split('\n').filter((l) => l.includes('dropped nvcc option'));
    assert.equal(dropped.length, 10, run.err);
    for (const line of dropped)
      assert.match(line, /from compile_commands\.json: it holds a character a shell would interpret/);
    assert.deepEqual(readdirSync(repo).sort(), [
      'compile_commands.json',
      'inc`touch${IFS}$MARK`',
      'k.cu',
      'pre;touch${IFS}$MARK;',
      'sys$(touch${IFS}$MARK)',
    ]);
  });

  it("drops the CLI's own -D, --std and nvcc arguments after -- when a shell would read them, and passes its -I folders under plain names", async () => {
    const repo = path.join(root, 'repo');
    const inc = path.join(root, `inc${HOSTILE['a double quote and semicolons']}`);
    mkdirSync(repo);
    mkdirSync(inc);
    writeFileSync(path.join(inc, 'values.h'), '#define VALUE 2.0f\n');
    writeFileSync(path.join(repo, 'k.cu'), KERNEL('#include <values.h>'));
    const run = await cli(
      [
        'check',
        '--format',
        'json',
        '--arch',
        'sm_80',
        '-I',
        inc,
        '-D',
        `X=${HOSTILE['command substitution']}`,
        repo,
        '--',
        `-Xptxas=-v${HOSTILE.semicolons}`,
      ],
      root,
      mark,
    );
    assert.equal(existsSync(mark), false, `the marker appeared: ${run.err}`);
    assert.equal(ptxasRegisters(JSON.parse(run.out) as CheckJson)['repo/k.cu'], 8, run.err);
    assert.equal(
      run.err
        .split('\n')
        .filter((l) =>
          /dropped nvcc option .* from user settings: it holds a character a shell would interpret/.test(l),
        ).length,
      2,
      run.err,
    );
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
