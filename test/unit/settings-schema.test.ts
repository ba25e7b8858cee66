/** One schema for settings: package.json lists exactly its keys, defaults and types. */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  DEFAULT_SETTINGS,
  packageJsonProperties,
  readSettings,
  userOnlyKeys,
  withoutUntrustedFiles,
  WORKSPACE_KEYS_FIELD,
} from '../../server/src/settings';

const pkg = JSON.parse(readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
const contributed: Record<string, { type: string; default: unknown }> = pkg.contributes.configuration.properties;

describe('settings schema', () => {
  it('package.json contributes exactly the schema (plus the language client trace setting)', () => {
    const expected = packageJsonProperties();
    const ours = Object.fromEntries(Object.entries(contributed).filter(([k]) => k !== 'cudaOccupancy.trace.server'));
    assert.deepEqual(ours, expected);
    assert.ok(contributed['cudaOccupancy.trace.server'], 'the trace setting vscode-languageclient reads');
  });

  it('reads nested and dotted settings, and falls back to defaults on wrong types with a message', () => {
    const { settings, problems } = readSettings({
      architectures: ['sm_90'],
      nvcc: { enabled: false, timeoutSeconds: 5000 },
      'codeLens.enabled': 'no',
    });
    assert.deepEqual(settings.architectures, ['sm_90']);
    assert.equal(settings['nvcc.enabled'], false);
    assert.equal(settings['nvcc.timeoutSeconds'], 600, 'clamped to the maximum');
    assert.equal(settings['codeLens.enabled'], DEFAULT_SETTINGS['codeLens.enabled']);
    assert.deepEqual(problems, ['cudaOccupancy.codeLens.enabled: expected boolean, got "no"; using true']);
  });

  it('survives settings that are not objects', () => {
    for (const raw of [null, undefined, 42, 'x', [1, 2]])
      assert.deepEqual(readSettings(raw).settings, DEFAULT_SETTINGS);
  });

  it('makes the allow-list and the limits user settings only (scope machine), which a workspace cannot set', () => {
    assert.deepEqual(userOnlyKeys(), [
      'nvcc.allowedCompilers',
      'nvcc.memoryLimitMB',
      'limits.fileMB',
      'limits.documentMB',
      'limits.lineLength',
    ]);
    for (const key of userOnlyKeys())
      assert.equal((contributed[`cudaOccupancy.${key}`] as { scope?: string }).scope, 'machine', key);
    const raw = {
      nvcc: { allowedCompilers: ['/ws/**'], args: ['-DX'] },
      limits: { documentMB: 256 },
      [WORKSPACE_KEYS_FIELD]: ['nvcc.allowedCompilers', 'nvcc.args', 'limits.documentMB', 'not.a.key'],
    };
    const read = readSettings(raw);
    assert.deepEqual(read.settings['nvcc.allowedCompilers'], []);
    assert.equal(read.settings['limits.documentMB'], DEFAULT_SETTINGS['limits.documentMB']);
    assert.deepEqual(
      read.settings['nvcc.args'],
      ['-DX'],
      'a workspace may set flags (the argument policy filters them)',
    );
    assert.deepEqual([...(read.fromWorkspace ?? [])], ['nvcc.allowedCompilers', 'nvcc.args', 'limits.documentMB']);
    assert.deepEqual(read.problems, [
      'cudaOccupancy.nvcc.allowedCompilers is set in the workspace settings: ignored (user settings only)',
      'cudaOccupancy.limits.documentMB is set in the workspace settings: ignored (user settings only)',
    ]);
    assert.equal(
      readSettings({ nvcc: { allowedCompilers: ['/usr/bin/*'] } }).fromWorkspace,
      null,
      "a client that does not say: the user's",
    );
  });

  it('drops the build log an untrusted workspace names, but not one the user set', () => {
    const fromWorkspace = withoutUntrustedFiles(
      readSettings({ ptxasLog: 'build/ptxas.log', [WORKSPACE_KEYS_FIELD]: ['ptxasLog'] }),
    );
    assert.equal(fromWorkspace.settings.ptxasLog, '');
    assert.deepEqual(fromWorkspace.problems, ['cudaOccupancy.ptxasLog is ignored in an untrusted workspace']);
    assert.equal(
      withoutUntrustedFiles(readSettings({ ptxasLog: 'build/ptxas.log' })).settings.ptxasLog,
      '',
      "origin unknown: the workspace's",
    );
    assert.equal(
      withoutUntrustedFiles(readSettings({ ptxasLog: '/home/u/ptxas.log', [WORKSPACE_KEYS_FIELD]: [] })).settings
        .ptxasLog,
      '/home/u/ptxas.log',
    );
  });
});
