import assert from 'node:assert/strict';
import { test } from 'node:test';

import { defaultCamera, viewProjection, zoom } from '../js/camera.js';
import { ARRAY } from '../js/points/array_delivery.js';
import { deliveryFor } from '../js/points/point_source.js';
import { screenOf, toData } from '../js/tiles/answers.js';
import { TILES } from '../js/tiles/delivery.js';
import { DISPLAY_POINTS, TilePoints } from '../js/tiles/tile_points.js';

/** Whether a projection of `method` comes as tiles. */
const showsTiles = (dataset, method, threeD) => {
  const delivery = deliveryFor(dataset, method, threeD);
  assert.ok(delivery === TILES || delivery === ARRAY);
  return delivery === TILES;
};

/** What TilePoints reads of the plot showing it: the view and the canvas's CSS size. */
const plotOf = (m, width, height) => ({ matrix: () => m, canvas: { clientWidth: width, clientHeight: height } });

/** A full quadtree index over the box [0, 8]^2: every tile of levels 0..depth holds `count`. */
function manifest(depth, count) {
  const tiles = [];
  for (let z = 0; z <= depth; z++) for (let x = 0; x < 2 ** z; x++) for (let y = 0; y < 2 ** z; y++) tiles.push([z, x, y, count]);
  const box = { lo: [0, 0], hi: [8, 8] };
  return { budget: count, total: tiles.length * count, axes: [0, 1], box, bounds: box, tiles };
}

/** A resident tile of points (projection units) without GPU buffers (answers need none). */
function resident(tiled, key, rows, coords) {
  const { mid, scale } = tiled.fit;
  const positions = new Float32Array(rows.length * 3);
  rows.forEach((_, r) => {
    positions[r * 3] = (coords[r][0] - mid[0]) * scale;
    positions[r * 3 + 1] = (coords[r][1] - mid[1]) * scale;
  });
  tiled.resident.set(key, { key, count: rows.length, rows: Int32Array.from(rows), positions });
  tiled.residentPoints += rows.length;
}

test('tiles show large 2-D views of PCA and custom from the server, the rest comes whole', () => {
  globalThis.location = { search: '' };
  const big = { local: false, n: 3000000, info: { tiles: true } };
  assert.equal(showsTiles(big, 'pca', false), true);
  assert.equal(showsTiles(big, 'pca', true), false); // 3-D: the quadtree is over two axes
  assert.equal(showsTiles(big, 'tsne', false), false);
  assert.equal(showsTiles({ ...big, local: true }, 'pca', false), false);
  assert.equal(showsTiles({ local: false, n: 1000, info: { tiles: false } }, 'pca', false), false);
  globalThis.location = { search: '?tiles=always' };
  assert.equal(showsTiles({ local: false, n: 1000 }, 'custom', false), true);
  globalThis.location = { search: '' };
});

test('t-SNE and UMAP come as tiles where the server says their layout is too large to come whole', () => {
  globalThis.location = { search: '' };
  const huge = { local: false, n: 40000000, info: { tiles: true, tsne_umap_tiles: true } };
  assert.equal(showsTiles(huge, 'tsne', false), true);
  assert.equal(showsTiles(huge, 'umap', false), true);
  assert.equal(showsTiles(huge, 'umap', true), false); // 3-D: the quadtree is over two axes
  assert.equal(showsTiles({ ...huge, info: { tiles: true, tsne_umap_tiles: false } }, 'tsne', false), false);
  assert.equal(showsTiles(huge, 'compare', false), false); // not a projection the tiles know
  globalThis.location = { search: '?tiles=always' };
  assert.equal(showsTiles({ local: false, n: 1000 }, 'umap', false), true); // small tests force it
  globalThis.location = { search: '?tiles=never' };
  assert.equal(showsTiles(huge, 'tsne', false), false);
  globalThis.location = { search: '' };
});

test('the view takes whole levels, coarse first, as deep as fit the display budget', () => {
  const count = DISPLAY_POINTS / 16;
  const tiled = new TilePoints(null, 'job', manifest(4, count));
  const whole = viewProjection(defaultCamera(), false, 1);
  tiled.view(whole);
  // 1 + 4 tiles fit, 16 more do not: levels 0 and 1.
  assert.deepEqual(tiled.wanted, ['0/0/0', '1/0/0', '1/0/1', '1/1/0', '1/1/1']);
  // Zoomed in on one corner: fewer cells meet the view, so deeper levels fit.
  const closer = zoom(defaultCamera(), false, 16, 0.9, 0.9, 1);
  tiled.view(viewProjection(closer, false, 1));
  const levels = tiled.wanted.map((k) => Number(k.split('/')[0]));
  assert.ok(Math.max(...levels) >= 3, `levels ${levels}`);
  assert.ok(tiled.wanted.length < 16);
});

test('hover and lasso over every resident point answer exactly in projection units', () => {
  const tiled = new TilePoints(null, 'job', { ...manifest(0, 3), total: 5 });
  resident(tiled, '0/0/0', [4, 0, 2], [[1, 1], [4, 4], [7, 2]]);
  resident(tiled, '1/0/0', [1, 3], [[4.1, 4.1], [2, 6]]);
  assert.equal(tiled.everyResident, true);
  const m = viewProjection(defaultCamera(), false, 1);
  const width = 400;
  const height = 400;
  const plot = plotOf(m, width, height);
  const screen = (x, y) => screenOf({ count: 1, positions: new Float32Array([(x - 4) / 4, (y - 4) / 4, 0]) }, m, width, height);
  const [sx, sy] = screen(4.02, 4.02);
  assert.equal(tiled.pick(plot, sx, sy, 50), 0); // (4, 4) is nearer than (4.1, 4.1)
  assert.equal(tiled.pick(plot, 0, 0, 1), -1);
  // Screen back to projection units.
  const [px, py] = toData(tiled, m, width, height, sx, sy);
  assert.ok(Math.abs(px - 4.02) < 1e-4 && Math.abs(py - 4.02) < 1e-4);
  const corners = [[0, 0], [5, 0], [5, 5], [0, 5]].map(([x, y]) => Array.from(screen(x, y)));
  assert.deepEqual(tiled.region(plot, { kind: 'lasso', points: corners }), [0, 1, 4]);
  assert.deepEqual(tiled.region(plot, { kind: 'box', points: [corners[0], corners[2]] }), [0, 1, 4]);
});
