import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decodeColumn } from '../js/columns.js';
import { categoryBinning, csvLine, MISSING, numericBinning, rowsInBins, selectedCounts } from '../js/structure/binning.js';
import { contourSegments, densityGrid } from '../js/structure/density.js';
import { measuredUnasked, QUALITY_AUTO_POINTS } from '../js/structure/quality.js';

const IDENTITY = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1];

test('density peaks where the points are and integrates to their number', () => {
  const positions = new Float32Array([0.5, 0.5, 0, 0.5, 0.5, 0, -0.5, -0.5, 0]);
  const field = densityGrid(positions, 3, IDENTITY, 200, 200, { cell: 4, sigma: 2 });
  const total = field.grid.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(total - 3) < 1e-3);
  const peak = field.grid.indexOf(field.max);
  const [col, row] = [peak % field.cols, Math.floor(peak / field.cols)];
  assert.deepEqual([col, row], [37, 12]); // x = 0.5 -> 150 px, y = 0.5 -> 50 px (up is up)
});

test('hidden points are left out of the density', () => {
  const positions = new Float32Array([0, 0, 0, 0.5, 0.5, 0]);
  const field = densityGrid(positions, 2, IDENTITY, 100, 100, { flags: Uint8Array.from([0, 4]), hiddenBit: 4 });
  assert.ok(Math.abs(field.grid.reduce((a, b) => a + b, 0) - 1) < 1e-3);
});

test('a single blob gives a closed contour: every end point is shared by two segments', () => {
  const positions = new Float32Array(300);
  for (let i = 0; i < 100; i++) positions.set([Math.cos(i) * 0.05, Math.sin(i) * 0.05, 0], i * 3);
  const field = densityGrid(positions, 100, IDENTITY, 160, 160, { cell: 4, sigma: 3 });
  const segments = contourSegments(field, field.max * 0.5);
  assert.ok(segments.length >= 16);
  const ends = new Map();
  for (let k = 0; k < segments.length; k += 2) {
    const key = `${segments[k].toFixed(3)},${segments[k + 1].toFixed(3)}`;
    ends.set(key, (ends.get(key) ?? 0) + 1);
  }
  assert.ok([...ends.values()].every((count) => count === 2));
  for (let k = 0; k < segments.length; k += 2) assert.ok(Math.hypot(segments[k] - 80, segments[k + 1] - 80) < 40);
});

test('numeric bins, selected counts and the rows of a brushed range', () => {
  const numbers = Float64Array.from([0, 1, 2, 3, NaN, 10]);
  const b = numericBinning(numbers, 5);
  assert.deepEqual(Array.from(b.counts), [2, 2, 0, 0, 1]);
  assert.equal(b.missing, 1);
  assert.equal(b.index[4], MISSING);
  assert.deepEqual(Array.from(selectedCounts(b, [0, 5, 4])), [1, 0, 0, 0, 1]);
  assert.deepEqual(rowsInBins(b, 0, 1), [0, 1, 2, 3]);
});

test('categories keep the most frequent values and put the rest in "other"', () => {
  const b = categoryBinning(['a', 'b', 'a', '', 'c', 'a', 'b', 'd'], 2);
  assert.deepEqual(b.labels, ['a', 'b', '(2 other values)']);
  assert.deepEqual(Array.from(b.counts), [3, 2, 2]);
  assert.equal(b.missing, 1);
  assert.deepEqual(rowsInBins(b, 1, 1), [1, 6]);
});

test('CSV cells with separators or quotes are quoted', () => {
  assert.equal(csvLine(['1', 'a,b', 'say "hi"', 'plain']), '1,"a,b","say ""hi""",plain');
});

test('class ids are shown in value order, and one left-over value is shown itself', () => {
  const values = ['10', '2', '2', '1', '1', '1', '3'];
  const b = categoryBinning(values, 3, values.map(Number));
  assert.deepEqual(b.labels, ['1', '2', '3', '10']);
  assert.deepEqual(Array.from(b.counts), [3, 2, 1, 1]);
});

test('a column of all-different values is summarised, not binned', () => {
  const values = Array.from({ length: 40 }, (_, i) => `w${i}`);
  const b = categoryBinning(values, 12);
  assert.equal(b.kind, 'unique');
  assert.equal(b.distinct, 40);
  assert.deepEqual(b.examples, ['w0', 'w1', 'w2', 'w3', 'w4']);
  assert.deepEqual(Array.from(selectedCounts(b, [1, 2])), []);
});

test('a coded column is told unique from its code counts as its plain values are', async () => {
  // Dictionary entries no row uses and the empty value count for neither.
  const dictionary = ['', 'unused', ...Array.from({ length: 40 }, (_, i) => `w${i}`)];
  const codes = Int32Array.from([0, 0, ...Array.from({ length: 40 }, (_, i) => i + 2)]);
  const coded = categoryBinning(await decodeColumn(dictionary, codes), 12);
  assert.deepEqual(coded, categoryBinning(['', '', ...Array.from({ length: 40 }, (_, i) => `w${i}`)], 12));
  assert.equal(coded.missing, 2);
  // A few values repeated: binned, not summarised.
  const few = Int32Array.from({ length: 400 }, (_, i) => 2 + (i % 20));
  assert.equal(categoryBinning(await decodeColumn(dictionary, few), 12).kind, 'categorical');
});

test('quality is measured unasked only for a small set (seconds of server work)', () => {
  assert.equal(measuredUnasked(1797), true);
  assert.equal(measuredUnasked(QUALITY_AUTO_POINTS), true);
  assert.equal(measuredUnasked(120000), false);
});
