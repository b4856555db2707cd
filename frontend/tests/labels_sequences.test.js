import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fromTensorBoardState, toTensorBoardState } from '../js/bookmarks.js';
import { defaultCamera, viewProjection } from '../js/camera.js';
import { labelText, selectLabelPoints } from '../js/renderer/labels3d.js';
import { FLAG_HIDDEN } from '../js/renderer/points.js';
import { segmentsBefore } from '../js/renderer/polylines.js';
import { parseSequence, sequenceColumn, sequenceWarning } from '../js/sequences.js';
import { defaultState, sanitizeState } from '../js/state.js';

test('the sequence column is __next__, else __seq_next__', () => {
  assert.equal(sequenceColumn(['label', '__seq_next__', '__next__']), '__next__');
  assert.equal(sequenceColumn(['label', '__seq_next__']), '__seq_next__');
  assert.equal(sequenceColumn(['label']), null);
});

test('a sequence column becomes segment pairs; empty cells end a chain', () => {
  const { pairs, bad, firstBad } = parseSequence(['1', '2', '', ' 4 ', ''], 5);
  assert.deepEqual(Array.from(pairs), [0, 1, 1, 2, 3, 4]);
  assert.equal(bad, 0);
  assert.equal(firstBad, null);
});

test('bad sequence cells are skipped and counted, the first one named', () => {
  const cells = ['1', 'abc', '2.5', '-1', '99', '5', '0x2', '1e1', '', '3'];
  const parsed = parseSequence(cells, 10);
  assert.deepEqual(Array.from(parsed.pairs), [0, 1, 9, 3]);
  // abc, 2.5, -1, 99 (out of range), 5 at row 5 (itself), 0x2, 1e1
  assert.equal(parsed.bad, 7);
  assert.deepEqual(parsed.firstBad, { row: 1, value: 'abc' });
  const message = sequenceWarning('__next__', parsed);
  assert.match(message, /__next__: 7 cells skipped/);
  assert.match(message, /point 1: "abc"/);
  assert.equal(sequenceWarning('__next__', parseSequence(['1', ''], 2)), '');
});

test('a short column or missing cells never throw', () => {
  const parsed = parseSequence(['1', null, undefined], 5);
  assert.deepEqual(Array.from(parsed.pairs), [0, 1]);
  assert.equal(parsed.bad, 0);
});

function grid(n) {
  const to = new Float32Array(n * 3);
  for (let i = 0; i < n; i++) {
    to[i * 3] = ((i % 100) / 100) * 1.6 - 0.8;
    to[i * 3 + 1] = (Math.floor(i / 100) / (n / 100)) * 1.6 - 0.8;
  }
  return to;
}

test('label selection keeps at most the budget, first in the draw order', () => {
  const n = 10000;
  const to = grid(n);
  const matrix = viewProjection(defaultCamera(), false, 1);
  const order = Int32Array.from({ length: n }, (_, k) => n - 1 - k);
  const picked = selectLabelPoints({ to, n, order, matrix, width: 500, height: 500, budget: 300 });
  assert.equal(picked.length, 300);
  const indices = new Set(picked.map((p) => p.index));
  for (let k = 0; k < 300; k++) assert.ok(indices.has(n - 1 - k), 'the first ranks of the order are kept');
  const all = selectLabelPoints({ to, n, matrix, width: 500, height: 500, budget: 1e9 });
  assert.equal(all.length, n, 'every point of the view when the budget allows');
  for (const p of all) assert.ok(p.x >= 0 && p.x <= 500 && p.y >= 0 && p.y <= 500);
});

test('label selection skips hidden and off-screen points and sorts far to near', () => {
  const to = Float32Array.from([0, 0, 0, 0.5, 0, 0.5, 50, 50, 0, -0.5, 0, -0.5]);
  const flags = Uint8Array.from([0, 0, 0, FLAG_HIDDEN]);
  const matrix = viewProjection(defaultCamera(), true, 1);
  const picked = selectLabelPoints({ to, n: 4, flags, matrix, width: 400, height: 400, budget: 10 });
  assert.deepEqual(picked.map((p) => p.index).sort(), [0, 1]);
  assert.ok(picked[0].depth >= picked[1].depth, 'farthest first');
});

test('labels are one line of at most 40 characters', () => {
  assert.equal(labelText('a\nb\tc'), 'a b c');
  assert.equal(labelText('x'.repeat(100)).length, 40);
  assert.equal(labelText(null), '');
  assert.equal(labelText('<b>x</b>'), '<b>x</b>', 'text, never markup');
});

test('3D labels and sequences are part of the state, validated', () => {
  assert.equal(defaultState().labels3d, false);
  assert.equal(defaultState().sequences, true);
  const s = sanitizeState({ labels3d: true, sequences: false });
  assert.equal(s.labels3d, true);
  assert.equal(s.sequences, false);
  const bad = sanitizeState({ labels3d: 'yes', sequences: 1 });
  assert.equal(bad.labels3d, false);
  assert.equal(bad.sequences, true);
});

test('a bookmark keeps 3D labels and sequences; a TensorBoard one (no such field) gets the defaults', () => {
  const state = { ...defaultState(), labels3d: true, sequences: false };
  const tb = toTensorBoardState(state, { label: 'b', n: 5, d: 3 });
  const back = fromTensorBoardState(JSON.parse(JSON.stringify(tb)), { n: 5, d: 3 }).state;
  assert.equal(back.labels3d, true);
  assert.equal(back.sequences, false);
  const { projector, ...tensorBoardOnly } = tb;
  assert.ok(projector);
  const fromTb = fromTensorBoardState(tensorBoardOnly, { n: 5, d: 3 }).state;
  assert.equal(fromTb.labels3d, false);
  assert.equal(fromTb.sequences, true);
});

test('a moving frame draws the segments that start in its sample of the draw order', () => {
  const ranks = Int32Array.from([0, 2, 2, 5, 9]);
  assert.equal(segmentsBefore(ranks, 0), 0);
  assert.equal(segmentsBefore(ranks, 3), 3);
  assert.equal(segmentsBefore(ranks, 6), 4);
  assert.equal(segmentsBefore(ranks, 100), 5);
  assert.equal(segmentsBefore(new Int32Array(0), 10), 0);
});

test('without a draw order the labelled points are spread over the whole set', () => {
  const n = 10000;
  const to = grid(n);
  const matrix = viewProjection(defaultCamera(), false, 1);
  const picked = selectLabelPoints({ to, n, matrix, width: 500, height: 500, budget: 100 });
  assert.equal(picked.length, 100);
  const indices = picked.map((p) => p.index);
  assert.equal(new Set(indices).size, 100);
  assert.ok(Math.max(...indices) > 9000 && Math.min(...indices) < 1000, 'from the whole range');
  const all = selectLabelPoints({ to, n: 7, matrix, width: 500, height: 500, budget: 3 });
  assert.equal(all.length, 3);
  const every = selectLabelPoints({ to, n: 7, matrix, width: 500, height: 500, budget: 1e9 });
  assert.deepEqual(every.map((p) => p.index).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6]);
});

test('the stride reaches every point, the last pass included', () => {
  const matrix = viewProjection(defaultCamera(), false, 1);
  for (const [n, budget] of [[7, 3], [10, 3], [101, 10], [1000, 7], [999, 2]]) {
    const step = Math.floor(n / budget);
    const to = new Float32Array(n * 3).fill(100); // off screen ...
    const visible = [];
    for (let i = 0; i < n; i++) {
      if (i % step === step - 1) {
        to.fill(0, i * 3, i * 3 + 3); // ... but for the points the last pass visits
        visible.push(i);
      }
    }
    const seen = selectLabelPoints({ to, n, matrix, width: 10, height: 10, budget: n }).map((p) => p.index);
    assert.equal(seen.length, visible.length);
    const few = selectLabelPoints({ to, n, matrix, width: 10, height: 10, budget });
    assert.equal(few.length, Math.min(budget, visible.length), `n ${n} budget ${budget}`);
    assert.ok(few.every((p) => p.index % step === step - 1));
  }
});
