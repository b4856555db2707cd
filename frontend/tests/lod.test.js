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

test('a column decodes from its dictionary and codes', async () => {
  assert.deepEqual(await decodeColumn(['a', 'b', ''], Int32Array.from([1, 0, 2, 1])), ['b', 'a', '', 'b']);
});

test('a slice of the order is fitted to the screen as the whole set is', async () => {
  const { fitSlice } = await import('../js/tiles/fetch.js');
  const { fitPositions } = await import('../js/geometry.js');
  const n = 1000;
  const coords = new Float32Array(n * 2);
  for (let i = 0; i < n * 2; i++) coords[i] = Math.sin(i * 12.9898) * 437.5 + (i % 2) * 30;
  coords[14] = NaN;
  const whole = fitPositions(coords, n, 2, [0, 1]).positions;
  const lo = [Infinity, Infinity];
  const hi = [-Infinity, -Infinity];
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(coords[i * 2]) || !Number.isFinite(coords[i * 2 + 1])) continue;
    for (let a = 0; a < 2; a++) {
      lo[a] = Math.min(lo[a], coords[i * 2 + a]);
      hi[a] = Math.max(hi[a], coords[i * 2 + a]);
    }
  }
  const indices = [7, 999, 0, 500];
  const slice = new Float32Array(indices.flatMap((i) => [coords[i * 2], coords[i * 2 + 1]]));
  const fitted = fitSlice({ coords: slice, k: 2, bounds: { lo, hi } });
  indices.forEach((i, r) => {
    for (let a = 0; a < 3; a++) assert.equal(fitted[r * 3 + a], whole[i * 3 + a]);
  });
});

test('rows follow the draw order whatever their width', async () => {
  const { permuteRows } = await import('../js/renderer/points.js');
  const order = Int32Array.from([2, 0, 1]);
  assert.deepEqual(Array.from(permuteRows(Uint8Array.from([5, 6, 7]), order, 1)), [7, 5, 6]);
  const rgba = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  assert.deepEqual(Array.from(permuteRows(rgba, order, 4)), [9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8]);
  const xyz = Float32Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(Array.from(permuteRows(xyz, order, 3)), [6, 7, 8, 0, 1, 2, 3, 4, 5]);
  assert.deepEqual(Array.from(permuteRows(Float32Array.from([1, 2, 3, 4, 5, 6]), order, 2)), [5, 6, 1, 2, 3, 4]);
});

test('a decoded column knows its distinct values from its dictionary', async () => {
  const { fewDistinct } = await import('../js/columns.js');
  const codes = Int32Array.from({ length: 3000000 }, (_, i) => i % 3);
  const values = await decodeColumn(['a', 'b', 'c'], codes);
  assert.equal(values[2999999], 'c');
  assert.equal(fewDistinct(values), true);
  assert.equal(fewDistinct(await decodeColumn(['only'], new Int32Array(5))), false);
});

test('inSlices covers every row once, in slices, letting other tasks run between them', async () => {
  const { inSlices } = await import('../js/yielding.js');
  const seen = [];
  setTimeout(() => seen.push('other task'), 0);
  await inSlices(10, (start, end) => seen.push([start, end]), 4);
  assert.deepEqual(seen.filter((s) => s !== 'other task'), [[0, 4], [4, 8], [8, 10]]);
  assert.ok(seen.indexOf('other task') > 0 && seen.indexOf('other task') < seen.length - 1);
});

test('a column decoded from codes is coloured as its strings are', async () => {
  const { categoricalColoring } = await import('../js/colors.js');
  const dictionary = ['b', '', 'a', '10', '9'];
  const codes = Int32Array.from({ length: 5000 }, (_, i) => (i * 7919) % 5);
  const decoded = await decodeColumn(dictionary, codes);
  const plain = Array.from(decoded); // the same strings, without their codes
  const fast = categoricalColoring(decoded);
  const slow = categoricalColoring(plain);
  assert.deepEqual(Array.from(fast.colors), Array.from(slow.colors));
  assert.deepEqual(fast.legend, slow.legend);
});

test('a column decoded from codes is binned as its strings are', async () => {
  const { categoryBinning } = await import('../js/structure/binning.js');
  const dictionary = ['b', '', 'a', 'c', 'd'];
  const codes = Int32Array.from({ length: 3000 }, (_, i) => (i * i) % 5);
  const decoded = await decodeColumn(dictionary, codes);
  for (const top of [12, 2]) {
    const fast = categoryBinning(decoded, top);
    const slow = categoryBinning(Array.from(decoded), top);
    assert.deepEqual({ ...fast, index: Array.from(fast.index), counts: Array.from(fast.counts) },
      { ...slow, index: Array.from(slow.index), counts: Array.from(slow.counts) });
  }
});
