/**
 * The fixture corpus: realistic CUDA sources in test/fixtures/sources, each
 * launch labelled with a comment on its line:
 *
 *   k<<<g, b>>>(...); // expect: kernel=ns::k block=16x16x1 smem=0 bounds=256
 *
 * `?` means the value is not statically knowable (and must stay null);
 * `macro` marks a launch in a macro body. The test reports the share of
 * launch sites found and block sizes resolved, and fails on any wrong number,
 * any missed launch and any launch without a label.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { indexWorkspace, toIndexPath } from '../../server/src/files/workspace-files';
import { analyzeParsed, analyzeSnippet } from '../support/analyze-snippet';
import { getCudaParser, parseCuda } from '../support/grammar';

const ROOT = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'sources');

interface Expectation {
  file: string;
  line: number;
  kernel: string;
  block: string;
  smem: string;
  bounds: string | null;
  macro: boolean;
}

function readExpectations(file: string, text: string): Expectation[] {
  const out: Expectation[] = [];
  text.split('\n').forEach((line, k) => {
    const m = /\/\/\s*expect:\s*(.*)$/.exec(line);
    if (!m) return;
    const fields = new Map(
      m[1]
        .trim()
        .split(/\s+/)
        .map((f) => f.split('=') as [string, string]),
    );
    out.push({
      file,
      line: k,
      kernel: fields.get('kernel') ?? '?',
      block: fields.get('block') ?? '?',
      smem: fields.get('smem') ?? '?',
      bounds: fields.get('bounds') ?? null,
      macro: fields.has('macro'),
    });
  });
  return out;
}

function threadsOf(text: string): number | null {
  if (text === '?') return null;
  return text
    .split('x')
    .map(Number)
    .reduce((a, b) => a * b, 1);
}

describe('source fixtures', () => {
  it('finds every launch site, resolves block sizes where the source allows, and never a wrong number', async () => {
    const { index, scan } = indexWorkspace([ROOT]);
    const files = scan.files.filter((f) => /\.(cu|cuh)$/.test(f));
    assert.ok(files.length >= 10, `fixture corpus has ${files.length} files`);
    const wrong: string[] = [];
    const missed: string[] = [];
    const unlabelled: string[] = [];
    let total = 0;
    let found = 0;
    let blockResolvable = 0;
    let blockResolved = 0;
    let smemResolvable = 0;
    let smemResolved = 0;
    let kernelsResolvable = 0;
    let kernelsResolved = 0;
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      const rel = path.relative(ROOT, file);
      const facts = await analyzeSnippet(text, { workspace: index, path: toIndexPath(file), uri: rel });
      const expectations = readExpectations(rel, text);
      total += expectations.length;
      for (const [k, launch] of facts.launches.entries()) {
        const expected = expectations.find((e) => e.line === launch.span.start.line);
        if (!expected) {
          unlabelled.push(`${rel}:${launch.span.start.line + 1} ${launch.kernelName}`);
          continue;
        }
        found++;
        const where = `${rel}:${expected.line + 1}`;
        const target = facts.launchTargets[k];
        if (expected.macro !== launch.inMacro) wrong.push(`${where}: inMacro ${launch.inMacro}`);
        if (expected.kernel === '?') {
          if (target.kernel && !expected.macro)
            wrong.push(`${where}: kernel ${target.kernel.qualifiedName}, expected unresolved`);
        } else if (!expected.macro) {
          kernelsResolvable++;
          if (target.kernel?.qualifiedName === expected.kernel) kernelsResolved++;
          else if (target.kernel)
            wrong.push(`${where}: kernel ${target.kernel.qualifiedName}, expected ${expected.kernel}`);
        }
        const block = launch.block.value;
        if (expected.block === '?') {
          if (block) wrong.push(`${where}: block ${JSON.stringify(block)}, expected unresolved`);
        } else {
          blockResolvable++;
          const dims = expected.block.split('x').map(Number);
          if (block) {
            blockResolved++;
            const actual = dims.length === 3 ? [block.x, block.y, block.z] : [block.x * block.y * block.z];
            if (actual.join('x') !== dims.join('x'))
              wrong.push(`${where}: block ${actual.join('x')}, expected ${expected.block}`);
          }
        }
        const smem = launch.dynamicSmem.value;
        if (expected.smem === '?') {
          if (smem !== null) wrong.push(`${where}: smem ${smem}, expected unresolved`);
        } else {
          smemResolvable++;
          if (smem !== null) {
            smemResolved++;
            if (smem !== Number(expected.smem)) wrong.push(`${where}: smem ${smem}, expected ${expected.smem}`);
          }
        }
        if (expected.bounds !== null) {
          const bounds = target.launchBounds?.maxThreadsPerBlock ?? null;
          if (expected.bounds === '?' ? bounds !== null : bounds !== null && bounds !== threadsOf(expected.bounds))
            wrong.push(`${where}: bounds ${bounds}, expected ${expected.bounds}`);
          if (expected.bounds !== '?' && bounds === null)
            wrong.push(`${where}: bounds unresolved, expected ${expected.bounds}`);
        }
      }
      for (const e of expectations)
        if (!facts.launches.some((l) => l.span.start.line === e.line)) missed.push(`${rel}:${e.line + 1}`);
    }
    const pct = (a: number, b: number) => `${a}/${b} (${b ? Math.round((100 * a) / b) : 100}%)`;
    console.log(
      `      launch sites found: ${pct(found, total)}; kernels resolved: ${pct(kernelsResolved, kernelsResolvable)}; block sizes resolved: ${pct(blockResolved, blockResolvable)}; dynamic smem resolved: ${pct(smemResolved, smemResolvable)}; wrong numbers: ${wrong.length}`,
    );
    assert.deepEqual(wrong, [], 'wrong numbers');
    assert.deepEqual(missed, [], 'missed launch sites');
    assert.deepEqual(unlabelled, [], 'launches without an expect label');
    assert.equal(blockResolved, blockResolvable, 'every statically knowable block size resolved');
  });

  it('parses and analyses the largest fixture quickly', async () => {
    const files = fs
      .readdirSync(ROOT)
      .filter((f) => f.endsWith('.cu'))
      .map((f) => path.join(ROOT, f));
    const largest = files.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0];
    const text = fs.readFileSync(largest, 'utf8');
    await parseCuda(text); // warm up the parser
    const runs: number[] = [];
    for (let k = 0; k < 5; k++) {
      const t0 = performance.now();
      analyzeParsed(await getCudaParser(), text, { uri: largest });
      runs.push(performance.now() - t0);
    }
    runs.sort((a, b) => a - b);
    console.log(
      `      ${path.basename(largest)} (${text.split('\n').length} lines): parse + analyse median ${runs[2].toFixed(1)} ms`,
    );
    assert.ok(runs[2] < 500, `median ${runs[2]} ms`);
  });
});
