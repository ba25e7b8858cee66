import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  archsOf,
  extractNvccFlags,
  findCompileCommand,
  findCompileCommandsFile,
  flagsFromSettings,
  parseCompileCommands,
  resolveCompileFlags,
  splitCommandLine,
} from '../../server/src/nvcc/compile-commands';

const ROOT = path.resolve('/work/proj');

describe('compile commands', () => {
  it('splits a command line like a POSIX shell, expanding nothing', () => {
    assert.deepEqual(splitCommandLine(`nvcc -DMSG="hello world" -I'/a b' x\\ y.cu '$(rm -rf /)' "a\\"b" ;`), [
      'nvcc',
      '-DMSG=hello world',
      '-I/a b',
      'x y.cu',
      '$(rm -rf /)',
      'a"b',
      ';',
    ]);
  });

  it('keeps the flags that change device code and drops outputs, dependency files and archs', () => {
    const [entry] = parseCompileCommands(
      JSON.stringify([
        {
          directory: ROOT + '/build',
          file: '../src/k.cu',
          command:
            '/usr/bin/ccache /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -DNDEBUG -DVALUE="a b" -I../include ' +
            '-isystem /opt/cub --expt-relaxed-constexpr -O3 -std=c++17 "--generate-code=arch=compute_80,code=[compute_80,sm_80]" ' +
            '-gencode arch=compute_90a,code=sm_90a -Xcompiler=-fPIC -Xptxas -O2 -maxrregcount=64 -MD -MT src/k.cu.o -MF k.cu.o.d ' +
            '-x cu -dc ../src/k.cu -o CMakeFiles/k.dir/src/k.cu.o -Werror all-warnings',
        },
      ]),
      ROOT,
    );
    assert.equal(entry.file, path.join(ROOT, 'src/k.cu'));
    const flags = extractNvccFlags(entry);
    assert.deepEqual(flags.archs, ['sm_80', 'sm_90a']);
    assert.deepEqual(flags.flags, [
      '-DNDEBUG',
      '-DVALUE=a b',
      `-I${path.join(ROOT, 'include')}`,
      '-isystem',
      '/opt/cub',
      '--expt-relaxed-constexpr',
      '-O3',
      '-std=c++17',
      '-Xptxas',
      '-O2',
      '-maxrregcount=64',
      '-rdc=true',
    ]);
    assert.equal(flags.cwd, path.join(ROOT, 'build'));
  });

  it('reads the arguments form, finds the entry for a file, and skips malformed entries', () => {
    const database = parseCompileCommands(
      JSON.stringify([
        { directory: ROOT, file: 'a.cu', arguments: ['nvcc', '-arch=sm_86', '-DA', '-c', 'a.cu'] },
        { file: 42 },
        null,
        { directory: ROOT, file: 'b.cu' },
      ]),
      ROOT,
    );
    assert.equal(database.length, 1);
    const entry = findCompileCommand(database, path.join(ROOT, 'sub/../a.cu'));
    assert.ok(entry);
    assert.deepEqual(extractNvccFlags(entry).flags, ['-DA']);
    assert.deepEqual(extractNvccFlags(entry).archs, ['sm_86']);
    assert.equal(findCompileCommand(database, path.join(ROOT, 'b.cu')), null);
    assert.throws(() => parseCompileCommands('{', ROOT), /not valid JSON/);
    assert.throws(() => parseCompileCommands('{}', ROOT), /not a JSON array/);
  });

  it('reads archs from every spelling', () => {
    assert.deepEqual(archsOf('arch=compute_75,code=[sm_75,compute_75]'), ['sm_75']);
    assert.deepEqual(archsOf('sm_80,sm_90a'), ['sm_80', 'sm_90a']);
    assert.deepEqual(archsOf('compute_89'), ['sm_89']);
    assert.deepEqual(archsOf('native'), []);
  });

  it('builds flags from settings, and adds nvccArgs to a database entry', () => {
    const fromSettings = flagsFromSettings(
      { includePaths: ['inc', ' '], defines: ['A', 'B=2'], std: '17', nvccArgs: ['-G', '-arch=sm_89'] },
      ROOT,
    );
    assert.deepEqual(fromSettings.flags, ['-I', path.join(ROOT, 'inc'), '-DA', '-DB=2', '-std=c++17', '-G']);
    assert.deepEqual(fromSettings.archs, ['sm_89']);
    const database = parseCompileCommands(
      JSON.stringify([{ directory: ROOT, file: 'a.cu', arguments: ['nvcc', '-DA', 'a.cu'] }]),
      ROOT,
    );
    const resolved = resolveCompileFlags({
      database,
      filePath: path.join(ROOT, 'a.cu'),
      settings: { defines: ['IGNORED'], nvccArgs: ['-lineinfo'] },
    });
    assert.deepEqual([resolved.origin, resolved.flags], ['compile_commands', ['-DA', '-lineinfo']]);
    assert.equal(
      resolveCompileFlags({ database, filePath: path.join(ROOT, 'other.cu'), settings: { defines: ['X'] } }).origin,
      'settings',
    );
  });

  it('finds compile_commands.json in the root, then build/, or only in the configured directory', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ccdb-'));
    try {
      assert.equal(await findCompileCommandsFile({ workspaceRoots: [root] }), null);
      fs.mkdirSync(path.join(root, 'build'));
      fs.writeFileSync(path.join(root, 'build', 'compile_commands.json'), '[]');
      assert.equal(
        await findCompileCommandsFile({ workspaceRoots: [root] }),
        path.join(root, 'build', 'compile_commands.json'),
      );
      fs.writeFileSync(path.join(root, 'compile_commands.json'), '[]');
      assert.equal(await findCompileCommandsFile({ workspaceRoots: [root] }), path.join(root, 'compile_commands.json'));
      assert.equal(await findCompileCommandsFile({ workspaceRoots: [root], configuredDir: 'out' }), null);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
