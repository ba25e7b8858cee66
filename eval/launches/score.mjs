#!/usr/bin/env node
// Scores `cuda-occupancy check` against the hand-checked launch labels in labels.json, on the
// development corpus (see README.md). A dev tool: it needs the corpus, never runs in CI.
//
//   node eval/launches/score.mjs [--corpus DIR] [--cli PATH] [--mode no-nvcc|nvcc|both] [--project NAME]
//                                [--nvcc PATH] [--deps DIR] [--timeout SECONDS] [--json] [--details] [--keep]
//
// --mode nvcc writes a compile_commands.json (the flags of compile.json) into a temp dir and passes -p.
// Plain Node, no dependencies.
import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import * as os from 'node:os';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
};
const flag = (name) => argv.includes(name);
if (flag('--help') || flag('-h')) {
  console.log(
    'usage: node eval/launches/score.mjs [--corpus DIR] [--cli PATH] [--mode no-nvcc|nvcc|both] [--project NAME] [--nvcc PATH] [--deps DIR] [--timeout S] [--json] [--details] [--keep]',
  );
  process.exit(0);
}
const corpus = path.resolve(opt('--corpus', process.env.CUDA_DEV_CORPUS ?? path.join(repo, '..', 'dev-corpus')));
const cli = path.resolve(opt('--cli', path.join(repo, 'dist', 'cli', 'cuda-occupancy.js')));
const mode = opt('--mode', 'both');
const onlyProject = opt('--project', null);
const nvcc = opt('--nvcc', null);
const depsDir = path.resolve(opt('--deps', process.env.CUDA_EVAL_DEPS ?? path.join(repo, '..', 'eval-data', 'deps')));
const timeout = opt('--timeout', '900');
if (!existsSync(corpus)) {
  console.error(
    `score: no development corpus at ${corpus} (set CUDA_DEV_CORPUS or --corpus; eval/launches/README.md says how to make it)`,
  );
  process.exit(2);
}
if (!existsSync(cli)) {
  console.error(`score: no CLI at ${cli} (run npm run build, or pass --cli)`);
  process.exit(2);
}
if (!['no-nvcc', 'nvcc', 'both'].includes(mode)) {
  console.error(`score: --mode must be no-nvcc, nvcc or both, got ${mode}`);
  process.exit(2);
}

const labels = JSON.parse(readFileSync(path.join(here, 'labels.json'), 'utf8'));
const compileTable = JSON.parse(readFileSync(path.join(here, 'compile.json'), 'utf8'));
const ARCH = labels.arch ?? 'sm_80';
const projects = [...new Set(labels.files.map((f) => f.project))].filter((p) => !onlyProject || p === onlyProject);

// ---- helpers ----
const baseName = (name) => {
  if (!name) return '';
  const s = String(name);
  // drop template arguments (balanced <...>) and anything after the name
  let out = '';
  let depth = 0;
  for (const c of s) {
    if (c === '<') depth++;
    else if (c === '>') depth = Math.max(0, depth - 1);
    else if (depth === 0) out += c;
  }
  out = out.replace(/\(.*$/, '').trim();
  const parts = out.split('::');
  return parts[parts.length - 1].replace(/[^A-Za-z0-9_]/g, '');
};
const sameDims = (a, b) => a && b && a.x === b.x && (a.y ?? 1) === (b.y ?? 1) && (a.z ?? 1) === (b.z ?? 1);
const dimsText = (d) => (d ? [d.x, d.y ?? 1, d.z ?? 1].join('x').replace(/x1x1$|x1$/, '') : 'null');

function entryFor(project, file) {
  const e = compileTable.files.find((f) => f.project === project && f.file === file) ?? { project, file };
  const d = compileTable.defaults?.[project] ?? {};
  const cwd = path.join(corpus, project);
  const includes = (e.include ?? d.include ?? []).map((i) => path.resolve(cwd, i));
  const stubs = (e.stubs ?? d.stubs ?? []).map((s) => path.join(here, 'stubs', s));
  const deps = (e.deps ?? d.deps ?? []).map((x) => path.join(depsDir, x));
  const flags = e.flags ?? d.flags ?? [];
  return {
    directory: cwd,
    file: path.join(cwd, file),
    arguments: [
      'nvcc',
      '-c',
      `-arch=${ARCH}`,
      ...[...includes, ...stubs, ...deps].map((i) => `-I${i}`),
      ...flags,
      path.join(cwd, file),
    ],
  };
}

function runCheck(project, files, withNvcc) {
  const cwd = path.join(corpus, project);
  const args = [cli, 'check', ...files, '--format', 'json', '--arch', ARCH, '--fail-on', 'never', '--timeout', timeout];
  let tmp = null;
  if (!withNvcc) args.push('--no-nvcc');
  else {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-eval-'));
    writeFileSync(
      path.join(tmp, 'compile_commands.json'),
      JSON.stringify(
        files.map((f) => entryFor(project, f)),
        null,
        1,
      ),
    );
    args.push('-p', tmp);
    if (nvcc) args.push('--nvcc', nvcc);
  }
  const t0 = Date.now();
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 30 });
  const seconds = (Date.now() - t0) / 1000;
  if (tmp && !flag('--keep')) rmSync(tmp, { recursive: true, force: true });
  if (r.status !== 0 && r.status !== 1) {
    return {
      error: `cli exited ${r.status}: ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}`,
      seconds,
      notes: r.stderr,
    };
  }
  try {
    return { json: JSON.parse(r.stdout), seconds, notes: (r.stderr || '').trim() };
  } catch (e) {
    return { error: `cannot parse CLI output: ${e.message}`, seconds };
  }
}

// occupancy expected from the truth figures, through the CLI's own calculator (`calc --jsonl`)
const calcCache = new Map();
function expectedOccupancies(queries) {
  const todo = queries.filter((q) => !calcCache.has(q.key));
  if (todo.length) {
    const input =
      todo
        .map((q) =>
          JSON.stringify({
            id: q.key,
            arch: ARCH,
            blockSize: q.block,
            numRegs: q.regs,
            sharedSizeBytes: q.smem,
            dynamicSmemBytes: q.dyn,
          }),
        )
        .join('\n') + '\n';
    const r = spawnSync(process.execPath, [cli, 'calc', '--jsonl'], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
    const lines = r.stdout.split('\n').filter(Boolean);
    lines.forEach((line, i) => {
      const a = JSON.parse(line);
      calcCache.set(a.id ?? todo[i].key, a.ok === false ? null : a);
    });
  }
  return queries.map((q) => calcCache.get(q.key) ?? null);
}

// ---- scoring ----
const COUNTERS = [
  'labels',
  'inactive',
  'found',
  'knowable',
  'right',
  'wrong',
  'unresolved',
  'candSites',
  'candShown',
  'candSingleIn',
  'candSingleOut',
  'unknownSites',
  'claimedUnknown',
  'dynKnown',
  'dynRight',
  'dynWrong',
  'truth',
  'truthFound',
  'occShown',
  'occCheckable',
  'occRight',
  'occWrong',
  'blockTruth',
  'occAny',
  'rangeShown',
  'rangeCheckable',
  'rangeWrong',
  'occUpperBound',
  'launchFails',
  'budgetShown',
  'reports',
  'falseLaunches',
  'macroBodyReports',
  'inactiveReports',
  'files',
  'filesMissing',
];
const zero = () => Object.fromEntries(COUNTERS.map((k) => [k, 0]));

function score(project, run) {
  const c = zero();
  const details = [];
  const byPath = new Map((run.json?.files ?? []).map((f) => [path.normalize(f.path), f]));
  for (const lf of labels.files.filter((f) => f.project === project)) {
    c.files++;
    const tf = byPath.get(path.normalize(lf.file));
    if (!tf) c.filesMissing++;
    const reports = (tf?.launches ?? []).map((r, i) => ({ ...r, _i: i, _used: false }));
    c.reports += reports.length;
    const active = lf.launches.filter((l) => !l.inactive);
    // greedy matching, closest line first
    const matches = new Map();
    const names = (l) => [l.kernel, ...(l.kernelAliases ?? [])].map(baseName);
    const cands = [];
    active.forEach((l, li) => {
      const lines = [l.line, ...(l.altLines ?? [])];
      for (const r of reports) {
        if (!names(l).includes(baseName(r.kernel))) continue;
        const dist = Math.min(...lines.map((x) => Math.abs(x - r.line)));
        if (dist <= 1) cands.push({ li, ri: r._i, dist });
      }
    });
    cands.sort((a, b) => a.dist - b.dist || a.li - b.li);
    const usedL = new Set();
    for (const m of cands) {
      if (usedL.has(m.li) || reports[m.ri]._used) continue;
      usedL.add(m.li);
      reports[m.ri]._used = true;
      matches.set(m.li, reports[m.ri]);
    }
    // reports that match no label
    for (const r of reports) {
      if (r._used) continue;
      const atInactive = lf.launches.some(
        (l) => l.inactive && [l.line, ...(l.altLines ?? [])].some((x) => Math.abs(x - r.line) <= 1),
      );
      const atMacroBody = (lf.macroBodyLines ?? []).some((x) => Math.abs(x - r.line) <= 1);
      if (atInactive) c.inactiveReports++;
      else if (atMacroBody) c.macroBodyReports++;
      else if (lf.complete) {
        c.falseLaunches++;
        details.push({
          file: lf.file,
          line: r.line,
          kernel: r.kernel,
          outcome: 'false-launch',
          tool: dimsText(r.block),
        });
      }
    }
    c.inactive += lf.launches.length - active.length;
    active.forEach((l, li) => {
      c.labels++;
      const r = matches.get(li);
      const d = {
        file: lf.file,
        line: l.line,
        kernel: l.kernel,
        label: l.block ? dimsText(l.block) : l.candidates ? `{${l.candidates.map(dimsText).join(',')}}` : 'null',
      };
      if (l.block) c.knowable++;
      else if (l.candidates) c.candSites++;
      else c.unknownSites++;
      if (l.dynamicSmemBytes !== null && l.dynamicSmemBytes !== undefined) c.dynKnown++;
      if (l.truth) c.truth++;
      if (!r) {
        d.outcome = 'missed';
        details.push(d);
        return;
      }
      c.found++;
      d.tool = dimsText(r.block);
      d.blockExpr = r.blockExpr;
      const toolCands = r.blockCandidates ?? r.candidates ?? null;
      if (l.block) {
        if (!r.block) {
          c.unresolved++;
          d.outcome = 'unresolved';
        } else if (sameDims(r.block, l.block)) {
          c.right++;
          d.outcome = 'right';
        } else {
          c.wrong++;
          d.outcome = 'WRONG';
        }
      } else if (l.candidates) {
        if (Array.isArray(toolCands) && toolCands.length) {
          const set = (xs) =>
            xs
              .map((x) => (typeof x === 'number' ? dimsText({ x }) : dimsText(x)))
              .sort()
              .join(',');
          if (set(toolCands) === set(l.candidates)) {
            c.candShown++;
            d.outcome = 'candidates';
          } else d.outcome = `candidates-differ ${set(toolCands)}`;
        } else if (r.block) {
          if (l.candidates.some((x) => sameDims(x, r.block))) {
            c.candSingleIn++;
            d.outcome = 'single-of-candidates';
          } else {
            c.candSingleOut++;
            c.wrong++;
            d.outcome = 'WRONG (not a candidate)';
          }
        } else d.outcome = 'unresolved-candidates';
      } else if (r.block) {
        c.claimedUnknown++;
        d.outcome = 'claimed-unknowable';
      } else d.outcome = 'null-ok';
      if (
        l.dynamicSmemBytes !== null &&
        l.dynamicSmemBytes !== undefined &&
        r.dynamicSmemBytes !== null &&
        r.dynamicSmemBytes !== undefined
      ) {
        if (r.dynamicSmemBytes === l.dynamicSmemBytes) c.dynRight++;
        else {
          c.dynWrong++;
          d.dyn = `WRONG dyn ${r.dynamicSmemBytes} (label ${l.dynamicSmemBytes})`;
        }
      }
      // A launch the tool says cannot run (launchFails) shows no occupancy, even where the JSON keeps
      // the calculator's answer (0 blocks per SM) with `fails` set.
      if (r.launchFails) {
        c.launchFails++;
        d.fails = r.launchFails;
      }
      // Registers not known (no nvcc), block known: the register budget per occupancy level instead.
      if (r.registerBudget?.[ARCH]?.length) c.budgetShown++;
      const occRaw = r.occupancy?.[ARCH] ?? null;
      const occ = occRaw && !occRaw.fails ? occRaw : null;
      const range = occ ? null : (r.occupancyRange?.[ARCH] ?? null);
      // Unknown dynamic shared memory: the figures are computed without it and are upper bounds
      // (`upperBound` on an occupancy; a range says it by the launch's null dynamicSmemBytes).
      const upper = occ ? occ.upperBound === true : r.dynamicSmemBytes === null || r.dynamicSmemBytes === undefined;
      if (l.truth) {
        c.truthFound++;
        if (occ) c.occShown++;
        if (occ && upper) c.occUpperBound++;
        d.occ = occ ? occ.occupancy : null;
        // The goal's denominator: a compiled kernel (truth) and a block size the tool resolved; shown = an occupancy or a range.
        if (r.block) {
          c.blockTruth++;
          if (occ || range) c.occAny++;
          else d.occOutcome = 'no occupancy with a resolved block';
        }
        if (range) {
          c.rangeShown++;
          d.occRange = `${range.minOccupancy}-${range.maxOccupancy} over ${range.instances}`;
          // Right when every instance the site can launch (the truth) has an occupancy within the range.
          const rblock = l.block ?? (r.block && l.candidates?.some((x) => sameDims(x, r.block)) ? r.block : null);
          const rdyn =
            l.dynamicSmemBytes ?? (l.dynamicSmemCandidates?.includes(r.dynamicSmemBytes) ? r.dynamicSmemBytes : null);
          if (rblock && rdyn !== null && rdyn !== undefined) {
            c.rangeCheckable++;
            const threads = rblock.x * (rblock.y ?? 1) * (rblock.z ?? 1);
            const exp = expectedOccupancies(
              l.truth.instances.map((t) => ({
                key: `${threads}/${t.regs}/${t.smem}/${rdyn}`,
                block: threads,
                regs: t.regs,
                smem: t.smem,
                dyn: rdyn,
              })),
            ).filter(Boolean);
            // An upper-bound range is wrong only where an instance's occupancy is above its top.
            const outside = exp.filter(
              (e) => (!upper && e.occupancy < range.minOccupancy - 1e-9) || e.occupancy > range.maxOccupancy + 1e-9,
            );
            if (outside.length) {
              c.rangeWrong++;
              d.occOutcome = `WRONG range ${range.minOccupancy}-${range.maxOccupancy} (truth ${[...new Set(exp.map((e) => e.occupancy))].join('/')})`;
            }
          }
        }
        // checkable: the block is known (label, or the tool's single value when it is one of the candidates) and so is the dynamic smem
        const block = l.block ?? (r.block && l.candidates?.some((x) => sameDims(x, r.block)) ? r.block : null);
        const dyn =
          l.dynamicSmemBytes ?? (l.dynamicSmemCandidates?.includes(r.dynamicSmemBytes) ? r.dynamicSmemBytes : null);
        if (occ && block && dyn !== null && dyn !== undefined) {
          c.occCheckable++;
          const threads = block.x * (block.y ?? 1) * (block.z ?? 1);
          const qs = l.truth.instances.map((t) => ({
            key: `${threads}/${t.regs}/${t.smem}/${dyn}`,
            block: threads,
            regs: t.regs,
            smem: t.smem,
            dyn,
          }));
          const exp = expectedOccupancies(qs).filter(Boolean);
          // An upper bound is right when the truth does not exceed it; an exact figure must equal it.
          const ok = upper
            ? exp.some(
                (e) =>
                  e.occupancy <= occ.occupancy + 1e-9 &&
                  e.activeBlocksPerMultiprocessor <= occ.activeBlocksPerMultiprocessor,
              )
            : exp.some(
                (e) =>
                  Math.abs(e.occupancy - occ.occupancy) < 1e-9 &&
                  e.activeBlocksPerMultiprocessor === occ.activeBlocksPerMultiprocessor,
              );
          if (ok) c.occRight++;
          else {
            c.occWrong++;
            d.occOutcome = `WRONG occupancy ${upper ? '<= ' : ''}${occ.occupancy} (truth ${[...new Set(exp.map((e) => e.occupancy))].join('/')})`;
          }
        }
      }
      details.push(d);
    });
  }
  return { counts: c, details };
}

// ---- run ----
const modes = mode === 'both' ? ['no-nvcc', 'nvcc'] : [mode];
const results = {};
for (const m of modes) {
  results[m] = {};
  for (const project of projects) {
    const lfs = labels.files.filter((f) => f.project === project);
    const files = [...new Set(lfs.flatMap((f) => [f.file, ...(f.context ?? [])]))];
    const run = runCheck(project, files, m === 'nvcc');
    if (run.error) {
      results[m][project] = { error: run.error, seconds: run.seconds };
      continue;
    }
    const s = score(project, run);
    results[m][project] = { ...s, seconds: run.seconds, notes: run.notes ? run.notes.split('\n').slice(0, 20) : [] };
  }
}

const total = (m) => {
  const t = zero();
  for (const p of projects) for (const k of COUNTERS) t[k] += results[m][p]?.counts?.[k] ?? 0;
  return t;
};

if (flag('--json')) {
  const out = { arch: ARCH, corpus, cli, modes: {} };
  for (const m of modes) {
    out.modes[m] = { projects: {}, total: total(m) };
    for (const p of projects) {
      const r = results[m][p];
      out.modes[m].projects[p] = r.error
        ? { error: r.error }
        : {
            counts: r.counts,
            seconds: r.seconds,
            ...(flag('--details') ? { details: r.details, notes: r.notes } : {}),
          };
    }
  }
  console.log(JSON.stringify(out, null, 1));
} else {
  const cols = [
    ['project', (c, p) => p],
    ['sites', (c) => c.labels],
    ['found', (c) => c.found],
    ['knowable', (c) => c.knowable],
    ['right', (c) => c.right],
    ['WRONG', (c) => c.wrong],
    ['unres', (c) => c.unresolved],
    ['cand', (c) => c.candSites],
    ['candShown', (c) => c.candShown],
    ['candOne', (c) => c.candSingleIn],
    ['unknown', (c) => c.unknownSites],
    ['claimed', (c) => c.claimedUnknown],
    ['dynOK/bad', (c) => `${c.dynRight}/${c.dynWrong}`],
    ['truth', (c) => c.truth],
    ['occShown', (c) => c.occShown],
    ['occOK', (c) => c.occRight],
    ['occBAD', (c) => c.occWrong],
    ['occUB', (c) => c.occUpperBound],
    ['range', (c) => c.rangeShown],
    ['rangeBAD', (c) => c.rangeWrong],
    ['blkTruth', (c) => c.blockTruth],
    ['occAny', (c) => c.occAny],
    ['fails', (c) => c.launchFails],
    ['budget', (c) => c.budgetShown],
    ['false', (c) => c.falseLaunches],
    ['macroBody', (c) => c.macroBodyReports],
    ['inactive', (c) => c.inactiveReports],
  ];
  for (const m of modes) {
    console.log(`\n== ${m} (arch ${ARCH}) ==`);
    const rows = projects.map((p) => {
      const r = results[m][p];
      if (r.error) return [p, `ERROR: ${r.error}`];
      return cols.map(([, f]) => String(f(r.counts, p)));
    });
    rows.push(cols.map(([, f]) => String(f(total(m), 'TOTAL'))));
    const header = cols.map(([h]) => h);
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    const fmt = (r) =>
      r.map((x, i) => (i === 0 ? (x ?? '').padEnd(widths[i]) : (x ?? '').padStart(widths[i]))).join('  ');
    console.log(fmt(header));
    for (const r of rows) console.log(r.length === 2 ? r.join('  ') : fmt(r));
    for (const p of projects)
      if (results[m][p].seconds !== undefined) process.stdout.write(`${p} ${results[m][p].seconds.toFixed(1)}s  `);
    console.log();
    if (flag('--details')) {
      for (const p of projects) {
        const r = results[m][p];
        if (r.error) continue;
        for (const d of r.details) {
          if (['right', 'null-ok'].includes(d.outcome) && !d.occOutcome && !d.dyn) continue;
          console.log(
            `  ${p}/${d.file}:${d.line} ${d.kernel}: ${d.outcome} label=${d.label}${d.tool !== undefined ? ` tool=${d.tool}` : ''}${d.blockExpr ? ` expr=${JSON.stringify(d.blockExpr)}` : ''}${d.dyn ? ` ${d.dyn}` : ''}${d.occRange ? ` range=${d.occRange}` : ''}${d.fails ? ` fails=${JSON.stringify(d.fails)}` : ''}${d.occOutcome ? ` ${d.occOutcome}` : ''}`,
          );
        }
        for (const n of r.notes ?? []) console.log(`  note: ${n}`);
      }
    }
  }
  console.log(`\ncolumns: sites = labelled launch sites (not counting ones in inactive #if branches); found = matched (file, line +-1, kernel name or alias);
knowable = sites whose block the source fixes; right/WRONG/unres = the tool's block for those (WRONG also counts a single value outside a candidate set);
cand = sites with a few possible blocks; candShown = the tool listed exactly that set; candOne = it gave one of them;
unknown = sites with a runtime block; claimed = the tool gave a number there anyway; dynOK/bad = dynamic smem where the label knows it;
truth = sites with ptxas figures; occShown = found ones with an occupancy; occOK/occBAD = compared with calc on the truth figures (when block and smem are known;
an upper bound, shown when the dynamic smem is not known, is OK when the truth does not exceed it); occUB = occShown ones that are upper bounds;
range/rangeBAD = found ones with an occupancy range instead (several instances could run), and those where an instance the site can launch falls outside it;
blkTruth = found sites with ptxas figures whose block the tool resolved; occAny = those showing an occupancy or a range (the goal: 90%);
fails = found sites the tool says cannot run (launchFails; no occupancy counted for them); budget = found sites with a register budget (registers unknown);
false = reported launches on no labelled site in fully labelled files; macroBody/inactive = reports on a macro's body line / in an inactive #if branch.`);
}
