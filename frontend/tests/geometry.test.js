import assert from 'node:assert/strict';
import { test } from 'node:test';

import { defaultCamera, viewProjection } from '../js/camera.js';
import { fitPositions, layoutLabels, pointInPolygon, pointsInPolygon, pointsInRect, projectPoints } from '../js/geometry.js';

test('positions are centred and scaled into the unit cube, NaN rows flagged', () => {
  const coords = Float32Array.from([10, 0, 99, 20, 4, 99, NaN, 1, 99]);
  const { positions, missing } = fitPositions(coords, 3, 3, [0, 1]);
  assert.deepEqual(Array.from(positions.slice(0, 6)), [-1, -0.4, 0, 1, 0.4, 0].map(Math.fround));
  assert.deepEqual(Array.from(missing), [0, 0, 1]);
});

test('box and lasso pick the points inside them', () => {
  const screen = Float32Array.from([10, 10, 50, 50, 90, 10, NaN, NaN]);
  assert.deepEqual(pointsInRect(screen, [60, 0], [0, 60]), [0, 1]);
  assert.deepEqual(pointsInRect(screen, [0, 0], [100, 100], (i) => i === 1), [0, 2]);
  const triangle = [[0, 0], [100, 0], [50, 60]];
  assert.equal(pointInPolygon(50, 10, triangle), true);
  assert.equal(pointInPolygon(5, 50, triangle), false);
  assert.deepEqual(pointsInPolygon(screen, triangle), [0, 1, 2]);
  assert.deepEqual(pointsInPolygon(screen, [[0, 0], [20, 0]]), []);
});

test('projected points land where the camera says', () => {
  const m = viewProjection(defaultCamera(), false, 1);
  const s = projectPoints(Float32Array.from([0, 0, 0]), m, 100, 100);
  assert.deepEqual(Array.from(s), [50, 50]);
});

test('labels that would overlap a more important one are dropped', () => {
  const measure = (t) => t.length * 7;
  const kept = layoutLabels(
    [
      { x: 10, y: 10, text: 'second', priority: 2 },
      { x: 12, y: 12, text: 'first', priority: 0 },
      { x: 10, y: 60, text: 'far away', priority: 3 },
      { x: 500, y: 10, text: 'off screen', priority: 1 },
    ],
    measure,
    { width: 200, height: 100 },
  );
  assert.deepEqual(kept.map((k) => k.text), ['first', 'far away']);
});

test('an isolated subset alone decides the fit', () => {
  const coords = Float32Array.from([0, 0, 10, 10, 100, 100]);
  const { positions } = fitPositions(coords, 3, 2, [0, 1], new Set([0, 1]));
  assert.deepEqual(Array.from(positions.slice(0, 6)), [-1, -1, 0, 1, 1, 0]);
});
