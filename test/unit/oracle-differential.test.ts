/**
 * Differential test: our calculator, through the protocol `calc --jsonl` speaks, against NVIDIA's
 * cuda_occupancy.h itself (test/oracle/occupancy-reference.cpp, compiled against the CUDA
 * toolkit's header) on tens of thousands of seeded random queries over every architecture and
 * the corners. Each query our protocol takes is put to the header with the inputs our side
 * resolved (the answer's `effective` object: device, attributes, state), and every figure of
 * the answer must be the header's: blocks, limiting factors, every block limit, allocations,
 * header errors, suggested block sizes, available shared memory, and the per-architecture
 * constants. Zero differences allowed. Skipped, with the reason, where no toolkit is installed.
 */

import * as assert from 'node:assert/strict';
import { ARCHS, archName } from '../../server/src/core/gpu/arch-table';
import { answerQueryLine } from '../../server/src/cli/oracle-protocol';
import {
  HEADER_ERRORS,
  buildOracle,
  deviceWords,
  inputWords,
  partitionedName,
  runOracle,
  type HeaderInputs,
} from '../support/oracle-process';
import { QueryMaker, badQueryLines } from '../support/oracle-queries';

const SEED = Number(process.env.OCC_DIFF_SEED ?? 20250613);
const OCCUPANCY_QUERIES = 24000;
const MAX_POTENTIAL_QUERIES = 3000;
const AVAILABLE_SMEM_QUERIES = 2000;
const SPOILED_QUERIES = 1000;

type Answer = Record<string, unknown> & { ok: boolean; error: string | null; mode: string; effective?: HeaderInputs };

interface Question {
  query: string;
  answer: Answer;
  line: string;
}

const LIMIT_BITS = ['warps', 'registers', 'sharedMemory', 'blocks', 'barriers', 'virtualResources'];

/** The driver's question for one of our answers, or null when our protocol refused the query (no header call). */
function questionFor(q: Record<string, unknown>, a: Answer): string | null {
  if (a.ok === false && String(a.error).startsWith('bad query')) return null;
  if (a.mode === 'archInfo') return `constants ${deviceWords(a.device as HeaderInputs['device']).join(' ')}`;
  if (!['occupancy', 'maxPotentialBlockSize', 'availableDynamicSmem'].includes(a.mode)) return null; // listArchs, version: no header call
  const e = a.effective;
  assert.ok(e, `an answer without its effective inputs: ${JSON.stringify(a)}`);
  const inputs = inputWords(e).join(' ');
  if (a.mode === 'occupancy') return `occupancy ${inputs} ${a.blockSize} ${a.dynamicSmemBytes}`;
  if (a.mode === 'maxPotentialBlockSize')
    return `maxPotential ${inputs} ${a.dynamicSmemBytes} ${Number(q.dynamicSmemPerThreadBytes ?? 0)}`;
  if (a.mode === 'availableDynamicSmem') return `availableSmem ${inputs} ${a.numBlocks} ${a.blockSize}`;
  return null;
}

/** What the header's answer line says our answer must hold. */
function expectedFrom(mode: string, words: number[]): Record<string, unknown> {
  const [status, ...v] = words;
  // archInfo names the first helper that failed, in the protocol's words: only the failure is the header's.
  if (status !== 0 && mode === 'archInfo') return { ok: false };
  if (status !== 0) return { ok: false, error: HEADER_ERRORS[status] };
  if (mode === 'occupancy') {
    const [blocks, mask, regs, smem, warps, slots, barriers, virtual, allocRegs, allocSmem, partitioned] = v;
    return {
      ok: true,
      error: null,
      activeBlocksPerMultiprocessor: blocks,
      limitingFactorsMask: mask,
      limitingFactors: LIMIT_BITS.filter((_, i) => mask & (1 << i)),
      blockLimitRegs: regs,
      blockLimitSharedMem: smem,
      blockLimitWarps: warps,
      blockLimitBlocks: slots,
      blockLimitBarriers: barriers,
      blockLimitVirtual: virtual,
      allocatedRegistersPerBlock: allocRegs,
      allocatedSharedMemPerBlock: allocSmem,
      partitionedGCConfig: partitionedName(partitioned),
    };
  }
  if (mode === 'maxPotentialBlockSize') return { ok: true, error: null, minGridSize: v[0], blockSize: v[1] };
  if (mode === 'availableDynamicSmem') return { ok: true, error: null, dynamicSmemBytes: v[0] };
  const [
    smemGranularity,
    regGranularity,
    maxRegs,
    subPartitions,
    maxBlocks,
    maxVirtual,
    partitioned,
    barriersPerSlot,
    barrierApplied,
    configurable,
    defaultSmem,
    ...carveouts
  ] = v;
  return {
    ok: true,
    error: null,
    header: {
      smemAllocationGranularity: smemGranularity,
      regAllocationGranularity: regGranularity,
      maxRegsPerThread: maxRegs,
      subPartitionsPerMultiprocessor: subPartitions,
      maxBlocksPerMultiprocessor: maxBlocks,
      maxVirtualResourcesPerMultiprocessor: maxVirtual,
      partitionedGlobalCachingSupported: partitioned === 1,
      barriersPerBlockSlot: barriersPerSlot,
      barrierLimitApplied: barrierApplied === 1,
      carveoutConfigurable: configurable === 1,
      sharedMemCarveoutKB: carveouts,
      defaultSharedMemPerMultiprocessor: defaultSmem,
    },
  };
}

/** Our answer, cut to the fields the header's answer has. */
function ours(answer: Answer, expected: Record<string, unknown>): Record<string, unknown> {
  const header = answer.header as Record<string, unknown> | undefined;
  return Object.fromEntries(
    Object.keys(expected).map((k) => [
      k,
      k === 'header' && header
        ? Object.fromEntries(Object.keys(expected.header as object).map((h) => [h, header[h]]))
        : answer[k],
    ]),
  );
}

describe('occupancy calculator against cuda_occupancy.h', function () {
  this.timeout(120000);
  let binary = '';

  before(function () {
    const build = buildOracle();
    if (!build.ok) {
      console.log(`    skipped: cannot build NVIDIA's calculator: ${build.reason}`);
      this.skip();
    } else {
      binary = build.binary;
      console.log(`    reference: ${build.header}`);
    }
  });

  it('reports the header version: compute capability 12.1 at most (CUDA 13.0)', async () => {
    assert.deepEqual(await runOracle(binary, ['version']), ['12 1']);
  });

  it(`agrees on every random query (seed ${SEED}), and our protocol refuses the bad ones without asking`, async function () {
    const maker = new QueryMaker(SEED);
    const counts = { occupancy: 0, maxPotentialBlockSize: 0, availableDynamicSmem: 0, archInfo: 0, spoiled: 0, bad: 0 };
    const lines: string[] = [];
    for (let i = 0; i < OCCUPANCY_QUERIES; i++, counts.occupancy++) lines.push(JSON.stringify(maker.occupancyQuery(i)));
    for (let i = 0; i < MAX_POTENTIAL_QUERIES; i++, counts.maxPotentialBlockSize++)
      lines.push(JSON.stringify(maker.maxPotentialQuery(i)));
    for (let i = 0; i < AVAILABLE_SMEM_QUERIES; i++, counts.availableDynamicSmem++)
      lines.push(JSON.stringify(maker.availableDynamicSmemQuery(i)));
    for (let i = 0; i < SPOILED_QUERIES; i++, counts.spoiled++) lines.push(JSON.stringify(maker.spoiledQuery(i)));
    for (const row of ARCHS) {
      lines.push(JSON.stringify({ mode: 'archInfo', arch: archName(row) }));
      lines.push(
        JSON.stringify({
          mode: 'archInfo',
          arch: archName(row),
          device: { computeMinor: (row.device.computeMinor + 2) % 10 },
        }),
      );
      counts.archInfo += 2;
    }
    for (const line of badQueryLines()) {
      lines.push(line);
      counts.bad++;
    }

    const oursStarted = Date.now();
    const questions: Question[] = [];
    let okAnswers = 0;
    let headerErrors = 0;
    let badQueries = 0;
    for (const line of lines) {
      let query: Record<string, unknown> | null = null;
      try {
        const parsed = JSON.parse(line) as unknown;
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) query = parsed as Record<string, unknown>;
      } catch {
        // not JSON: our protocol refuses it
      }
      // `verbose` adds the header inputs our side resolved, and changes nothing else.
      const asked = query && !('verbose' in query) ? JSON.stringify({ ...query, verbose: true }) : line;
      const answer = JSON.parse(JSON.stringify(answerQueryLine(asked))) as Answer;
      if (answer.ok === true) okAnswers++;
      else if (String(answer.error).startsWith('bad query')) badQueries++;
      else headerErrors++;
      const question = query ? questionFor(query, answer) : null;
      if (question) questions.push({ query: line, answer, line: question });
    }
    const oursMs = Date.now() - oursStarted;

    const started = Date.now();
    const reference = await runOracle(
      binary,
      questions.map((q) => q.line),
    );
    const referenceMs = Date.now() - started;
    assert.equal(reference.length, questions.length, 'the reference answers every question');

    const differences: Array<{ query: string; ours: unknown; header: unknown }> = [];
    for (const [i, q] of questions.entries()) {
      assert.notEqual(reference[i], 'bad', `the reference could not read: ${q.line}`);
      const expected = expectedFrom(q.answer.mode, reference[i].split(' ').map(Number));
      const got = ours(q.answer, expected);
      try {
        assert.deepStrictEqual(got, expected);
      } catch {
        differences.push({ query: q.query, ours: got, header: expected });
      }
    }

    console.log(
      `    seed ${SEED}: ${lines.length} queries (${counts.occupancy} occupancy, ${counts.maxPotentialBlockSize} maxPotentialBlockSize, ` +
        `${counts.availableDynamicSmem} availableDynamicSmem, ${counts.archInfo} archInfo, ${counts.spoiled} with a spoiled field, ${counts.bad} hand-written bad lines); ` +
        `ours answered ${okAnswers} ok, ${headerErrors} header errors, ${badQueries} refused; ${questions.length} put to the header; ` +
        `${differences.length} differences; ours ${oursMs} ms, the header ${referenceMs} ms`,
    );
    for (const d of differences.slice(0, 5))
      console.log(
        `    query:  ${d.query}\n    ours:   ${JSON.stringify(d.ours)}\n    header: ${JSON.stringify(d.header)}`,
      );
    assert.equal(
      differences.length,
      0,
      `${differences.length} answers differ from the header's (first ones printed above)`,
    );
    // The generator must reach the corners it claims to, or the agreement proves little.
    assert.ok(okAnswers > 25000, 'most queries are valid');
    assert.ok(headerErrors > 100, 'header errors (invalid carveouts, unknown devices) are exercised');
    assert.ok(badQueries > 500, 'refused queries are exercised');
  });
});
