// The long fuzz run (`npm run fuzz`): the property tests of test/unit/fuzz-core,
// test/server/fuzz-server, the incremental source text and chunks, and the CLI's
// JSON property, with many more cases.
//
//   FUZZ_RUNS=5000 npm run fuzz      cases per core property (server properties get 10% or less)
//   FUZZ_SEED=123 npm run fuzz       replay a seed (printed by every run)
//   node scripts/fuzz.mjs --no-build skip the build and the test compile
//
// Every property appends its count to a report; the total is printed at the end.
// A failing case is left in out/fuzz-failures/, the case running when the process
// died (out of memory, a hang) in out/fuzz-failures/last-case.json.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = process.env.FUZZ_RUNS?.trim() || '2000';
const seed = process.env.FUZZ_SEED?.trim() || String((Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0);
const failures = join(root, 'out', 'fuzz-failures');
const report = join(failures, 'report.jsonl');

function run(command, args, env = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return result.status ?? 1;
}

if (!process.argv.includes('--no-build')) {
  if (run(process.execPath, ['scripts/build.mjs']) !== 0) process.exit(1);
  // The compile may report errors in unrelated tests and still emit; the fuzz files must exist.
  if (run(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'test/tsconfig.json']) !== 0)
    console.warn('fuzz: the test compile reported errors (see above); running what it emitted');
}

mkdirSync(failures, { recursive: true });
rmSync(report, { force: true });
console.log(`fuzz: FUZZ_RUNS=${runs} FUZZ_SEED=${seed}`);

const env = { FUZZ_RUNS: runs, FUZZ_SEED: seed, FUZZ_REPORT: report, FUZZ_TRACE: join(failures, 'last-case.json') };
const mocha = join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
const suites = [
  ['out/test/unit/fuzz-core.test.js', 'out/test/server/fuzz-server.test.js'],
  // The incremental text layer under the keystroke path: masking from the previous version.
  ['out/test/unit/source-text-incremental.test.js', '--grep', 'fresh|previous|edited|any edits'],
  ['out/test/unit/cli-errors.test.js', '--grep', 'on any mutated or random source'],
];
let status = 0;
for (const suite of suites) {
  for (const file of suite.filter((a) => a.endsWith('.js')))
    if (!existsSync(join(root, file))) throw new Error(`fuzz: ${file} is missing; build the tests first`);
  status ||= run(
    process.execPath,
    ['--max-old-space-size=4096', mocha, '--timeout', '0', '--reporter', 'spec', ...suite],
    env,
  );
}

const rows = existsSync(report)
  ? readFileSync(report, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
let total = 0;
console.log('\nfuzz summary');
for (const row of rows) {
  total += row.cases;
  console.log(`  ${row.failed ? 'FAILED' : 'ok    '} ${String(row.cases).padStart(7)} cases  ${row.name}`);
}
console.log(
  `  total: ${total} cases, seed ${seed}${status ? ' — FAILURES (replay with the FUZZ_SEED and FUZZ_RUNS above)' : ', no failures'}`,
);
if (status === 0) rmSync(env.FUZZ_TRACE, { force: true });
process.exit(status);
