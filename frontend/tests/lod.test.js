import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decodeColumn } from '../js/columns.js';
import { inverseOrder, randomOrder, sampleSize } from '../js/renderer/lod.js';

test('a random order is a permutation whose prefix samples every part in proportion', () => {
  const n = 100000;
  const order = randomOrder(n);
  assert.equal(new Set(order).size, n);
  const firstTenth = order.subarray(0, n / 10);
  const quarters = [0, 0, 0, 0];
  for (const i of firstTenth) quarters[Math.floor((i / n) * 4)]++;
  for (const q of quarters) assert.ok(Math.abs(q - n / 40) < n / 400, `quarter count ${q}`);
});

test('the inverse order gives each point its rank', () => {
  const order = Int32Array.from([3, 0, 2, 1]);
  assert.deepEqual(Array.from(inverseOrder(order)), [1, 3, 2, 0]);
});

test('a sample is drawn larger, the whole set at its size', () => {
  assert.equal(sampleSize(1), 1);
  assert.ok(sampleSize(0.5) > 1 && sampleSize(0.5) < sampleSize(0.05));
  assert.equal(sampleSize(1e-6), 2.5);
});

test('a column decodes from its dictionary and codes', () => {
  assert.deepEqual(decodeColumn(['a', 'b', ''], Int32Array.from([1, 0, 2, 1])), ['b', 'a', '', 'b']);
});
