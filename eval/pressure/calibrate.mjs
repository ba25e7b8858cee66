// Calibrates the PTX register-pressure estimate (server/src/core/compiler/ptx-liveness.ts) on the
// development corpus: for each file of eval/launches/compile.json, `nvcc -ptx -lineinfo` with the
// file's flags, then ptxas on that PTX for the registers it allocates, and compares each kernel's
// peak of live 32-bit registers with the allocated count. A dev tool: it needs the corpus and nvcc.
//
//   node eval/pressure/calibrate.mjs [--corpus DIR] [--project NAME] [--json]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { argv, corpus, entryFlags, opt, repo, table } from './corpus-compile.mjs';

const nvcc = process.env.NVCC ?? '/usr/local/cuda/bin/nvcc';
const ptxas = path.join(path.dirname(nvcc), 'ptxas');
const out = path.join(os.tmpdir(), 'cuda-occupancy-pressure');
mkdirSync(out, { recursive: true });

// The liveness pass, bundled from the sources (the CLI does not expose it on its own).
const bundle = path.join(out, 'ptx-liveness.mjs');
execFileSync(path.join(repo, 'node_modules', '.bin', 'esbuild'), [
  path.join(repo, 'server/src/core/compiler/ptx-liveness.ts'),
  '--bundle',
  '--format=esm',
  `--outfile=${bundle}`,
  '--log-level=warning',
]);
const { ptxPressure } = await import(bundle);

const rows = [];
for (const entry of table.files) {
  if (opt('--project') && entry.project !== opt('--project')) continue;
  const cwd = path.join(corpus, entry.project);
  const ptxFile = path.join(out, `${entry.project}__${entry.file.replace(/\//g, '__')}.ptx`);
  const args = ['-ptx', '-lineinfo', `-arch=${table.arch}`, '-o', ptxFile, entry.file, ...entryFlags(entry)];
  const ptx = spawnSync(nvcc, args, { cwd, encoding: 'utf8' });
  if (ptx.status !== 0) {
    console.error(`${entry.project}/${entry.file}: nvcc -ptx failed`);
    continue;
  }
  const allocated = new Map();
  const ran = spawnSync(ptxas, [`-arch=${table.arch}`, '-v', ptxFile, '-o', '/dev/null'], { encoding: 'utf8' });
  let current = null;
  for (const line of (ran.stderr ?? '').split('\n')) {
    const fn = /Compiling entry function '([^']+)'/.exec(line);
    if (fn) current = fn[1];
    const used = /Used (\d+) registers/.exec(line);
    if (used && current) allocated.set(current, Number(used[1]));
  }
  for (const k of ptxPressure(readFileSync(ptxFile, 'utf8'))) {
    const regs = allocated.get(k.name);
    if (regs === undefined || k.peak === 0) continue;
    rows.push({
      project: entry.project,
      file: entry.file,
      kernel: k.name,
      peak: k.peak,
      peakLine: k.peakLine,
      allocated: regs,
      ratio: k.peak / regs,
    });
  }
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * q;
  return s.length ? s[Math.floor(i)] + (s[Math.ceil(i)] - s[Math.floor(i)]) * (i - Math.floor(i)) : NaN;
};
const summary = (list) => ({
  kernels: list.length,
  p25: quantile(
    list.map((r) => r.ratio),
    0.25,
  ),
  median: quantile(
    list.map((r) => r.ratio),
    0.5,
  ),
  p75: quantile(
    list.map((r) => r.ratio),
    0.75,
  ),
  within25pct: list.filter((r) => Math.abs(r.ratio - 1) <= 0.25).length,
});
const projects = [...new Set(rows.map((r) => r.project))];
const result = {
  arch: table.arch,
  total: summary(rows),
  projects: Object.fromEntries(projects.map((p) => [p, summary(rows.filter((r) => r.project === p))])),
};
if (argv.includes('--json')) console.log(JSON.stringify({ ...result, rows }, null, 2));
else {
  console.log('project             kernels  peak/allocated: p25  median  p75   within ±25%');
  for (const [p, s] of [...Object.entries(result.projects), ['TOTAL', result.total]]) {
    console.log(
      `${p.padEnd(20)}${String(s.kernels).padStart(7)}  ${s.p25.toFixed(2).padStart(20)}  ${s.median.toFixed(2).padStart(6)}  ${s.p75.toFixed(2).padStart(5)}   ${s.within25pct}`,
    );
  }
}
