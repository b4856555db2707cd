import assert from 'node:assert/strict';
import { test } from 'node:test';

import { clampToLimit, limitFor, withinLimit } from '../js/limits.js';

// As GET /api/runs sends them for 150 points (projector_core.projection.methods.data_limits).
const IRIS = {
  info: {
    limits: {
      projections: { tsne: { points: { minimum: 4, maximum: null }, perplexity: { minimum: 2, maximum: 149 / 3 } }, pca: {} },
      neighbors: { k: { minimum: 1, maximum: 149 } },
    },
  },
};

test('limits are read from the server, per method or for neighbours', () => {
  assert.equal(limitFor(IRIS, 'tsne', 'perplexity').maximum, 149 / 3);
  assert.equal(limitFor(IRIS, 'neighbors', 'k').maximum, 149);
  assert.equal(limitFor(IRIS, 'pca', 'spherize'), null);
  assert.equal(limitFor({ info: null }, 'tsne', 'perplexity'), null); // local data: none
});

test('values are clamped into the range, the minimum winning when nothing fits', () => {
  const perplexity = limitFor(IRIS, 'tsne', 'perplexity');
  assert.equal(clampToLimit(30, perplexity), 30);
  assert.equal(clampToLimit(80, perplexity), 149 / 3);
  assert.equal(clampToLimit(1, perplexity), 2);
  assert.equal(clampToLimit(5, { minimum: 2, maximum: 1 }), 2);
  assert.equal(clampToLimit(500, null), 500);
  assert.equal(withinLimit(150, limitFor(IRIS, 'neighbors', 'k')), false);
  assert.equal(withinLimit(149, limitFor(IRIS, 'neighbors', 'k')), true);
  assert.equal(withinLimit(1e9, null), true);
});
