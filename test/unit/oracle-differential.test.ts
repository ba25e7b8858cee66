/**
 * Differential test: our calculator, through the same protocol path `calc --jsonl` uses,
 * against NVIDIA's cuda_occupancy.h (../shared/oracle) on tens of thousands of seeded
 * random queries over every architecture and the corners. Zero differences allowed.
 */

import * as assert from 'node:assert/strict';
import { ARCHS, archName } from '../../server/src/core/gpu/arch-table';
import { answerQueryLine } from '../../server/src/cli/oracle-protocol';
import { buildOracle, runOracle } from '../support/oracle-process';
import { QueryMaker, badQueryLines } from '../support/oracle-queries';

const SEED = Number(process.env.OCC_DIFF_SEED ?? 20250613);
const OCCUPANCY_QUERIES = 24000;
const MAX_POTENTIAL_QUERIES = 3000;
const AVAILABLE_SMEM_QUERIES = 2000;
const SPOILED_QUERIES = 1000;

interface Difference {
  query: string;
  ours: unknown;
  oracle: unknown;
}

/** Field-by-field equality, error texts included (our protocol reader mirrors the oracle's JSON reader). */
function sameAnswer(ours: Record<string, unknown>, oracle: Record<string, unknown>): boolean {
  try {
    assert.deepStrictEqual(ours, oracle);
    return true;
  } catch {
    return false;
  }
}

describe('occupancy calculator against cuda_occupancy.h (oracle)', function () {
  this.timeout(120000);
  let binary = '';

  before(function () {
    const build = buildOracle();
    if (!build.ok) {
      console.log(`    skipped: cannot build the occupancy oracle: ${build.reason}`);
      this.skip();
    } else {
      binary = build.binary;
    }
  });

  it(`agrees on every random query (seed ${SEED}) and every bad one`, async function () {
    const maker = new QueryMaker(SEED);
    const counts = { occupancy: 0, maxPotentialBlockSize: 0, availableDynamicSmem: 0, archInfo: 0, spoiled: 0, bad: 0 };
    const lines: string[] = [];
    for (let i = 0; i < OCCUPANCY_QUERIES; i++, counts.occupancy++) lines.push(JSON.stringify(maker.occupancyQuery(i)));
    for (let i = 0; i < MAX_POTENTIAL_QUERIES; i++, counts.maxPotentialBlockSize++) lines.push(JSON.stringify(maker.maxPotentialQuery(i)));
    for (let i = 0; i < AVAILABLE_SMEM_QUERIES; i++, counts.availableDynamicSmem++) lines.push(JSON.stringify(maker.availableDynamicSmemQuery(i)));
    for (let i = 0; i < SPOILED_QUERIES; i++, counts.spoiled++) lines.push(JSON.stringify(maker.spoiledQuery(i)));
    for (const row of ARCHS) {
      lines.push(JSON.stringify({ mode: 'archInfo', arch: archName(row) }));
      lines.push(JSON.stringify({ mode: 'archInfo', arch: archName(row), device: { computeMinor: (row.device.computeMinor + 2) % 10 } }));
      counts.archInfo += 2;
    }
    for (const line of badQueryLines()) {
      lines.push(line);
      counts.bad++;
    }

    const started = Date.now();
    const oracleLines = await runOracle(binary, lines);
    const oracleMs = Date.now() - started;
    assert.equal(oracleLines.length, lines.length, 'the oracle answers every line');

    const oursStarted = Date.now();
    const differences: Difference[] = [];
    let okAnswers = 0;
    let headerErrors = 0;
    let badQueries = 0;
    for (let i = 0; i < lines.length; i++) {
      const ours = JSON.parse(JSON.stringify(answerQueryLine(lines[i]))) as Record<string, unknown>;
      const oracle = JSON.parse(oracleLines[i]) as Record<string, unknown>;
      if (oracle.ok === true) okAnswers++;
      else if (String(oracle.error).startsWith('bad query')) badQueries++;
      else headerErrors++;
      if (!sameAnswer(ours, oracle)) differences.push({ query: lines[i], ours, oracle });
    }
    const oursMs = Date.now() - oursStarted;

    console.log(
      `    seed ${SEED}: ${lines.length} queries (${counts.occupancy} occupancy, ${counts.maxPotentialBlockSize} maxPotentialBlockSize, ` +
        `${counts.availableDynamicSmem} availableDynamicSmem, ${counts.archInfo} archInfo, ${counts.spoiled} with a spoiled field, ${counts.bad} hand-written bad lines); ` +
        `oracle answered ${okAnswers} ok, ${headerErrors} header errors, ${badQueries} bad queries; ` +
        `${differences.length} differences; oracle ${oracleMs} ms, ours ${oursMs} ms`,
    );
    for (const d of differences.slice(0, 5)) {
      console.log(`    query:  ${d.query}\n    ours:   ${JSON.stringify(d.ours)}\n    oracle: ${JSON.stringify(d.oracle)}`);
    }
    assert.equal(differences.length, 0, `${differences.length} answers differ from the oracle (first ones printed above)`);
    // The generator must reach the corners it claims to, or the agreement proves little.
    assert.ok(okAnswers > 25000, 'most queries are valid');
    assert.ok(headerErrors > 100, 'header errors (invalid carveouts, unknown devices) are exercised');
    assert.ok(badQueries > 500, 'refused queries are exercised');
  });
});
