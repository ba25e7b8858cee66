// `check` at repository scale: peak RSS, CPU and wall time, and when the first result reached stdout,
// of `check --no-nvcc` over synthetic repositories of N files (scripts/gen-repo.mjs), per format and
// jobs. A measurement, not a test: it prints one line per run (and JSON with --json).
//
//   node scripts/check-scale.mjs [--sizes=1000,10000] [--formats=json,text,sarif] [--jobs=1,default]
//                                [--cli=dist/cli/cuda-occupancy.js] [--keep=DIR] [--json]
//
// Each repository is written under the system's temporary folder and deleted after its runs (unless
// --keep=DIR names where to keep it; an existing one of the same size there is reused).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeRepo } from './gen-repo.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const option = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const sizes = option('sizes', '1000,10000').split(',').map(Number);
const formats = option('formats', 'json,text,sarif').split(',');
const jobsList = option('jobs', '1,default').split(',');
const cli = resolve(root, option('cli', 'dist/cli/cuda-occupancy.js'));
const keep = option('keep', null);
const asJson = process.argv.includes('--json');

/** One run: `/usr/bin/time -v` around the CLI, stdout read as it comes (only its size and first moment kept). */
function measure(dir, format, jobs) {
  const args = ['-v', 'nice', process.execPath, cli, 'check', '.', '--no-nvcc', '--format', format];
  if (jobs !== 'default') args.push('--jobs', jobs);
  return new Promise((done, fail) => {
    const start = performance.now();
    const child = spawn('/usr/bin/time', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let firstOut = null;
    let outBytes = 0;
    let err = '';
    child.stdout.on('data', (chunk) => {
      firstOut ??= performance.now() - start;
      outBytes += chunk.length;
    });
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', fail);
    child.on('close', () => {
      const wall = performance.now() - start;
      const field = (label) => Number(new RegExp(`${label}: ([\\d.]+)`).exec(err)?.[1] ?? NaN);
      done({
        format,
        jobs,
        exit: field('Exit status'),
        wallS: wall / 1000,
        firstOutS: firstOut === null ? null : firstOut / 1000,
        cpuS: field('User time \\(seconds\\)') + field('System time \\(seconds\\)'),
        peakRssMB: field('Maximum resident set size \\(kbytes\\)') / 1024,
        outMB: outBytes / 1e6,
      });
    });
  });
}

const results = [];
for (const n of sizes) {
  const dir = keep ? join(resolve(keep), `repo-${n}`) : mkdtempSync(join(os.tmpdir(), `check-scale-${n}-`));
  if (!existsSync(join(dir, 'mod000'))) {
    mkdirSync(dir, { recursive: true });
    const bytes = writeRepo(n, dir);
    console.error(`${n} files, ${(bytes / 1e6).toFixed(1)} MB`);
  }
  try {
    for (const jobs of jobsList)
      for (const format of formats) {
        const r = { files: n, ...(await measure(dir, format, jobs)) };
        results.push(r);
        console.log(
          `N=${n} ${format.padEnd(5)} jobs=${jobs.padEnd(7)} exit ${r.exit}  wall ${r.wallS.toFixed(1)} s  cpu ${r.cpuS.toFixed(1)} s  ` +
            `first output ${r.firstOutS === null ? '-' : `${r.firstOutS.toFixed(1)} s`}  peak RSS ${r.peakRssMB.toFixed(0)} MB  output ${r.outMB.toFixed(1)} MB`,
        );
      }
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}
if (asJson) console.log(JSON.stringify(results, null, 2));
