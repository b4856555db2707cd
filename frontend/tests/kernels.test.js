import assert from 'node:assert/strict';
import { test } from 'node:test';

import { customProjection, matcher, nearestNeighbors, pca, search, symmetricEigen } from '../js/kernels.js';

const close = (a, b, eps = 1e-3) => assert.ok(Math.abs(a - b) < eps, `${a} != ${b}`);

test('Jacobi finds the eigenvalues of a symmetric matrix in descending order', () => {
  const { values, vectors } = symmetricEigen([2, 1, 1, 2], 2);
  close(values[0], 3);
  close(values[1], 1);
  close(Math.abs(vectors[0][0]), Math.SQRT1_2);
});

test('PCA finds the direction of largest variance and its share', () => {
  const n = 500;
  const d = 3;
  const data = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    const t = (i / n - 0.5) * 10;
    data[i * 3] = t;
    data[i * 3 + 1] = t;
    data[i * 3 + 2] = Math.sin(i) * 0.1;
  }
  data[3 * 7] = NaN;
  const r = pca(data, n, d, { k: 3 });
  assert.equal(r.k, 3);
  assert.ok(r.varianceRatio[0] > 0.99, `${r.varianceRatio}`);
  close(r.varianceRatio.reduce((a, b) => a + b, 0), 1, 1e-2);
  assert.ok(Number.isNaN(r.coords[7 * 3]));
  // the first component spreads the points along the diagonal: |x| * sqrt(2)
  close(Math.abs(r.coords[0]) / Math.abs(data[0] - 0), Math.SQRT2, 0.05);
});

test('search is case-insensitive substring or regex; a bad regex throws', () => {
  const values = ['Apple', 'banana', 'APRICOT', ''];
  assert.deepEqual(search(values, 'ap', false), [0, 2]);
  assert.deepEqual(search(values, '^a.*e$', true), [0]);
  assert.deepEqual(search(values, '', false), []);
  assert.throws(() => matcher('(', true), SyntaxError);
});

test('nearest neighbours exclude the point itself and NaN rows', () => {
  const data = Float32Array.from([0, 0, 1, 0, 5, 0, 2, 0, NaN, 0]);
  const nb = nearestNeighbors(data, 5, 2, 0, 3, 'euclidean');
  assert.deepEqual(nb.map((x) => x.index), [1, 3, 2]);
  close(nb[0].distance, 1);
  const cos = nearestNeighbors(Float32Array.from([1, 0, 2, 0, 0, 1, 1, 1]), 4, 2, 0, 2, 'cosine');
  assert.deepEqual(cos.map((x) => x.index), [1, 3]);
  close(cos[0].distance, 0);
});

test('the custom projection spans left->right and down->up centroids', () => {
  const data = Float32Array.from([0, 0, 10, 0, 0, 10, 5, 5]);
  const values = ['left', 'right', 'up', 'mid'];
  const sides = { left: '^left$', right: 'right', up: 'up', down: '^l', regex: true };
  const { coords, matches } = customProjection(data, 4, 2, values, sides);
  assert.deepEqual(matches, { left: 1, right: 1, up: 1, down: 1 });
  assert.ok(coords[2] > coords[0]);
  assert.ok(coords[5] > coords[1]);
  // A side matching nothing takes the seeded random centroid the server draws (custom.json).
  const none = customProjection(data, 4, 2, values, { ...sides, up: 'zzz' });
  assert.equal(none.matches.up, 0);
  assert.ok(Number.isFinite(none.coords[5]) && none.coords[5] !== 0);
  assert.deepEqual(customProjection(data, 4, 2, values, { ...sides, up: 'zzz' }).coords, none.coords);
  assert.notDeepEqual(customProjection(data, 4, 2, values, { ...sides, up: 'zzz', seed: 3 }).coords, none.coords);
});
