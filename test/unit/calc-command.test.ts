import * as assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { calcCommand } from '../../server/src/cli/calc-command';
import { UsageError, type CliIO } from '../../server/src/cli/cli-io';
import { answerQueryLine } from '../../server/src/cli/oracle-protocol';

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(args: string[], stdin = ''): Promise<Run> {
  let out = '';
  let err = '';
  const io: CliIO = {
    stdin: Readable.from([stdin]),
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    cwd: process.cwd(),
  };
  const code = await calcCommand(args, io);
  return { code, out, err };
}

describe('cuda-occupancy calc', () => {
  it('prints occupancy, blocks, warps, every limit with the binding one marked, the next step and latency', async () => {
    const r = await run(['--arch', 'sm_90', '--block', '256', '--regs', '64', '--smem', '4096']);
    assert.equal(r.code, 0);
    const lines = r.out.split('\n');
    assert.ok(lines.includes('Occupancy: 50% (32 of 64 warps per SM)'), r.out);
    assert.ok(lines.includes('Active blocks per SM: 4 (8 warps each)'), r.out);
    assert.match(r.out, /^ {2}registers +4 {2}<- binding$/m);
    assert.match(r.out, /^ {2}shared memory +45$/m);
    assert.match(r.out, /^ {2}warps +8$/m);
    assert.match(r.out, /^ {2}block slots +32$/m);
    assert.match(r.out, /^ {2}barriers +64$/m);
    assert.match(r.out, /^ {2}virtual resources +no limit$/m);
    assert.match(r.out, /registers: at most 48 per thread/);
    assert.match(r.out, /issue-bound: +needs 1920 warps/); // ceil(480 x 4)
    assert.match(r.out, /\[H100 SXM5\]/);
  });

  it('leads the latency estimate with the bandwidth-bound reading, and labels the issue-bound one as the upper bound it is', async () => {
    const r = await run(['--arch', 'sm_90', '--block', '256', '--regs', '64', '--smem', '4096']);
    assert.deepEqual(r.out.split('\n').slice(-4), [
      "Latency hiding, Little's law W = ceil(L x r / p) (L = 480 cycles, p = 1 independent load per warp):",
      '  bandwidth-bound: needs 49 warps (r = 0.1/cycle), 32 resident, 65.3% covered [H100 SXM5]: what a memory-bound kernel needs to keep DRAM busy',
      '  issue-bound:     needs 1920 warps (r = 4/cycle), 32 resident, 1.7% covered: the upper bound, for a load on every instruction: more than the 64 warps an SM holds, so only ILP closes it',
      '',
    ]);
  });

  it('prints no next step at 100% occupancy', async () => {
    const r = await run(['--arch', 'sm_90', '--block', '256', '--regs', '16', '--ilp', '32']);
    assert.equal(
      r.out,
      [
        'sm_90 (Hopper): 256 threads/block, 16 registers/thread, 0 B static + 0 B dynamic shared memory',
        'Occupancy: 100% (64 of 64 warps per SM)',
        'Active blocks per SM: 8 (8 warps each)',
        'Block limits per SM:',
        '  registers                16',
        '  shared memory           228',
        '  warps                     8  <- binding',
        '  block slots              32',
        '  barriers                 64',
        '  virtual resources  no limit',
        'Allocated per block: 4096 registers, 1024 B shared memory',
        "Latency hiding, Little's law W = ceil(L x r / p) (L = 480 cycles, p = 32 independent loads per warp):",
        '  bandwidth-bound: needs 2 warps (r = 0.1/cycle), 64 resident, 100% covered [H100 SXM5]: what a memory-bound kernel needs to keep DRAM busy',
        '  issue-bound:     needs 60 warps (r = 4/cycle), 64 resident, 100% covered: the upper bound, for a load on every instruction',
        '',
      ].join('\n'),
    );
  });

  it('--json prints the protocol answer plus nextStep and latency', async () => {
    const r = await run(['--arch=9.0', '--block=256', '--regs=64', '--smem=4096', '--json']);
    const answer = JSON.parse(r.out);
    const protocol = answerQueryLine(
      JSON.stringify({
        arch: 'sm_90',
        blockSize: 256,
        numRegs: 64,
        sharedSizeBytes: 4096,
        dynamicSmemBytes: 0,
        carveout: -1,
        shmemLimitConfig: 'default',
        numBlockBarriers: 1,
      }),
    );
    for (const [key, value] of Object.entries(protocol)) assert.deepEqual(answer[key], value, key);
    assert.equal(answer.nextStep.registers.maxRegsPerThread, 48);
    assert.equal(answer.latency.issueBound.warpsResident, 32);
    assert.equal(answer.latency.bandwidthBound.assumptions.referencePart, 'H100 SXM5');
  });

  it('takes --dyn-smem, --carveout, --optin and --barriers', async () => {
    const r = JSON.parse(
      (
        await run([
          '--arch',
          'sm_80',
          '--block',
          '256',
          '--regs',
          '32',
          '--dyn-smem',
          '20000',
          '--carveout',
          '50',
          '--json',
        ])
      ).out,
    );
    assert.equal(r.activeBlocksPerMultiprocessor, 4);
    assert.deepEqual(r.limitingFactors, ['sharedMemory']);
    const optin = JSON.parse(
      (await run(['--arch', 'sm_90', '--block', '128', '--regs', '0', '--dyn-smem', '102400', '--optin', '--json']))
        .out,
    );
    assert.equal(optin.blockLimitSharedMem, 2);
    const bars = JSON.parse(
      (await run(['--arch', 'sm_90', '--block', '32', '--regs', '16', '--barriers', '3', '--json'])).out,
    );
    assert.equal(bars.blockLimitBarriers, 21); // 32 x 2 / 3
  });

  it('--jsonl answers each query line in order, skips blank and comment lines, and keeps going after a bad line', async () => {
    const input = [
      '{"id":1,"arch":"sm_90","blockSize":256,"numRegs":64,"sharedSizeBytes":4096}',
      '',
      '# a comment',
      '  // another',
      'not json',
      '{"id":2,"mode":"maxPotentialBlockSize","arch":"sm_90","numRegs":64,"sharedSizeBytes":4096}',
      '{"id":3,"arch":"sm_90","blockSize":256,"typo":1}',
      '{"id":4,"mode":"availableDynamicSmem","arch":"sm_90","blockSize":128,"numBlocks":4}\r',
    ].join('\n');
    const r = await run(['--jsonl'], input);
    assert.equal(r.code, 0);
    const answers = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(answers.length, 5);
    assert.equal(answers[0].id, 1);
    assert.equal(answers[0].activeBlocksPerMultiprocessor, 4);
    assert.equal(answers[1].ok, false);
    assert.match(answers[1].error, /^bad query: JSON parse error at offset 0: /);
    assert.deepEqual([answers[2].id, answers[2].blockSize, answers[2].minGridSize], [2, 1024, 132]);
    assert.deepEqual([answers[3].id, answers[3].ok, answers[3].error], [3, false, 'bad query: unknown field "typo"']);
    assert.deepEqual([answers[4].id, answers[4].dynamicSmemBytes], [4, 49152]);
  });

  it('refuses bad usage with a one-line UsageError', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--block', '256', '--regs', '64'], /--arch is required/],
      [['--arch', 'sm_35', '--block', '256', '--regs', '64'], /unknown architecture "sm_35"/],
      [['--arch', 'sm_90', '--regs', '64'], /--block is required/],
      [['--arch', 'sm_90', '--block', '256'], /--regs is required/],
      [['--arch', 'sm_90', '--block', 'lots', '--regs', '64'], /--block must be an integer/],
      [['--arch', 'sm_90', '--block', '0', '--regs', '64'], /--block must be between 1 and 65536/],
      [
        ['--arch', 'sm_90', '--block', '256', '--regs', '64', '--carveout', '101'],
        /--carveout must be between -1 and 100/,
      ],
      [['--arch', 'sm_90', '--block', '256', '--regs', '64', '--frobnicate'], /unknown argument "--frobnicate"/],
      [['--arch', 'sm_90', '--block', '256', '--regs'], /--regs needs a value/],
      [['--arch', 'sm_90', '--block', '256', '--regs', '64', '--ilp', '0'], /--ilp must be a positive number/],
      [['--jsonl', '--arch', 'sm_90'], /--jsonl .* takes no other flag/],
      [['--arch', 'sm_90', '--block', '256', '--regs', '64', '--json=yes'], /--json takes no value/],
    ];
    for (const [args, message] of cases) {
      await assert.rejects(run(args), (e: unknown) => {
        assert.ok(e instanceof UsageError, `${args.join(' ')}: ${String(e)}`);
        assert.match(e.message, message);
        assert.ok(!e.message.includes('\n'), 'one line');
        return true;
      });
    }
  });
});
