// Is `-lineinfo` register-neutral? Compiles each file of eval/launches/compile.json (and a few
// OpenMM kernels, with the defines its runtime compiler would pass) the way the figures compile
// does (server/src/nvcc/compile-resources.ts: the file's flags, one -gencode per arch, -fatbin,
// -Xptxas -v), once as it is and once with `-lineinfo -keep -keep-dir DIR` (what the figures
// compile would add to keep its PTX and cubin for the pressure pass), and compares every
// function's registers, spill stores and loads, stack frame, shared memory, barriers and constant
// memory per architecture. It also times both runs. A dev tool: it needs the corpus and nvcc.
//
//   node eval/pressure/lineinfo-neutrality.mjs [--corpus DIR] [--project NAME] [--files PART,PART] [--archs sm_80,sm_90] [--json]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { argv, corpus, entryFlags, opt, repo, table } from './corpus-compile.mjs';

const nvcc = process.env.NVCC ?? 'nvcc';
const archs = (opt('--archs') ?? 'sm_80,sm_90').split(',');
const out = path.join(os.tmpdir(), 'cuda-occupancy-lineinfo');
mkdirSync(out, { recursive: true });

// OpenMM compiles its kernels at run time, with a prelude and defines; these are the ones that
// let three of its files compile on their own.
const OPENMM_DIR = 'platforms/cuda/src/kernels';
const OPENMM_FLAGS = [
  ...['real', 'mixed'].flatMap((t) => [
    `-D${t}=float`,
    ...[2, 3, 4].flatMap((n) => [`-D${t}${n}=float${n}`, `-Dmake_${t}${n}=make_float${n}`]),
  ]),
  ...['ZSIZE', 'YSIZE', 'XSIZE', 'PACKED_XSIZE', 'PACKED_YSIZE', 'PACKED_ZSIZE'].map((d) => `-D${d}=32`),
  '-include',
  `${OPENMM_DIR}/common.cu`,
  '-include',
  `${OPENMM_DIR}/vectorOps.cu`,
];
const openmm = ['parallel.cu', 'utilities.cu', 'fftR2C.cu'].map((f) => ({
  project: 'openmm',
  file: `${OPENMM_DIR}/${f}`,
  flags: OPENMM_FLAGS,
}));

// The ptxas parser, bundled from the sources.
const bundle = path.join(out, 'ptxas-output.mjs');
execFileSync(path.join(repo, 'node_modules', '.bin', 'esbuild'), [
  path.join(repo, 'server/src/core/compiler/ptxas-output.ts'),
  '--bundle',
  '--format=esm',
  `--outfile=${bundle}`,
  '--log-level=warning',
]);
const { parsePtxasOutput } = await import(bundle);

const FIELDS = [
  'numRegs',
  'spillStoreBytes',
  'spillLoadBytes',
  'stackFrameBytes',
  'sharedSizeBytes',
  'barriers',
  'constBytes',
  'localBytes',
];

function compile(entry, extra) {
  const cwd = path.join(corpus, entry.project);
  const dir = mkdtempSync(path.join(out, 'run-'));
  const args = [
    ...entryFlags(entry),
    ...archs.map((a) => `-gencode=arch=${a.replace(/^sm_/, 'compute_')},code=${a}`),
    '-fatbin',
    '-o',
    path.join(dir, 'out.fatbin'),
    ...extra(dir),
    '-Xptxas',
    '-v',
    entry.file,
  ];
  const started = performance.now();
  const run = spawnSync(nvcc, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 600000 });
  const ms = performance.now() - started;
  rmSync(dir, { recursive: true, force: true });
  if (run.error?.code === 'ETIMEDOUT')
    return { ok: false, ms, error: `nvcc timed out after ${Math.round(ms / 1000)} s` };
  if (run.status !== 0) return { ok: false, ms, error: (run.stderr ?? '').split('\n').find((l) => /error/.test(l)) };
  const parsed = parsePtxasOutput(`${run.stderr}\n${run.stdout}`);
  const figures = new Map();
  for (const f of [...parsed.entries, ...parsed.functions])
    figures.set(`${f.arch} ${f.isEntry ? 'entry' : 'function'} ${f.mangledName}`, f);
  return { ok: true, ms, figures };
}

const only = opt('--files')?.split(',');
const files = [...table.files, ...openmm].filter(
  (e) => (!opt('--project') || e.project === opt('--project')) && (!only || only.some((f) => e.file.includes(f))),
);
const results = [];
for (const entry of files) {
  const plain = compile(entry, () => []);
  const lineinfo = compile(entry, (dir) => ['-lineinfo', '-keep', `-keep-dir=${dir}`]);
  const row = { project: entry.project, file: entry.file, plainMs: plain.ms, lineinfoMs: lineinfo.ms, differences: [] };
  if (!plain.ok || !lineinfo.ok) {
    row.error = plain.error ?? lineinfo.error ?? 'nvcc failed';
    results.push(row);
    console.error(`${entry.project}/${entry.file}: ${row.error}`);
    continue;
  }
  row.functions = plain.figures.size;
  row.entries = [...plain.figures.values()].filter((f) => f.isEntry).length;
  for (const [key, a] of plain.figures) {
    const b = lineinfo.figures.get(key);
    if (!b) {
      row.differences.push({ function: key, missing: 'with -lineinfo' });
      continue;
    }
    for (const field of FIELDS)
      if (a[field] !== b[field]) row.differences.push({ function: key, field, plain: a[field], lineinfo: b[field] });
  }
  for (const key of lineinfo.figures.keys())
    if (!plain.figures.has(key)) row.differences.push({ function: key, missing: 'without -lineinfo' });
  results.push(row);
  console.error(
    `${entry.project}/${entry.file}: ${row.functions} functions, ${row.differences.length} differences, ${Math.round(plain.ms)} / ${Math.round(lineinfo.ms)} ms`,
  );
}

const compared = results.filter((r) => !r.error);
const summary = {
  archs,
  files: compared.length,
  failed: results.length - compared.length,
  functions: compared.reduce((s, r) => s + r.functions, 0),
  entries: compared.reduce((s, r) => s + r.entries, 0),
  differences: compared.reduce((s, r) => s + r.differences.length, 0),
  plainMs: Math.round(compared.reduce((s, r) => s + r.plainMs, 0)),
  lineinfoMs: Math.round(compared.reduce((s, r) => s + r.lineinfoMs, 0)),
  projects: Object.fromEntries(
    [...new Set(compared.map((r) => r.project))].map((p) => {
      const rows = compared.filter((r) => r.project === p);
      return [p, { files: rows.length, functions: rows.reduce((s, r) => s + r.functions, 0) }];
    }),
  ),
};
if (argv.includes('--json')) console.log(JSON.stringify({ summary, results }, null, 2));
else {
  console.log(JSON.stringify(summary, null, 2));
  for (const r of compared) for (const d of r.differences) console.log(`${r.project}/${r.file}: ${JSON.stringify(d)}`);
}
