import * as assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import {
  BaselineError,
  compareToBaseline,
  parseBaseline,
  regressionsFail,
  withRegressions,
  writeBaseline,
  type Regression,
} from '../../server/src/cli/baseline';
import { baselineCommand, loadBaseline } from '../../server/src/cli/baseline-command';
import { UsageError } from '../../server/src/cli/cli-io';
import { toSarif } from '../../server/src/cli/sarif';
import type { CheckJson } from '../../server/src/cli/check-json-types';
import { checkJsonOf, memoryIO, sourceTree } from '../support/cli-run';

/** A small .cu whose figures come from `// occupancy:` annotations; `figures` fills in each kernel's. */
function kernels({ scale = 'regs=32 spills=0', tile = 'regs=32 spills=0', pad = 0 } = {}): string {
  return `${'// (moved down)\n'.repeat(pad)}#include <cuda_runtime.h>

// occupancy: ${scale}
__global__ void scale(float* x, float a) { x[blockIdx.x * blockDim.x + threadIdx.x] *= a; }

namespace ops {
// occupancy: ${tile}
__global__ void tile(float* x) { x[threadIdx.x] += 1.0f; }
}

void run(float* x) {
  scale<<<64, 256>>>(x, 2.0f);
  scale<<<64, 256>>>(x, 3.0f);
  ops::tile<<<16, 1024>>>(x);
}
`;
}

const ARGS = ['--no-nvcc', '--arch', 'sm_80,sm_90', '.'];

async function checkOf(source: string): Promise<CheckJson> {
  const dir = sourceTree({ 'k.cu': source });
  try {
    return await checkJsonOf(ARGS, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const brief = (rs: Regression[]) =>
  rs.map((r) => `${r.code} ${r.arch} ${r.line}:${r.column} ${r.before} -> ${r.after}`);

describe('occupancy baselines', function () {
  this.timeout(60_000);
  let base: CheckJson;
  before(async () => {
    base = await checkOf(kernels());
  });

  it('records figures per kernel instance and arch, and per launch without lines', () => {
    const baseline = writeBaseline(base);
    assert.equal(baseline.format, 'cuda-occupancy-baseline');
    assert.equal(baseline.version, 1);
    assert.deepEqual(baseline.archs, ['sm_80', 'sm_90']);
    const scale = baseline.kernels.find((k) => k.qualifiedName === 'scale');
    assert.ok(scale, JSON.stringify(baseline.kernels));
    assert.deepEqual(scale.archs.sm_90, {
      numRegs: 32,
      spillStoreBytes: 0,
      spillLoadBytes: 0,
      sharedSizeBytes: scale.archs.sm_90.sharedSizeBytes,
      stackFrameBytes: scale.archs.sm_90.stackFrameBytes,
      source: 'annotation',
    });
    assert.ok(baseline.kernels.some((k) => k.qualifiedName === 'ops::tile'));
    const launches = baseline.launches.filter((l) => l.kernel === 'scale');
    assert.deepEqual(
      launches.map((l) => [l.block, l.dynamicSmem, l.ordinal]),
      [
        ['256x1x1', '0', 0],
        ['256x1x1', '0', 1],
      ],
    );
    assert.deepEqual(launches[0].archs.sm_80, {
      occupancy: 1,
      activeBlocksPerMultiprocessor: 8,
      activeWarps: 64,
      limitingFactors: launches[0].archs.sm_80!.limitingFactors,
    });
    assert.doesNotMatch(JSON.stringify(baseline), /"line"|"column"/);
  });

  it('round-trips through its file text and finds nothing against the same code', () => {
    const baseline = writeBaseline(base, { generator: 'cuda-occupancy test' });
    const read = parseBaseline(JSON.stringify(baseline, null, 2));
    assert.deepEqual(read, baseline);
    assert.deepEqual(compareToBaseline(base, read), []);
  });

  it('reports more registers and the lower occupancy they cause, with before and after, where the code is now', async () => {
    const now = await checkOf(kernels({ scale: 'regs=64 spills=0' }));
    const regressions = compareToBaseline(now, writeBaseline(base));
    assert.deepEqual(brief(regressions), [
      'baseline-more-registers sm_80 4:17 32 registers -> 64 registers',
      'baseline-more-registers sm_90 4:17 32 registers -> 64 registers',
      'baseline-lower-occupancy sm_80 12:3 100% occupancy (8 blocks, 64 warps per SM, limited by warps and registers) -> 50% occupancy (4 blocks, 32 warps per SM, limited by registers)',
      'baseline-lower-occupancy sm_90 12:3 100% occupancy (8 blocks, 64 warps per SM, limited by warps and registers) -> 50% occupancy (4 blocks, 32 warps per SM, limited by registers)',
      'baseline-lower-occupancy sm_80 13:3 100% occupancy (8 blocks, 64 warps per SM, limited by warps and registers) -> 50% occupancy (4 blocks, 32 warps per SM, limited by registers)',
      'baseline-lower-occupancy sm_90 13:3 100% occupancy (8 blocks, 64 warps per SM, limited by warps and registers) -> 50% occupancy (4 blocks, 32 warps per SM, limited by registers)',
    ]);
    assert.ok(regressions.every((r) => r.severity === 'warning' && r.file === 'k.cu'));
    assert.equal(
      regressions[0].message,
      "scale on sm_80 uses 64 registers per thread, 32 more than the baseline's 32.",
    );
    assert.match(
      regressions[2].message,
      /^The launch scale<<<\.\.\., 256x1x1>>> on sm_80 reaches 50% occupancy .*, down from 100% occupancy .* in the baseline\.$/,
    );
    assert.equal(regressionsFail(regressions, 'error'), false);
    assert.equal(regressionsFail(regressions, 'warning'), true);
    assert.equal(regressionsFail(regressions, 'never'), false);
  });

  it('reports a new spill', async () => {
    const now = await checkOf(kernels({ tile: 'regs=32 spills=16' }));
    const regressions = compareToBaseline(now, writeBaseline(base));
    assert.deepEqual(brief(regressions), [
      'baseline-new-spill sm_80 8:17 no spills -> 16 bytes spill stores, 16 bytes spill loads',
      'baseline-new-spill sm_90 8:17 no spills -> 16 bytes spill stores, 16 bytes spill loads',
    ]);
    assert.match(
      regressions[0].message,
      /^ops::tile on sm_80 now spills registers \(16 bytes spill stores, 16 bytes spill loads\); the baseline had no spills\.$/,
    );
  });

  it('reports a launch that no longer fits as an error, not as lower occupancy', async () => {
    const now = await checkOf(kernels({ tile: 'regs=128 spills=0' }));
    const regressions = compareToBaseline(now, writeBaseline(base));
    const launch = regressions.filter((r) => r.line === 14);
    assert.deepEqual(
      launch.map((r) => [r.code, r.severity, r.arch]),
      [
        ['baseline-launch-no-longer-fits', 'error', 'sm_80'],
        ['baseline-launch-no-longer-fits', 'error', 'sm_90'],
      ],
    );
    assert.match(
      launch[0].message,
      /^The launch ops::tile<<<\.\.\., 1024x1x1>>> no longer fits on an sm_80 SM \(registers\)/,
    );
    assert.match(launch[0].after, /^0% occupancy \(0 blocks/);
    assert.equal(regressionsFail(regressions, 'error'), true);
  });

  it('matches kernels and launches by name, not line: moving the code down reports nothing', async () => {
    const moved = await checkOf(kernels({ pad: 10 }));
    assert.equal(moved.files[0].launches[0].line, base.files[0].launches[0].line + 10);
    assert.deepEqual(compareToBaseline(moved, writeBaseline(base)), []);
    // ...and a regression in moved code is reported at its new place.
    const movedWorse = await checkOf(kernels({ pad: 10, scale: 'regs=64 spills=0' }));
    assert.deepEqual([...new Set(compareToBaseline(movedWorse, writeBaseline(base)).map((r) => r.line))], [14, 22, 23]);
  });

  it('still matches when the file was moved, as long as the kernel is unique', async () => {
    const baseline = writeBaseline(base);
    const now = await checkOf(kernels({ scale: 'regs=64 spills=0' }));
    const renamed: CheckJson = { ...now, files: now.files.map((f) => ({ ...f, path: 'src/renamed.cu' })) };
    const regressions = compareToBaseline(renamed, baseline);
    assert.equal(regressions.length, 6);
    assert.ok(regressions.every((r) => r.file === 'src/renamed.cu'));
  });

  it('turns regressions into findings of the check object, which SARIF carries with their levels', async () => {
    const now = await checkOf(kernels({ scale: 'regs=64 spills=0', tile: 'regs=128 spills=0' }));
    const regressions = compareToBaseline(now, writeBaseline(base));
    const merged = withRegressions(now, regressions);
    const added = merged.files[0].diagnostics.filter((d) => d.code.startsWith('baseline-'));
    assert.equal(added.length, regressions.length);
    const fits = added.find((d) => d.code === 'baseline-launch-no-longer-fits');
    assert.ok(fits);
    assert.equal(fits.severity, 'error');
    assert.equal(fits.line, 14);
    assert.match(String(fits.before), /^100% occupancy/);
    const sarif = toSarif(merged, { toolVersion: 'dev', baseDir: '/r' }) as {
      runs: Array<{ results: Array<{ ruleId: string; level: string }> }>;
    };
    assert.deepEqual(
      [
        ...new Set(
          sarif.runs[0].results.filter((r) => r.ruleId.startsWith('baseline-')).map((r) => `${r.ruleId}:${r.level}`),
        ),
      ].sort(),
      ['baseline-launch-no-longer-fits:error', 'baseline-lower-occupancy:warning', 'baseline-more-registers:warning'],
    );
  });

  it('rejects a bad baseline file with one clear reason', () => {
    const good = writeBaseline(base);
    const bad = (text: string) => {
      try {
        parseBaseline(text);
      } catch (error) {
        assert.ok(error instanceof BaselineError);
        return error.message;
      }
      assert.fail('accepted a bad baseline');
    };
    assert.match(bad('{ not json'), /^not JSON/);
    assert.match(bad(JSON.stringify({ version: 1, runs: [] })), /^not a cuda-occupancy baseline/);
    assert.match(
      bad(JSON.stringify({ ...good, version: 7 })),
      /^baseline version 7 is newer than this cuda-occupancy reads \(1\)/,
    );
    assert.match(bad(JSON.stringify({ ...good, kernels: 'x' })), /^kernels must be an array$/);
    const broken = JSON.parse(JSON.stringify(good));
    broken.kernels[1].archs.sm_90.numRegs = '32';
    assert.equal(bad(JSON.stringify(broken)), 'kernels[1].archs.sm_90.numRegs must be a whole number >= 0');
    const broken2 = JSON.parse(JSON.stringify(good));
    broken2.launches[0].archs.sm_80.occupancy = 2;
    assert.equal(bad(JSON.stringify(broken2)), 'launches[0].archs.sm_80.occupancy must be a number from 0 to 1');
  });
});

describe('cuda-occupancy baseline write', function () {
  this.timeout(60_000);

  it('writes the baseline file that check --baseline reads, and says what it recorded', async () => {
    const dir = sourceTree({ 'k.cu': kernels() });
    try {
      const sink = { out: '', err: '' };
      const code = await baselineCommand(['write', 'perf/occupancy-baseline.json', ...ARGS], memoryIO(dir, sink));
      assert.equal(code, 0, sink.err);
      assert.equal(sink.out, 'wrote perf/occupancy-baseline.json: 2 kernel instances, 3 launches on sm_80, sm_90\n');
      assert.equal(sink.err, '');
      const written = loadBaseline('perf/occupancy-baseline.json', dir);
      assert.deepEqual(
        written.kernels.map((k) => k.qualifiedName),
        ['ops::tile', 'scale'],
      );
      assert.match(written.generator ?? '', /^cuda-occupancy /);
      assert.ok(readFileSync(path.join(dir, 'perf/occupancy-baseline.json'), 'utf8').endsWith('}\n'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes to standard output with -, and warns when there are no register figures to record', async () => {
    const dir = sourceTree({ 'k.cu': kernels().replace(/\/\/ occupancy: .*\n/g, '') });
    try {
      const sink = { out: '', err: '' };
      assert.equal(await baselineCommand(['write', '-', ...ARGS], memoryIO(dir, sink)), 0);
      assert.equal(parseBaseline(sink.out).launches.length, 3);
      assert.match(sink.err, /warning: no register figures were found/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses bad usage and bad baseline files as usage errors', async () => {
    const io = memoryIO(process.cwd(), { out: '', err: '' });
    await assert.rejects(
      baselineCommand(['read', 'x.json'], io),
      (e: Error) => e instanceof UsageError && /unknown baseline action "read"/.test(e.message),
    );
    await assert.rejects(
      baselineCommand(['write'], io),
      (e: Error) => e instanceof UsageError && /needs the FILE/.test(e.message),
    );
    await assert.rejects(
      baselineCommand(['write', '--arch', 'sm_90', 'x'], io),
      (e: Error) => e instanceof UsageError && /needs the FILE/.test(e.message),
    );
    await assert.rejects(baselineCommand(['write', 'b.json', '--baseline', 'a.json', '.'], io), UsageError);
    assert.throws(
      () => loadBaseline('does-not-exist.json', process.cwd()),
      (e: Error) => e instanceof UsageError && e.message === 'cannot read baseline does-not-exist.json: ENOENT',
    );
    const dir = sourceTree({ 'b.json': '{"format":"something-else"}' });
    try {
      assert.throws(
        () => loadBaseline('b.json', dir),
        (e: Error) => e instanceof UsageError && /^bad baseline b\.json: not a cuda-occupancy baseline/.test(e.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
