// Search by meaning and by example in the page: the state it keeps, the example search the
// browser computes itself (uploads) and a shared site's stand-in, and where a phrase's marker
// goes on the plot.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fitPositions, placeIn } from '../js/geometry.js';
import { exampleNeighbors } from '../js/kernels.js';
import { evenSample, phraseColor, phrasesOf } from '../js/meaning/search.js';
import { ArrayPoints } from '../js/points/array_points.js';
import { decodeState, defaultState, encodeState, sanitizeState } from '../js/state.js';
import { commonNeighbors } from '../js/static_mode.js';

test('the phrases, the mode and k survive the URL; bad ones fall back', () => {
  const s = defaultState();
  s.meaning = { on: true, query: 'wild animals', phrases: ['shades of blue', '雨の日'], k: 25 };
  assert.deepEqual(decodeState(encodeState(s)).meaning, s.meaning);
  const bad = sanitizeState({ meaning: { on: 'yes', query: 3, phrases: ['a', ' ', 'a', 7, 'b'], k: 0 } });
  assert.deepEqual(bad.meaning, { on: false, query: '', phrases: ['a', 'b'], k: 10 });
  assert.deepEqual(sanitizeState({}).meaning, defaultState().meaning);
});

test('the phrases searched are the kept ones then the typed one, trimmed, each once', () => {
  assert.deepEqual(phrasesOf({ phrases: ['blue', 'red'], query: ' green ' }), ['blue', 'red', 'green']);
  assert.deepEqual(phrasesOf({ phrases: ['blue'], query: 'blue' }), ['blue']);
  assert.deepEqual(phrasesOf({ phrases: [], query: '   ' }), []);
  assert.notEqual(phraseColor(0), phraseColor(1));
  assert.equal(phraseColor(0), phraseColor(10));
});

test('an even sample keeps at most its size, spread over the rows', () => {
  assert.deepEqual(evenSample([1, 2, 3], 5), [1, 2, 3]);
  const rows = Array.from({ length: 100 }, (_, i) => i * 2);
  const sample = evenSample(rows, 10);
  assert.equal(sample.length, 10);
  assert.deepEqual(sample, [0, 20, 40, 60, 80, 100, 120, 140, 160, 180]);
});

test('example search is the brute-force nearest to the centroid, the examples left out', () => {
  const n = 40;
  const d = 3;
  const data = new Float32Array(n * d);
  for (let i = 0; i < n * d; i++) data[i] = Math.sin(i * 12.9898) * 43758.5453 % 1;
  data.fill(NaN, 5 * d, 6 * d); // a row without a finite vector is never an answer
  const rows = [1, 2, 3, 5];
  const centroid = [0, 1, 2].map((j) => (data[1 * d + j] + data[2 * d + j] + data[3 * d + j]) / 3);
  const distance = (i) => Math.hypot(...[0, 1, 2].map((j) => data[i * d + j] - centroid[j]));
  const expected = [...Array(n).keys()].filter((i) => !rows.includes(i) && i !== 5).sort((a, b) => distance(a) - distance(b) || a - b).slice(0, 4);
  const found = exampleNeighbors(data, n, d, rows, 4, 'euclidean');
  assert.deepEqual(found.map((f) => f.index), expected);
  assert.ok(Math.abs(found[0].distance - distance(expected[0])) < 1e-5);
  assert.throws(() => exampleNeighbors(data, n, d, [5], 1), /none of the 1 rows has a finite vector/);
  assert.throws(() => exampleNeighbors(data, n, d, [40], 1), /row 40 out of range/);
});

test('a shared site ranks by how many example lists hold a point, then its mean distance', () => {
  const lists = [
    [{ index: 7, distance: 0.3 }, { index: 1, distance: 0.1 }, { index: 9, distance: 0.2 }],
    [{ index: 9, distance: 0.4 }, { index: 7, distance: 0.1 }, { index: 4, distance: 0.05 }],
    [{ index: 0, distance: 0.2 }, { index: 9, distance: 0.3 }],
  ];
  const found = commonNeighbors(lists, new Set([0, 1]), 3);
  assert.deepEqual(found.map((f) => f.index), [9, 7, 4]);
  assert.ok(Math.abs(found[0].distance - 0.3) < 1e-12);
  assert.ok(Math.abs(found[1].distance - 0.2) < 1e-12);
});

test('a marker is placed as the points were fitted: a row\'s own coordinates give its position', () => {
  const coords = new Float32Array([0, 10, 5, 4, 20, 5, 2, 30, 5, NaN, 0, 0]); // 4 rows x 3 columns
  const { positions, missing, frame } = fitPositions(coords, 4, 3, [1, 0]);
  const source = new ArrayPoints(positions, { missing, frame });
  for (const row of [0, 1, 2]) {
    const at = source.place(coords.subarray(row * 3, row * 3 + 3));
    assert.deepEqual(at.map((v) => Math.round(v * 1e6) / 1e6), [...positions.subarray(row * 3, row * 3 + 3)].map((v) => Math.round(v * 1e6) / 1e6));
  }
  assert.deepEqual(placeIn(frame, [1, 20, 99]), [0, (1 - 2) * frame.factor, 0]);
  assert.equal(placeIn(frame, [NaN, 20, 0]), null);
  assert.equal(new ArrayPoints(positions).place([0, 0, 0]), null);
});
