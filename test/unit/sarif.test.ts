import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { toSarif } from '../../server/src/cli/sarif';
import { knownRules } from '../../server/src/cli/rule-catalog';
import type { CheckJson, CheckJsonDiagnostic } from '../../server/src/cli/check-json-types';
import { checkJsonOf, REPO_ROOT } from '../support/cli-run';

// The SARIF 2.1.0 schema as the SARIF SDK ships it (npm @microsoft/sarif-multitool-linux 5.7.0, sarif-2.1.0.json).
const schema = JSON.parse(
  readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'sarif', 'sarif-schema-2.1.0.json'), 'utf8'),
);
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validateSarif = ajv.compile(schema);

function assertValid(log: object): void {
  const ok = validateSarif(JSON.parse(JSON.stringify(log)));
  assert.ok(ok, JSON.stringify(validateSarif.errors?.slice(0, 5), null, 2));
}

interface SarifResult {
  ruleId: string;
  ruleIndex: number;
  level: string;
  message: { text: string };
  locations: Array<{
    physicalLocation: {
      artifactLocation: { uri: string; uriBaseId?: string };
      region: { startLine: number; startColumn: number };
    };
  }>;
  partialFingerprints: Record<string, string>;
}
interface SarifRun {
  tool: {
    driver: {
      name: string;
      version: string;
      rules: Array<{
        id: string;
        name: string;
        help: { text: string; markdown: string };
        defaultConfiguration: { level: string };
      }>;
    };
  };
  results: SarifResult[];
  originalUriBaseIds: Record<string, { uri: string }>;
  columnKind: string;
}
const runOf = (log: object) => (log as { runs: SarifRun[] }).runs[0];

function checkOf(files: Array<{ path: string; diagnostics: CheckJsonDiagnostic[] }>): CheckJson {
  return { version: 1, archs: ['sm_90'], files: files.map((f) => ({ kernels: [], launches: [], branches: [], ...f })) };
}
const diag = (
  line: number,
  code: string,
  severity: CheckJsonDiagnostic['severity'],
  message = `${code} here`,
): CheckJsonDiagnostic => ({ line, column: 3, severity, code, message });

describe('check --format sarif (toSarif)', function () {
  this.timeout(60_000);
  it("turns the examples' findings into a SARIF 2.1.0 log that the schema accepts, with rules, levels and locations", async () => {
    const check = await checkJsonOf(['--no-nvcc', '--arch', 'sm_80,sm_90', 'examples']);
    const log = toSarif(check, { toolVersion: '0.1.0', baseDir: REPO_ROOT });
    assertValid(log);
    const run = runOf(log);
    assert.equal(run.tool.driver.name, 'cuda-occupancy');
    assert.equal(run.tool.driver.version, '0.1.0');
    assert.equal(run.columnKind, 'utf16CodeUnits');
    assert.equal(run.originalUriBaseIds['%SRCROOT%'].uri, pathToFileURL(REPO_ROOT).href + '/');

    const diagnostics = check.files.flatMap((f) => f.diagnostics.map((d) => ({ file: f.path, ...d })));
    assert.ok(diagnostics.length >= 2, 'the examples have findings');
    assert.equal(run.results.length, diagnostics.length);
    run.results.forEach((result, i) => {
      const d = diagnostics[i];
      assert.equal(result.ruleId, d.code);
      assert.equal(run.tool.driver.rules[result.ruleIndex].id, d.code);
      assert.equal(result.message.text, d.message);
      const { artifactLocation, region } = result.locations[0].physicalLocation;
      assert.deepEqual(artifactLocation, { uri: d.file, uriBaseId: '%SRCROOT%' });
      assert.deepEqual(region, { startLine: d.line, startColumn: d.column });
    });

    // examples/reduce.cu launches pair_mix (bounded to 128 threads) with 256: an error at the launch.
    const bound = run.results.find((r) => r.ruleId === 'launch-exceeds-bounds');
    assert.ok(bound);
    assert.equal(bound.level, 'error');
    assert.deepEqual(bound.locations[0].physicalLocation, {
      artifactLocation: { uri: 'examples/reduce.cu', uriBaseId: '%SRCROOT%' },
      region: { startLine: 39, startColumn: 3 },
    });
    const rule = run.tool.driver.rules[bound.ruleIndex];
    assert.equal(rule.name, 'LaunchExceedsBounds');
    assert.equal(rule.defaultConfiguration.level, 'error');
    assert.match(rule.help.markdown, /\*\*How to fix:\*\*/);
    assert.doesNotMatch(rule.help.text, /`/);
    for (const result of run.results.filter((r) => r.ruleId === 'block-not-warp-multiple'))
      assert.equal(result.level, 'warning');
    // a divergent branch is a warning when its idle lanes cost a material share of the kernel, else a hint (a SARIF note)
    for (const result of run.results.filter((r) => r.ruleId === 'divergent-branch'))
      assert.ok(['warning', 'note'].includes(result.level), result.level);

    // The schema has teeth: an LSP-style level or a 0 line is rejected.
    const broken = (patch: Partial<SarifResult>) => ({
      ...log,
      runs: [{ ...run, results: [{ ...run.results[0], ...patch }] }],
    });
    assert.equal(validateSarif(JSON.parse(JSON.stringify(broken({ level: 'info' })))), false);
    const zeroLine = { ...run.results[0].locations[0].physicalLocation, region: { startLine: 0, startColumn: 1 } };
    assert.equal(
      validateSarif(JSON.parse(JSON.stringify(broken({ locations: [{ physicalLocation: zeroLine }] })))),
      false,
    );
  });

  it('maps info and hint to note, and keeps unknown codes working with a generic rule', () => {
    const log = toSarif(
      checkOf([
        {
          path: 'src/k.cu',
          diagnostics: [
            diag(4, 'launch-unresolved-kernel', 'info'),
            diag(5, 'low-occupancy', 'hint'),
            diag(6, 'some-future-check', 'warning'),
            diag(7, 'some-future-check', 'error', 'again'),
          ],
        },
      ]),
      { toolVersion: 'dev', baseDir: '/work/repo' },
    );
    assertValid(log);
    const run = runOf(log);
    assert.deepEqual(
      run.results.map((r) => r.level),
      ['note', 'note', 'warning', 'error'],
    );
    const generic = run.tool.driver.rules.filter((r) => r.id === 'some-future-check');
    assert.equal(generic.length, 1, 'one rule per unknown code');
    assert.equal(generic[0].name, 'SomeFutureCheck');
    assert.equal(generic[0].defaultConfiguration.level, 'warning');
    assert.equal(run.tool.driver.rules[run.results[3].ruleIndex].id, 'some-future-check');
    assert.equal(run.tool.driver.rules.length, knownRules().length + 1);
  });

  it('writes paths inside the base directory relative to %SRCROOT% (percent-encoded), and others as file URIs', () => {
    const base = path.resolve('/work/repo');
    const outside = path.resolve('/elsewhere/lib/a b.cu');
    const log = toSarif(
      checkOf([
        { path: 'src/my kernels/k#1.cu', diagnostics: [diag(1, 'block-too-large', 'error')] },
        { path: outside, diagnostics: [diag(2, 'block-too-large', 'error')] },
        { path: '../sibling/x.cu', diagnostics: [diag(3, 'block-too-large', 'error')] },
      ]),
      { toolVersion: '1.2.3', baseDir: base },
    );
    assertValid(log);
    const locations = runOf(log).results.map((r) => r.locations[0].physicalLocation.artifactLocation);
    assert.deepEqual(locations[0], { uri: 'src/my%20kernels/k%231.cu', uriBaseId: '%SRCROOT%' });
    assert.deepEqual(locations[1], { uri: pathToFileURL(outside).href });
    assert.deepEqual(locations[2], { uri: pathToFileURL(path.resolve(base, '../sibling/x.cu')).href });
  });

  it('gives each finding a fingerprint that survives moving the code and tells repeats apart', () => {
    const at = (lines: number[]) =>
      runOf(
        toSarif(
          checkOf([
            {
              path: 'k.cu',
              diagnostics: lines.map((l) => diag(l, 'block-not-warp-multiple', 'warning', 'same message')),
            },
          ]),
          { toolVersion: 'dev', baseDir: '/r' },
        ),
      ).results.map((r) => r.partialFingerprints['cudaOccupancyFinding/v1']);
    const before = at([10, 20]);
    const after = at([30, 40]);
    assert.deepEqual(after, before);
    assert.notEqual(before[0], before[1]);
  });

  it('has a rule with help for every finding code in the server sources', () => {
    const codes = new Set<string>();
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) =>
        statSync(path.join(dir, n)).isDirectory()
          ? walk(path.join(dir, n))
          : n.endsWith('.ts')
            ? [path.join(dir, n)]
            : [],
      );
    for (const file of walk(path.join(REPO_ROOT, 'server', 'src'))) {
      const text = readFileSync(file, 'utf8');
      // `code: 'x'` and `code: cond ? 'x' : 'y'`, not the strings a condition compares with.
      for (const m of text.matchAll(/\bcode:\s*([^,\n]+)/g))
        for (const s of m[1].matchAll(/(?<![=!]==\s*)'([a-z]+(?:-[a-z]+)+)'/g)) codes.add(s[1]);
      for (const m of text.matchAll(/_CODES\s*=\s*\{([^}]*)\}/g))
        for (const s of m[1].matchAll(/'([a-z]+(?:-[a-z]+)+)'/g)) codes.add(s[1]);
    }
    assert.ok(
      codes.has('launch-exceeds-bounds') && codes.has('divergent-branch') && codes.has('block-too-large'),
      [...codes].join(', '),
    );
    const known = new Set(knownRules().map((r) => r.id));
    const missing = [...codes].filter((c) => !known.has(c));
    assert.deepEqual(missing, [], `codes without a rule in server/src/cli/rule-catalog.ts: ${missing.join(', ')}`);
    for (const rule of knownRules()) {
      assert.match(rule.name, /^[A-Z][A-Za-z]+$/);
      assert.ok(rule.short.length > 20 && rule.full.length > 60 && rule.fix.length > 30, rule.id);
    }
  });
});
