/**
 * The register budget of a launch without register figures: for each occupancy level reachable at
 * its block size and shared memory, the most registers per thread that reach it. Checked against
 * the calculator two ways: our occupancy model at every register count (at each level's count the
 * level is reached, one more and it is not), and NVIDIA's cuda_occupancy.h itself (the reference
 * driver, test/oracle/occupancy-reference.cpp) over every architecture, block size and shared-memory size below.
 */
import * as assert from 'node:assert/strict';
import { ARCHS, archName, parseArch } from '../../server/src/core/gpu/arch-table';
import { occupancy, resolveAttributes, resolveState } from '../../server/src/core/gpu/occupancy';
import { registerBudget } from '../../server/src/core/gpu/register-budget';
import { budgetText } from '../../server/src/core/report/launch-report';
import { buildOracle, inputWords, runOracle } from '../support/oracle-process';

const device = (arch: string) => parseArch(arch)!.device;

describe('register budget', () => {
  it("at 256 threads and 1 KB of static shared memory on sm_80: the ux sketch's line", () => {
    const levels = registerBudget({ device: device('sm_80'), blockSize: 256, sharedSizeBytes: 1024 });
    assert.equal(
      budgetText(levels),
      '100% ≤ 32 · 75% ≤ 40 · 62.5% ≤ 48 · 50% ≤ 64 · 37.5% ≤ 80 · 25% ≤ 128 · 12.5% ≤ 255 registers per thread',
    );
  });

  it('stops at the levels shared memory and block slots allow', () => {
    // 48 KB per block: at most 3 blocks on sm_90 whatever the registers.
    const levels = registerBudget({
      device: device('sm_90'),
      blockSize: 128,
      sharedSizeBytes: 0,
      dynamicSmemBytes: 48 * 1024,
    });
    assert.deepEqual(
      levels.map((l) => [l.activeBlocks, l.maxRegsPerThread]),
      [
        [4, 128],
        [3, 168],
        [2, 255],
      ],
    );
    assert.deepEqual(registerBudget({ device: device('sm_80'), blockSize: 2048 }), [], 'no block of 2048 threads runs');
  });

  it('each level is exact: reached at its register count, not one register above (our calculator, every architecture)', () => {
    for (const row of ARCHS) {
      for (const blockSize of [32, 96, 128, 256, 384, 512, 1024]) {
        const query = { device: row.device, blockSize, sharedSizeBytes: 2048 };
        const levels = registerBudget(query, row.maxRegsPerThread);
        assert.ok(levels.length > 0, `${archName(row)} ${blockSize}`);
        for (const [i, level] of levels.entries()) {
          const at = occupancy({ ...query, numRegs: level.maxRegsPerThread });
          assert.ok(
            at.ok &&
              at.value.activeBlocksPerMultiprocessor === level.activeBlocks &&
              at.value.occupancy === level.occupancy,
          );
          if (level.maxRegsPerThread < row.maxRegsPerThread) {
            const above = occupancy({ ...query, numRegs: level.maxRegsPerThread + 1 });
            assert.ok(above.ok && above.value.activeBlocksPerMultiprocessor === (levels[i + 1]?.activeBlocks ?? 0));
          }
        }
      }
    }
  });

  describe('against cuda_occupancy.h', function () {
    this.timeout(120000);
    let binary = '';
    before(function () {
      const build = buildOracle();
      if (!build.ok) {
        console.log(`    skipped: cannot build the occupancy oracle: ${build.reason}`);
        this.skip();
      } else binary = build.binary;
    });

    it('every register count from 1 to 255 gives the blocks the budget says', async () => {
      const cases: Array<{ arch: string; blockSize: number; sharedSizeBytes: number; dynamicSmemBytes: number }> = [];
      for (const row of ARCHS) {
        for (const blockSize of [64, 128, 192, 256, 512, 768, 1024]) {
          for (const [sharedSizeBytes, dynamicSmemBytes] of [
            [0, 0],
            [1024, 0],
            [4096, 8192],
          ])
            cases.push({ arch: archName(row), blockSize, sharedSizeBytes, dynamicSmemBytes });
        }
      }
      // One question per register count: the header's occupancy at the inputs our calculator resolves for it.
      const lines = cases.flatMap((c) =>
        Array.from({ length: 255 }, (_, r) => {
          const query = { device: device(c.arch), sharedSizeBytes: c.sharedSizeBytes, numRegs: r + 1 };
          const words = inputWords({
            device: query.device,
            attributes: resolveAttributes(query),
            state: resolveState({}),
          });
          return `occupancy ${words.join(' ')} ${c.blockSize} ${c.dynamicSmemBytes}`;
        }),
      );
      const answers = (await runOracle(binary, lines)).map((l) => {
        const [status, blocks] = l.split(' ').map(Number);
        return { ok: status === 0, activeBlocksPerMultiprocessor: blocks };
      });
      let checked = 0;
      cases.forEach((c, k) => {
        const levels = registerBudget({
          device: device(c.arch),
          blockSize: c.blockSize,
          sharedSizeBytes: c.sharedSizeBytes,
          dynamicSmemBytes: c.dynamicSmemBytes,
        });
        const blocksAt = (regs: number) => {
          const answer = answers[k * 255 + regs - 1];
          return answer.ok ? answer.activeBlocksPerMultiprocessor : 0;
        };
        // The budget's level for each register count: the first level whose cap is at or above it.
        for (let regs = 1; regs <= 255; regs++) {
          const level = levels.find((l) => l.maxRegsPerThread >= regs);
          assert.equal(level?.activeBlocks ?? 0, blocksAt(regs), `${JSON.stringify(c)} at ${regs} registers`);
          checked++;
        }
      });
      assert.ok(checked > 10000);
    });
  });
});
