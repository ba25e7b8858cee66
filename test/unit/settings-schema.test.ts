/** One schema for settings: package.json lists exactly its keys, defaults and types. */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_SETTINGS, packageJsonProperties, readSettings } from '../../server/src/settings';

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
    const { settings, problems } = readSettings({ architectures: ['sm_90'], nvcc: { enabled: false, timeoutSeconds: 5000 }, 'codeLens.enabled': 'no' });
    assert.deepEqual(settings.architectures, ['sm_90']);
    assert.equal(settings['nvcc.enabled'], false);
    assert.equal(settings['nvcc.timeoutSeconds'], 600, 'clamped to the maximum');
    assert.equal(settings['codeLens.enabled'], DEFAULT_SETTINGS['codeLens.enabled']);
    assert.deepEqual(problems, ['cudaOccupancy.codeLens.enabled: expected boolean, got "no"; using true']);
  });

  it('survives settings that are not objects', () => {
    for (const raw of [null, undefined, 42, 'x', [1, 2]]) assert.deepEqual(readSettings(raw).settings, DEFAULT_SETTINGS);
  });
});
