/** The heat map's shading (client/src/pressure-levels.ts): a line's level by its share of the kernel's peak. */
import * as assert from 'node:assert/strict';
import { levelColor, PRESSURE_LEVELS, pressureLevel } from '../../client/src/pressure-levels';

describe('pressure heat map levels', () => {
  it('puts the peak in the top level, nothing live in the lowest, and rises with the share of the peak', () => {
    assert.equal(pressureLevel(17, 17), PRESSURE_LEVELS - 1);
    assert.equal(pressureLevel(0, 17), 0);
    assert.equal(pressureLevel(3, 0), 0);
    assert.equal(pressureLevel(40, 17), PRESSURE_LEVELS - 1);
    const levels = Array.from({ length: 18 }, (_, live) => pressureLevel(live, 17));
    assert.deepEqual(
      [...levels].sort((a, b) => a - b),
      levels,
    );
    assert.deepEqual(new Set(levels).size, PRESSURE_LEVELS);
  });

  it('gives each level its own colour', () => {
    assert.equal(new Set(Array.from({ length: PRESSURE_LEVELS }, (_, l) => levelColor(l))).size, PRESSURE_LEVELS);
  });
});
