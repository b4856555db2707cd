import assert from 'node:assert/strict';
import { test } from 'node:test';

import { MISSING_COLOR, gradientColor } from '../js/colors.js';
import { changeColors, fitTogether } from '../js/compare/linked.js';

test('both layouts share one box, so a point that did not move sits at the same place', () => {
  const a = new Float32Array([0, 0, 10, 0, 0, 10]); // 3 points, 2 columns
  const b = new Float32Array([0, 0, 9, 20, 0, 0, 0, 10, 1]); // 3 points x 3 columns
  const [pa, pb] = fitTogether(a, 2, b, 3, 3);
  assert.equal(pa.length, 9);
  assert.equal(pb.length, 9);
  assert.deepEqual(Array.from(pa.slice(0, 2)), Array.from(pb.slice(0, 2))); // point 0 unmoved at (0, 0)
  const all = [...pa, ...pb].map(Math.abs);
  assert.ok(Math.max(...all) <= 1 + 1e-6);
});

test('colour follows the lost overlap; rows without a value get the missing colour', () => {
  const colors = changeColors([1, 0, null]);
  assert.deepEqual(Array.from(colors.slice(0, 3)), gradientColor(0));
  assert.deepEqual(Array.from(colors.slice(4, 7)), gradientColor(1));
  assert.deepEqual(Array.from(colors.slice(8, 11)), MISSING_COLOR);
  assert.equal(colors[11], 255);
});

test('the dark theme starts the change scale above the gradient\'s darkest end', async () => {
  const { changeFloor } = await import('../js/compare/linked.js');
  const [light] = [changeColors([1])];
  const dark = changeColors([1], true);
  assert.equal(changeFloor(false), 0);
  assert.ok(dark[0] + dark[1] + dark[2] > light[0] + light[1] + light[2] + 100);
});
