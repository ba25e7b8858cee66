/**
 * The README is tested: every block in README.md and docs/*.md that shows the CLI (`$ node
 * dist/cli/cuda-occupancy.js ...` or `$ cuda-occupancy ...`) is marked `<!-- cli-output -->`, and
 * scripts/doc-outputs.mjs runs each command and compares what it prints with the block (the
 * repository's path and "N min ago" aside). A block with ptxas's figures says which nvcc made them
 * (`nvcc=13.0`) and is checked where that nvcc is. `npm run docs:outputs` writes them again.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from '../support/cli-run';

interface Outcome {
  where: string;
  command: string;
  state: 'same' | 'differs' | 'skipped';
  why?: string;
  expected?: string;
  printed?: string;
}

const documents = [
  path.join(REPO_ROOT, 'README.md'),
  ...readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join(REPO_ROOT, 'docs', f)),
];

describe('the CLI output shown in the README and docs/', function () {
  this.timeout(180_000);

  it('is in marked blocks only: every block that shows a cuda-occupancy command is checked', () => {
    const unmarked: string[] = [];
    for (const file of documents) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, k) => {
        if (
          /^\$ (node dist\/cli\/cuda-occupancy\.js|cuda-occupancy) /.test(line) &&
          !/cli-output/.test(lines[k - 2] ?? '')
        )
          unmarked.push(`${path.relative(REPO_ROOT, file)}:${k + 1}: ${line}`);
      });
    }
    assert.deepEqual(unmarked, []);
  });

  it('is what the commands print', () => {
    const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'doc-outputs.mjs'), '--json'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const outcomes = JSON.parse(run.stdout) as Outcome[];
    for (const o of outcomes.filter((x) => x.state === 'skipped')) console.log(`      (skipped ${o.where}: ${o.why})`);
    // The calculator's block needs no nvcc: at least it is checked everywhere.
    assert.ok(outcomes.filter((o) => o.state === 'same').length >= 1, JSON.stringify(outcomes, null, 2));
    for (const o of outcomes.filter((x) => x.state === 'differs'))
      assert.equal(
        o.printed,
        o.expected,
        `${o.where}: $ ${o.command} prints otherwise (npm run docs:outputs writes it)`,
      );
  });
});
