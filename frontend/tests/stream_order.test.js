import assert from 'node:assert/strict';
import { test } from 'node:test';

import { placedFirstOrder } from '../js/projection/stream_order.js';

/** A streaming sampled job's hidden rows: every point outside a random `placed`-subset. */
function missingOutside(n, placedRows) {
  const missing = new Uint8Array(n).fill(1);
  for (const i of placedRows) missing[i] = 0;
  return missing;
}

test('placed points come first, as a permutation of all points', () => {
  const n = 1000;
  const placedRows = Array.from({ length: 100 }, (_, k) => k * 7 + 3);
  const { order, placed } = placedFirstOrder(missingOutside(n, placedRows));
  assert.equal(placed, 100);
  assert.deepEqual([...order.slice(0, placed)].sort((a, b) => a - b), placedRows);
  assert.deepEqual([...order].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
});

test('the prefix of the placed points is an even sample of them, not their index order', () => {
  const n = 20000;
  const placedRows = Array.from({ length: 10000 }, (_, k) => 2 * k);
  const { order } = placedFirstOrder(missingOutside(n, placedRows));
  // The first 1000 drawn spread over the placed rows: about half lie in each half of them.
  const low = [...order.slice(0, 1000)].filter((i) => i < n / 2).length;
  assert.ok(low > 400 && low < 600, `${low} of 1000 in the lower half`);
});

test('a frame that placed no new point keeps the order; new points go after the old', () => {
  const n = 500;
  const first = placedFirstOrder(missingOutside(n, [1, 2, 3, 50]));
  const same = placedFirstOrder(missingOutside(n, [1, 2, 3, 50]), first.order);
  assert.equal(same.order, first.order);
  const more = placedFirstOrder(missingOutside(n, [1, 2, 3, 50, 400, 401]), first.order);
  assert.equal(more.placed, 6);
  assert.deepEqual([...more.order.slice(0, 4)], [...first.order.slice(0, 4)]);
  assert.deepEqual([...more.order.slice(4, 6)].sort((a, b) => a - b), [400, 401]);
});
