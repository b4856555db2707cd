import assert from 'node:assert/strict';
import { test } from 'node:test';

import { columnColoring } from '../js/colors.js';
import { FLAG_FOCUS, FLAG_HIDDEN, FLAG_NEIGHBOR, FLAG_SELECTED } from '../js/renderer/points.js';
import { categoricalByDefault, tileColoring } from '../js/tiles/coloring.js';
import { NO_MARKS, tileColors, tileFlags } from '../js/tiles/paint.js';
import { numericColumn } from '../js/tsv.js';

/** A column's dictionary (first appearance) and its counts, as the server's counts route. */
function summary(column, values) {
  const dictionary = [...new Set(values)];
  const counts = dictionary.map((v) => values.filter((x) => x === v).length);
  return { column, dictionary, counts, codes: values.map((v) => dictionary.indexOf(v)) };
}

function tileOf(rows, coords, codes, column) {
  const positions = new Float32Array(rows.length * 3);
  coords.forEach(([x, y], r) => positions.set([x, y, 0], r * 3));
  return { count: rows.length, rows: Int32Array.from(rows), coords: Float32Array.from(coords.flat()), positions, codes: Int32Array.from(codes), column };
}

test('tile colours by code are the whole set colours of the same rows, categorical and numeric', () => {
  for (const values of [['b', 'a', 'b', '', 'c', 'b', 'a'], ['3', '1.5', '', '3', '7']]) {
    const s = summary('col', values);
    for (const categorical of [true, false]) {
      const whole = columnColoring(values, numericColumn(values), { categorical });
      const tiled = tileColoring(s, categorical);
      assert.equal(tiled.kind, whole.kind);
      assert.deepEqual(tiled.legend, whole.legend);
      const tile = tileOf(values.map((_, i) => i), values.map(() => [0, 0]), s.codes, 'col');
      assert.deepEqual(Array.from(tileColors(tile, tiled.tile)), Array.from(whole.colors));
    }
  }
  assert.equal(categoricalByDefault(summary('c', ['1', '2', '1'])), true); // few integers
  assert.equal(categoricalByDefault(summary('c', ['1.5', '2', '1'])), false);
});

test('tile flags come from rules: a region, matching codes, a few rows, isolated rows', () => {
  const tile = tileOf([10, 11, 12, 13], [[0, 0], [2, 2], [0.5, 0.5], [NaN, 0]], [0, 1, 1, 0], 'col');
  assert.deepEqual(Array.from(tileFlags(tile, NO_MARKS, [0, 1])), [0, 0, 0, FLAG_HIDDEN]);
  const region = { polygon: [[-1, -1], [1, -1], [1, 1], [-1, 1]], axes: [0, 1] };
  const marks = { ...NO_MARKS, region, rows: new Map([[11, FLAG_NEIGHBOR | FLAG_FOCUS]]) };
  assert.deepEqual(Array.from(tileFlags(tile, marks, [0, 1])),
    [FLAG_SELECTED, FLAG_NEIGHBOR | FLAG_FOCUS, FLAG_SELECTED, FLAG_HIDDEN]);
  assert.deepEqual(Array.from(tileFlags(tile, marks, [0, 2])), [0, FLAG_NEIGHBOR | FLAG_FOCUS, 0, FLAG_HIDDEN]); // other axes
  const match = { column: 'col', codes: new Set([1]) };
  assert.deepEqual(Array.from(tileFlags(tile, { ...NO_MARKS, match, keep: new Set([11, 13]) }, [0, 1])),
    [FLAG_HIDDEN, FLAG_SELECTED, FLAG_SELECTED | FLAG_HIDDEN, FLAG_HIDDEN]);
  assert.deepEqual(Array.from(tileFlags(tile, { ...NO_MARKS, match: { ...match, column: 'other' } }, [0, 1])), [0, 0, 0, FLAG_HIDDEN]);
});
