/**
 * Every quick fix offered, applied (issue 25, "a property test"): on the fuzz corpus (the fixtures and
 * examples, as they are and with every launch asking for 64 KB of dynamic shared memory and every kernel
 * annotated at 128 registers, so that every kind of fix is offered; mutated fixtures and the hostile
 * documents for the ranges alone) and on real files of the development corpus (only where it is: CI has
 * none). Each fix's edits must be where the fix says; where the original compiles with nvcc, the fixed file
 * must compile too.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runNvcc } from '../../server/src/nvcc/nvcc-runner';
import { findFirstCompilerError } from '../../server/src/nvcc/compile-resources';
import type { DocumentReport } from '../../server/src/core/analyzer';
import { MAX_TITLE, type QuickFix } from '../../server/src/core/report/quick-fixes';
import { applyEdits, fixesOf, offsetOf, quickFixAnalyzer } from '../support/quick-fix-harness';
import {
  checkProperty,
  fixtureSources,
  fuzzRuns,
  hostileDocuments,
  mutatedSource,
  REPO_ROOT,
} from '../support/fuzz-sources';
import { findNvcc } from '../support/nvcc';
import { findDirectiveRanges, inRanges } from '../../server/src/core/text/preprocessor-lines';

const SET_ATTRIBUTE = /^\(?cudaFuncSetAttribute\((.+), cudaFuncAttributeMaxDynamicSharedMemorySize, (\d+)\)/;

/** Asserts that each edit of `fix` is where its title says, in `text` (the document the report is of). */
function assertWhereItSays(text: string, report: DocumentReport, fix: QuickFix, label: string): void {
  const edits = (fix.edits ?? []).map((e) => ({
    ...e,
    start: offsetOf(text, e.span.start),
    end: offsetOf(text, e.span.end),
  }));
  const where = `${label}: "${fix.title}"`;
  assert.ok(fix.title.length <= MAX_TITLE, `${where}: longer than a menu shows (${MAX_TITLE} characters)`);
  for (const e of edits) assert.ok(e.start <= e.end && e.end <= text.length, `${where}: an edit outside the text`);
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  for (let k = 1; k < sorted.length; k++)
    assert.ok(sorted[k - 1].end <= sorted[k].start, `${where}: overlapping edits`);
  if (fix.disabled) {
    assert.equal(fix.edits, undefined, `${where}: a disabled fix with edits`);
    return;
  }
  if (fix.title.startsWith('Opt in')) {
    const analysis = report.analyses.find(
      (a) =>
        fix.fixes &&
        a.launch.span.start.line === fix.fixes.span.start.line &&
        a.launch.span.start.character === fix.fixes.span.start.character,
    );
    assert.ok(analysis, `${where}: no launch at the finding`);
    const launchStart = offsetOf(text, analysis.launch.span.start);
    const launchEnd = offsetOf(text, analysis.launch.span.end);
    const call = edits.find((e) => SET_ATTRIBUTE.test(e.newText.replace(/^\{ /, '')));
    assert.ok(call, `${where}: no edit inserts the call`);
    assert.equal(
      SET_ATTRIBUTE.exec(call.newText.replace(/^\{ /, ''))![2],
      String(analysis.dynamicSmemBytes),
      `${where}: another byte count`,
    );
    for (const e of edits) {
      assert.equal(e.start, e.end, `${where}: the opt-in replaces text`);
      assert.ok(e.end <= launchStart || e.start >= launchEnd, `${where}: an edit inside the launch`);
    }
    assert.ok(call.start <= launchStart, `${where}: the call goes after the launch`);
    // Between the call and the launch: no statement boundary in the code (the masked text: comments and literals blanked).
    const directives = findDirectiveRanges(report.facts.source);
    const between = [...report.facts.source.masked.slice(call.start, launchStart)]
      .filter((_, k) => !inRanges(directives, call.start + k))
      .join('');
    assert.ok(
      !/[;{}]/.test(between),
      `${where}: a statement boundary between the call and the launch: ${JSON.stringify(text.slice(call.start, launchStart).slice(-160))}`,
    );
    const named = SET_ATTRIBUTE.exec(call.newText.replace(/^\{ /, ''))![1];
    assert.ok(
      named === analysis.launch.kernelName || named.startsWith(`${analysis.launch.kernelName}<`),
      `${where}: the call names ${named}, not the launched kernel`,
    );
    for (const e of edits)
      for (const lineEnd of e.newText.match(/\r\n|\r|\n/g) ?? [])
        assert.ok(text.includes(lineEnd), `${where}: a line end the file does not use`);
    return;
  }
  const [edit] = edits;
  if (/^(Add __launch_bounds__|Change to __launch_bounds__|__launch_bounds__ for|Raise the bound)/.test(fix.title)) {
    assert.equal(edits.length, 1, where);
    const kernel = report.facts.kernels.find((k) => {
      const header = [offsetOf(text, k.headerSpan.start), offsetOf(text, k.nameSpan.end)];
      return edit.start >= header[0] && edit.end <= header[1];
    });
    assert.ok(kernel, `${where}: the edit is not in a kernel's header`);
    if (fix.title.startsWith('Raise the bound')) {
      assert.match(text.slice(edit.start, edit.end), /^\d+$/, where);
      assert.match(text.slice(0, edit.start), /__launch_bounds__\s*\(\s*$/, where);
      return;
    }
    // The bound the title names, or (a short title beside a warning) the blocks it asks for.
    const bound = /(__launch_bounds__\([^)]*\))/.exec(fix.title)?.[1] ?? edit.newText.trim();
    const blocks = /^__launch_bounds__\([^,]*,\s*(\d+)/.exec(bound)?.[1];
    assert.ok(fix.title.includes(bound) || fix.title.includes(`for ${blocks} blocks/SM`), where);
    if (kernel.launchBounds) {
      // The kernel's bound is kept as shown (white space run together): the edit spans it as written.
      assert.equal(
        text.slice(edit.start, edit.end).replace(/\s+/g, ' ').trim(),
        kernel.launchBounds.text,
        `${where}: not the bound it changes`,
      );
      assert.equal(edit.newText, bound, where);
      if (kernel.launchBounds.args[2])
        assert.ok(
          edit.newText.endsWith(`, ${kernel.launchBounds.args[2].trim()})`),
          `${where}: the cluster argument is lost`,
        );
    } else {
      assert.equal(edit.newText, `${bound} `, where);
      assert.equal(edit.start, edit.end, where);
      const declarator = new RegExp(`^(::\\s*)?([A-Za-z_]\\w*\\s*(<[^;{}]*>)?\\s*::\\s*)*${kernel.name}\\s*\\(`);
      assert.match(text.slice(edit.start), declarator, `${where}: not before the declarator ${kernel.qualifiedName}`);
    }
    return;
  }
  if (/^(Use \d+ threads|Launch with \d+ threads)/.test(fix.title)) {
    assert.equal(edits.length, 1, where);
    const threads = /^(?:Use|Launch with) (\d+) threads/.exec(fix.title)![1];
    assert.equal(edit.newText, threads, where);
    const analysis = report.analyses.find(
      (a) => edit.start >= offsetOf(text, a.launch.span.start) && edit.end <= offsetOf(text, a.launch.span.end),
    );
    assert.ok(analysis, `${where}: not in a launch`);
    assert.equal(
      text.slice(edit.start, edit.end),
      analysis.launch.block.text.trim(),
      `${where}: not the block argument`,
    );
    assert.ok(
      analysis.threadsPerBlock === null || analysis.threadsPerBlock > 32 || fix.title.startsWith('Launch with'),
      `${where}: offered on a launch of one warp or less`,
    );
    return;
  }
  assert.equal(edits.length, 0, `${where}: a fix of an unknown kind with edits`);
}

/** Every launch asks for 64 KB of dynamic shared memory, every kernel definition is annotated at 128 registers. */
function everyFixOffered(text: string, report: DocumentReport): string {
  const inserts: Array<{ at: number; text: string; end?: number }> = [];
  const directives = findDirectiveRanges(report.facts.source);
  for (const kernel of report.facts.kernels) {
    if (!kernel.isDefinition || inRanges(directives, offsetOf(text, kernel.headerSpan.start))) continue;
    const at = offsetOf(text, { line: kernel.headerSpan.start.line, character: 0 });
    inserts.push({ at, text: '// occupancy: regs=128\n' });
  }
  for (const a of report.analyses) {
    if (a.launch.via !== 'chevrons' || a.launch.inMacro) continue;
    const start = offsetOf(text, a.launch.span.start);
    const end = offsetOf(text, a.launch.span.end);
    const chevrons = text.slice(start, end);
    const m = /<<<([\s\S]*?)>>>/.exec(chevrons);
    if (!m || /<<<|\(/.test(m[1])) continue;
    const args = m[1].split(',');
    if (args.length === 2) inserts.push({ at: start + m.index + 3 + m[1].length, text: ', 65536' });
    else if (args.length >= 3) {
      const from = start + m.index + 3 + args[0].length + 1 + args[1].length + 1;
      inserts.push({ at: from, end: from + args[2].length, text: ' 65536' });
    }
  }
  inserts.sort((a, b) => b.at - a.at);
  let out = text;
  for (const i of inserts) out = out.slice(0, i.at) + i.text + out.slice(i.end ?? i.at);
  return out;
}

interface Compiler {
  /** The first error when `text` (a file of `dir`) does not compile, else null. */
  errorOf(text: string, dir: string, includeDirs: readonly string[]): Promise<string | null>;
}

function compilerWith(nvcc: string, scratch: string): Compiler {
  let serial = 0;
  return {
    async errorOf(text, dir, includeDirs) {
      const file = path.join(scratch, `case-${++serial}.cu`);
      fs.writeFileSync(file, text);
      const args = [
        '-std=c++17',
        '-arch=sm_90',
        '-cubin',
        '-o',
        path.join(scratch, 'out.cubin'),
        '-I',
        dir,
        ...includeDirs.flatMap((d) => ['-I', d]),
        file,
      ];
      const run = await runNvcc({
        nvccPath: nvcc,
        args,
        cwd: scratch,
        timeoutMs: 120_000,
        memoryLimitBytes: 4096 * 1024 * 1024,
      });
      fs.rmSync(file, { force: true });
      if (run.status !== 'exited') return `nvcc ${run.status}`;
      return run.exitCode === 0
        ? null
        : (findFirstCompilerError(run.stderr + run.stdout)?.text ??
            `exit ${run.exitCode}: ${run.stderr.slice(0, 300)}`);
    },
  };
}

/** Fixes whose edits touch no other's, in groups: one compile checks a group, and a failing group is compiled fix by fix. */
function inGroups(text: string, fixes: readonly QuickFix[]): QuickFix[][] {
  const groups: Array<{ fixes: QuickFix[]; ranges: Array<[number, number]> }> = [];
  for (const fix of fixes) {
    const ranges = (fix.edits ?? []).map((e): [number, number] => [
      offsetOf(text, e.span.start),
      offsetOf(text, e.span.end),
    ]);
    const group = groups.find((g) => g.ranges.every(([a, b]) => ranges.every(([c, d]) => b < c || d < a)));
    if (group) {
      group.fixes.push(fix);
      group.ranges.push(...ranges);
    } else groups.push({ fixes: [fix], ranges });
  }
  return groups.map((g) => g.fixes);
}

interface FileCase {
  /** The file's name (a `.cu` is compiled). */
  name: string;
  /** How the failures name it. */
  label: string;
  text: string;
  dir: string;
  includeDirs: string[];
}

/** Checks every fix of `c` (ranges; compiles with `compiler` when the original compiles); returns how many it checked. */
async function checkFile(
  c: FileCase,
  compiler: Compiler | null,
): Promise<{ fixes: number; compiled: number; skipped: boolean; kinds: string[] }> {
  const uri = `file://${path.join(c.dir, path.basename(c.name))}`;
  const { report, fixes } = await fixesOf(c.text, { uri, archs: ['sm_80', 'sm_90'] });
  for (const fix of fixes) assertWhereItSays(c.text, report, fix, c.label);
  const withEdits = fixes.filter((f) => f.edits && f.edits.length > 0);
  const kinds = [
    ...new Set(
      withEdits.map(
        (f) =>
          /^(Add __launch_bounds__|Change to __launch_bounds__|__launch_bounds__ for|Raise the bound|Launch with|Use|Opt in)/.exec(
            f.title,
          )?.[1] ?? f.title,
      ),
    ),
  ];
  if (!compiler || withEdits.length === 0 || !c.name.endsWith('.cu'))
    return { fixes: fixes.length, compiled: 0, skipped: false, kinds };
  const original = await compiler.errorOf(c.text, c.dir, c.includeDirs);
  if (original !== null) return { fixes: fixes.length, compiled: 0, skipped: true, kinds };
  let compiled = 0;
  for (const group of inGroups(c.text, withEdits)) {
    compiled++;
    if (
      (await compiler.errorOf(
        applyEdits(
          c.text,
          group.flatMap((f) => f.edits!),
        ),
        c.dir,
        c.includeDirs,
      )) === null
    )
      continue;
    for (const fix of group) {
      const error = await compiler.errorOf(applyEdits(c.text, fix.edits!), c.dir, c.includeDirs);
      assert.equal(error, null, `${c.label}: "${fix.title}" breaks the compile: ${error}`);
    }
  }
  return { fixes: fixes.length, compiled, skipped: false, kinds };
}

/** $CUDA_DEV_CORPUS, else ../dev-corpus beside the checkout (or beside the worktrees' folder). */
function devCorpus(): string | null {
  const candidates = [
    process.env.CUDA_DEV_CORPUS,
    path.resolve(REPO_ROOT, '..', 'dev-corpus'),
    path.resolve(REPO_ROOT, '..', '..', 'dev-corpus'),
  ];
  return candidates.find((c): c is string => Boolean(c) && fs.existsSync(c as string)) ?? null;
}

/** Include folders of the corpus projects (what their builds pass as -I). */
const CORPUS_INCLUDES: Record<string, string[]> = {
  FasterTransformer: ['.', 'src'],
  xgboost: ['include', 'src'],
  faiss: ['.'],
  DeepSpeed: ['csrc/includes'],
  bitsandbytes: ['csrc'],
  openmm: ['.'],
};

describe('quick fixes applied (property)', function () {
  this.timeout(900_000);
  const nvcc = findNvcc();
  let scratch: string;
  before(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cuda-occ-fixes-'));
    if (!nvcc)
      console.log(
        "    (no nvcc: the fixes' edits are checked, the recompiles skipped; set CUDA_OCCUPANCY_TEST_NVCC to run them)",
      );
  });
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('on the fixtures and examples, as they are and with every kind of fix offered: where they say, and they compile', async () => {
    const compiler = nvcc ? compilerWith(nvcc, scratch) : null;
    const totals = { fixes: 0, compiled: 0, skipped: [] as string[], kinds: new Set<string>() };
    const analyzer = await quickFixAnalyzer();
    const check = async (source: { name: string; text: string }) => {
      const dir = path.join(REPO_ROOT, path.dirname(source.name));
      const uri = `file://${path.join(dir, path.basename(source.name))}`;
      const { report } = await fixesOf(source.text, { uri, analyzer });
      // The fixes of the file as it is are a part of those with every fix offered: only the latter are compiled.
      for (const [variant, text] of [
        ['as is', source.text],
        ['every fix offered', everyFixOffered(source.text, report)],
      ] as const) {
        const result = await checkFile(
          {
            name: source.name,
            label: `${source.name} (${variant})`,
            text,
            dir,
            includeDirs: [path.join(REPO_ROOT, 'test/fixtures/sources/include')],
          },
          variant === 'as is' ? null : compiler,
        );
        totals.fixes += result.fixes;
        totals.compiled += result.compiled;
        for (const kind of result.kinds) totals.kinds.add(kind);
        if (result.skipped) totals.skipped.push(`${source.name} (${variant})`);
      }
    };
    // Two files at a time: nvcc waits on its children much of the time. (The analysis between compiles runs to its end before the next await.)
    const queue = [...fixtureSources()];
    await Promise.all(
      [0, 1].map(async () => {
        for (let next = queue.shift(); next; next = queue.shift()) await check(next);
      }),
    );
    totals.skipped.sort();
    console.log(
      `    ${totals.fixes} fixes checked, ${totals.compiled} compiles of fixed files${totals.skipped.length ? `; originals that do not compile alone: ${totals.skipped.join(', ')}` : ''}`,
    );
    assert.deepEqual(
      [...totals.kinds].sort(),
      ['Add __launch_bounds__', 'Change to __launch_bounds__', 'Launch with', 'Opt in', 'Raise the bound', 'Use'],
      'the corpus should offer every kind of fix with edits',
    );
    if (compiler) assert.ok(totals.compiled >= 20, `only ${totals.compiled} compiles`);
  });

  it('on mutated fixtures and the hostile documents: every edit where its fix says', async () => {
    for (const doc of hostileDocuments()) {
      const { report, fixes } = await fixesOf(doc.text);
      for (const fix of fixes) assertWhereItSays(doc.text, report, fix, doc.name);
    }
    await checkProperty(
      'quick fixes of any mutated source are where they say',
      [mutatedSource],
      async (text) => {
        const { report } = await fixesOf(text);
        const offered = everyFixOffered(text, report);
        for (const t of [text, offered]) {
          const again = await fixesOf(t);
          for (const fix of again.fixes) assertWhereItSays(t, again.report, fix, 'mutated');
        }
      },
      fuzzRuns(30, 0.05),
    );
  });

  it('on real files of the development corpus, where it is', async function () {
    const corpus = devCorpus();
    if (!corpus) {
      console.log('    (skipped: no development corpus here; set CUDA_DEV_CORPUS, see eval/README.md)');
      this.skip();
    }
    const compiler = nvcc ? compilerWith(nvcc, scratch) : null;
    // Files to recompile with every fix applied, and compiles of originals tried to find them (most real files
    // need their project's dependencies: those that include torch or pybind11 are not tried).
    const wanted = Number(process.env.QUICK_FIX_CORPUS_FILES ?? 4);
    let attempts = Number(process.env.QUICK_FIX_CORPUS_ATTEMPTS ?? 15);
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (entry.isDirectory()) walk(path.join(dir, entry.name));
        else if (entry.isFile() && entry.name.endsWith('.cu')) files.push(path.join(dir, entry.name));
      }
    };
    walk(corpus!);
    // One project after another, so that the compiles tried are spread over them.
    const byProject = new Map<string, string[]>();
    for (const file of files) {
      const project = path.relative(corpus!, file).split(path.sep)[0];
      byProject.set(project, [...(byProject.get(project) ?? []), file]);
    }
    const lists = [...byProject.values()];
    files.length = 0;
    for (let k = 0; lists.some((l) => k < l.length); k++)
      for (const list of lists) if (k < list.length) files.push(list[k]);
    let checked = 0;
    let compiledFiles = 0;
    let fixes = 0;
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      const project = path.relative(corpus!, file).split(path.sep)[0];
      const includeDirs = (CORPUS_INCLUDES[project] ?? ['.']).map((d) => path.join(corpus!, project, d));
      const { report } = await fixesOf(text, { uri: `file://${file}` });
      if (report.analyses.length === 0) continue;
      checked++;
      const name = path.relative(corpus!, file);
      const tryCompile =
        compiledFiles < wanted && attempts > 0 && !/#\s*include\s*[<"](torch|ATen|c10|pybind11)\//.test(text);
      const result = await checkFile(
        {
          name,
          label: `${name} (every fix offered)`,
          text: everyFixOffered(text, report),
          dir: path.dirname(file),
          includeDirs,
        },
        tryCompile ? compiler : null,
      );
      if (tryCompile && (result.compiled > 0 || result.skipped)) attempts--;
      fixes += result.fixes;
      if (result.compiled > 0) compiledFiles++;
    }
    console.log(
      `    ${checked} corpus files with launches checked (${fixes} fixes); ${compiledFiles} recompiled with every fix applied`,
    );
    assert.ok(fixes > 0);
  });
});
