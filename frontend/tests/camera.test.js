import assert from 'node:assert/strict';
import { test } from 'node:test';

import { defaultCamera, fromTensorBoardCamera, orbit, pan, shareInView, toScreen, toTensorBoardCamera, viewProjection, zoom } from '../js/camera.js';

const close = (a, b, eps = 1e-4) => assert.ok(Math.abs(a - b) < eps, `${a} != ${b}`);

test('the 2D camera shows the unit square centred', () => {
  const m = viewProjection(defaultCamera(), false, 1);
  const [x, y] = toScreen(m, 0, 0, 0, 200, 100);
  close(x, 100);
  close(y, 50);
  const [, top] = toScreen(m, 0, 1, 0, 200, 100);
  assert.ok(top > 0 && top < 50);
});

test('zooming in 2D keeps the point under the cursor fixed', () => {
  const cam = defaultCamera();
  const aspect = 2;
  const before = viewProjection(cam, false, aspect);
  const world = [0.3, 0.2, 0];
  const s0 = toScreen(before, ...world, 400, 200);
  const ndc = [(s0[0] / 400) * 2 - 1, 1 - (s0[1] / 200) * 2];
  const z = zoom(cam, false, 2.5, ndc[0], ndc[1], aspect);
  const s1 = toScreen(viewProjection(z, false, aspect), ...world, 400, 200);
  close(s1[0], s0[0], 1e-3);
  close(s1[1], s0[1], 1e-3);
  assert.equal(z.zoom, 2.5);
});

test('panning in 2D moves the scene with the mouse', () => {
  const cam = defaultCamera();
  const moved = pan(cam, false, 50, 0, 200, 1);
  const a = toScreen(viewProjection(cam, false, 1), 0, 0, 0, 200, 200);
  const b = toScreen(viewProjection(moved, false, 1), 0, 0, 0, 200, 200);
  close(b[0] - a[0], 50, 1e-3);
});

test('the 3D camera looks at its target and orbiting keeps it centred', () => {
  const cam = orbit(defaultCamera(), 40, -30);
  const m = viewProjection(cam, true, 1.5);
  const [x, y] = toScreen(m, 0, 0, 0, 300, 200);
  close(x, 150);
  close(y, 100);
  assert.ok(cam.phi > 0 && cam.phi < Math.PI);
});

test('points behind the 3D camera have no screen position', () => {
  const cam = { ...defaultCamera(), theta: 0, phi: Math.PI / 2, distance: 2 };
  assert.equal(toScreen(viewProjection(cam, true, 1), 0, 0, 5, 100, 100), null);
});

test('3D zoom dollies and 3D pan moves the target', () => {
  const cam = defaultCamera();
  assert.ok(zoom(cam, true, 2).distance < cam.distance);
  const p = pan(cam, true, 10, 0, 100, 1);
  assert.notDeepEqual(p.target, cam.target);
});

test('TensorBoard camera definitions round-trip', () => {
  const cam = { target: [0.1, 0.2, 0.3], theta: 0.7, phi: 1.3, distance: 4, zoom: 1 };
  const back = fromTensorBoardCamera(toTensorBoardCamera(cam, true));
  close(back.theta, cam.theta);
  close(back.phi, cam.phi);
  close(back.distance, cam.distance);
  const flat = fromTensorBoardCamera(toTensorBoardCamera({ ...cam, zoom: 3 }, false));
  assert.equal(flat.zoom, 3);
  assert.deepEqual(flat.target.slice(0, 2), [0.1, 0.2]);
  assert.equal(fromTensorBoardCamera({ position: [1] }), null);
});

test("TensorBoard's start cameras show the whole cloud as ours do", () => {
  // vz_projector's defaults: 3D eye at (0.45, 0.9, 1.6) through a 70-degree lens; 2D zoom 1.
  const cam3d = fromTensorBoardCamera({ orthographic: false, position: [0.45, 0.9, 1.6], target: [0, 0, 0], zoom: 1 });
  assert.ok(cam3d.distance > 0.85 * defaultCamera().distance && cam3d.distance < 1.15 * defaultCamera().distance);
  const m = viewProjection(cam3d, true, 1.5);
  for (const corner of [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]) {
    const [x, y] = toScreen(m, ...corner, 300, 200);
    assert.ok(x > 0 && x < 300 && y > 0 && y < 200, `corner ${corner} off screen`);
  }
  // A TensorBoard zoom of 2 narrows the view: half the distance.
  const zoomed = fromTensorBoardCamera({ orthographic: false, position: [0.45, 0.9, 1.6], target: [0, 0, 0], zoom: 2 });
  close(zoomed.distance, cam3d.distance / 2);
  close(fromTensorBoardCamera({ orthographic: true, position: [0, 0, 4], target: [0, 0, 0], zoom: 1 }).zoom, 1.15 / 1.2);
});

test('the share of rows a view shows: those inside the canvas, over an even sample', () => {
  const positions = Float32Array.from([0, 0, 0, 0.1, 0.1, 0, 50, 50, 0, -50, 0, 0]);
  const m = viewProjection(defaultCamera(), false, 1);
  assert.equal(shareInView(m, positions, [0, 1]), 1);
  assert.equal(shareInView(m, positions, [0, 1, 2, 3]), 0.5);
  assert.equal(shareInView(m, positions, []), null);
  assert.equal(shareInView(m, positions, [0, 2], 1), 1); // a sample of one: the first row
});
