import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ARCHS, archName, parseArch, type DeviceProps } from '../../server/src/core/gpu/arch-table';
import { headerArchConstants } from '../../server/src/core/gpu/occupancy';
import { oracleDir } from '../support/oracle-process';

const EXPECTED = ['5.0', '5.2', '5.3', '6.0', '6.1', '6.2', '7.0', '7.2', '7.5', '8.0', '8.6', '8.7', '8.8', '8.9', '9.0', '10.0', '10.3', '11.0', '12.0', '12.1'];

describe('arch table', () => {
  it('has one row per documented compute capability from 5.0 to 12.1, in order', () => {
    assert.deepEqual(ARCHS.map((r) => `${r.device.computeMajor}.${r.device.computeMinor}`), EXPECTED);
  });

  it('reads every spelling: sm_90, sm_90a, sm_100f, compute_90, 90, 9.0, case and blanks ignored', () => {
    for (const text of ['sm_90', 'sm_90a', 'compute_90', '90', '9.0', ' SM_90 ', 'Compute_90A', 'sm90']) {
      assert.equal(parseArch(text)?.name, 'sm_90', text);
    }
    assert.equal(parseArch('sm_100f')?.name, 'sm_100');
    assert.equal(parseArch('10.3')?.name, 'sm_103');
    assert.equal(parseArch('121')?.name, 'sm_121');
    for (const text of ['sm_35', 'sm_91', '9', '9.', 'sm_90x', '', 'ampere', '1000', '9.01']) {
      assert.equal(parseArch(text), undefined, text);
    }
  });

  it('names rows sm_XY', () => {
    for (const row of ARCHS) {
      assert.equal(archName(row), row.name);
      assert.equal(parseArch(row.name), row);
    }
  });

  it('agrees with the header\'s hard-coded constants for every row', () => {
    for (const row of ARCHS) {
      const h = headerArchConstants(row.device);
      assert.equal(h.error, null, row.name);
      assert.equal(row.maxBlocksPerMultiprocessor, h.maxBlocksPerMultiprocessor, `${row.name} blocks`);
      assert.equal(row.smemAllocationGranularity, h.smemAllocationGranularity, `${row.name} smem granularity`);
      assert.equal(row.regAllocationUnit, h.regAllocationGranularity, `${row.name} register unit`);
      assert.equal(row.subPartitionsPerMultiprocessor, h.subPartitionsPerMultiprocessor, `${row.name} sub-partitions`);
      assert.deepEqual([...row.sharedMemCarveoutKB], h.sharedMemCarveoutKB, `${row.name} carveouts`);
      assert.equal(row.carveoutConfigurable, h.carveoutConfigurable, `${row.name} carveout configurable`);
      assert.equal(row.barriersPerBlockSlot, h.barriersPerBlockSlot, `${row.name} barriers`);
      assert.equal(row.partitionedGlobalCachingSupported, h.partitionedGlobalCachingSupported, `${row.name} partitioned caching`);
      assert.equal(row.device.sharedMemPerMultiprocessor, h.defaultSharedMemPerMultiprocessor, `${row.name} default smem`);
      // The documented 255; the header checks against 255 before 7.0 and 256 from 7.0.
      assert.equal(row.maxRegsPerThread, 255);
      assert.equal(h.maxRegsPerThread, row.device.computeMajor >= 7 ? 256 : 255);
      assert.equal(row.maxWarpsPerMultiprocessor, row.device.maxThreadsPerMultiprocessor / row.device.warpSize);
      assert.equal(row.schedulersPerMultiprocessor, 4);
    }
  });

  it('matches ../shared/oracle/archs.json field for field', function () {
    const file = path.join(oracleDir(), 'archs.json');
    if (!fs.existsSync(file)) {
      console.log(`    skipped: ${file} not found`);
      this.skip();
    }
    const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { archs: Array<Record<string, unknown>> };
    assert.equal(json.archs.length, ARCHS.length);
    for (const [i, doc] of json.archs.entries()) {
      const row = ARCHS[i];
      assert.equal(row.name, doc.arch);
      for (const key of Object.keys(row.device) as Array<keyof DeviceProps>) assert.equal(row.device[key], doc[key], `${row.name}.${key}`);
      assert.equal(row.maxBlocksPerMultiprocessor, doc.maxBlocksPerMultiprocessor, row.name);
      assert.equal(row.maxWarpsPerMultiprocessor, doc.maxWarpsPerMultiprocessor, row.name);
      assert.equal(row.maxRegsPerThread, doc.maxRegsPerThread, row.name);
      assert.equal(row.carveoutConfigurable, doc.carveoutConfigurable, row.name);
      assert.deepEqual([...row.sharedMemCarveoutKB], doc.sharedMemCarveoutKB, row.name);
      assert.equal(row.family, doc.family, row.name);
      assert.equal(row.numSmsExampleGpu, doc.numSmsExampleGpu, row.name);
    }
  });
});
