import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  categoricalColoring,
  columnColoring,
  DEFAULT_COLOR,
  gradientColor,
  hexToRgb,
  LEGEND_LIMIT,
  MISSING_COLOR,
  numericColoring,
  PALETTE,
  uniformColoring,
} from '../js/colors.js';

const rgbAt = (colors, i) => Array.from(colors.slice(i * 4, i * 4 + 3));

test('hex colours parse', () => {
  assert.deepEqual(hexToRgb('#7575d9'), [117, 117, 217]);
});

test('without colour-by every point has the default colour', () => {
  const c = uniformColoring(3);
  assert.deepEqual(rgbAt(c.colors, 2), DEFAULT_COLOR);
  assert.equal(c.colors[3], 255);
});

test('categories are coloured and listed by value, and the legend counts them', () => {
  const c = categoricalColoring(['b', 'a', 'b', '', 'c', 'b', 'a']);
  assert.equal(c.kind, 'categorical');
  assert.deepEqual(c.legend.items.map((i) => [i.value, i.count]), [['a', 2], ['b', 3], ['c', 1]]);
  assert.equal(c.legend.missing, 1);
  assert.deepEqual(rgbAt(c.colors, 0), PALETTE[1]); // b
  assert.deepEqual(rgbAt(c.colors, 1), PALETTE[0]); // a
  assert.deepEqual(rgbAt(c.colors, 3), MISSING_COLOR);
});

test('digits read 0 to 9 in the legend and keep their colours when the counts change', () => {
  const digits = (counts) => counts.flatMap((n, d) => Array(n).fill(String(d)));
  const one = categoricalColoring(digits([5, 9, 2, 7, 1, 3, 8, 4, 6, 5]));
  const other = categoricalColoring(digits([9, 1, 8, 2, 7, 3, 6, 4, 5, 5]));
  assert.deepEqual(one.legend.items.map((i) => i.value), ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
  assert.deepEqual(one.legend.items.map((i) => i.color), other.legend.items.map((i) => i.color));
  assert.deepEqual(one.legend.items.map((i) => i.color), PALETTE.slice(0, 10));
});

test('beyond the legend limit the most frequent are named, by value', () => {
  const values = Array.from({ length: 25 }, (_, i) => Array(i + 1).fill(`v${String(i).padStart(2, '0')}`)).flat();
  const c = categoricalColoring(values);
  assert.deepEqual(c.legend.items.map((i) => i.value), Array.from({ length: 20 }, (_, i) => `v${String(i + 5).padStart(2, '0')}`));
  assert.equal(c.legend.otherCount, 1 + 2 + 3 + 4 + 5);
});

test('numeric-looking categories with equal counts are ordered numerically', () => {
  const c = categoricalColoring(['10', '9', '2']);
  assert.deepEqual(c.legend.items.map((i) => i.value), ['2', '9', '10']);
});

test('beyond the legend limit the rest is counted together and colours cycle', () => {
  const values = Array.from({ length: 30 }, (_, i) => `v${String(i).padStart(2, '0')}`);
  const c = categoricalColoring(values);
  assert.equal(c.legend.items.length, LEGEND_LIMIT);
  assert.equal(c.legend.categories, 30);
  assert.equal(c.legend.otherCount, 10);
  assert.deepEqual(rgbAt(c.colors, PALETTE.length), PALETTE[0]);
});

test('the numeric gradient runs from min to max and marks missing values', () => {
  const c = numericColoring(Float64Array.from([0, 5, 10, NaN]));
  assert.deepEqual(c.legend, { min: 0, max: 10, missing: 1 });
  assert.deepEqual(rgbAt(c.colors, 0), gradientColor(0));
  assert.deepEqual(rgbAt(c.colors, 2), gradientColor(1));
  assert.deepEqual(rgbAt(c.colors, 3), MISSING_COLOR);
  assert.notDeepEqual(gradientColor(0), gradientColor(1));
  assert.deepEqual(gradientColor(-3), gradientColor(0));
});

test('a constant numeric column does not divide by zero', () => {
  const c = numericColoring(Float64Array.from([2, 2]));
  assert.deepEqual(rgbAt(c.colors, 0), gradientColor(0));
});

test('numeric columns can be forced to categorical colouring', () => {
  const values = ['1', '2', '1'];
  const numbers = Float64Array.from([1, 2, 1]);
  assert.equal(columnColoring(values, numbers).kind, 'numeric');
  assert.equal(columnColoring(values, numbers, { categorical: true }).kind, 'categorical');
  assert.equal(columnColoring(values, null).kind, 'categorical');
});
