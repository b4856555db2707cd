// The two PointSources (points/point_source.js) answer alike: the same points as a whole
// array (ArrayPoints over the plot's buffers) and as resident tiles (TilePoints) give the same
// row for a pick, the same rows for a box and a lasso, and mark the same rows for the same
// highlight. Nothing here needs WebGL: picking and marks are computed on the CPU.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { defaultCamera, viewProjection, zoom } from '../js/camera.js';
import { fitPositions } from '../js/geometry.js';
import { ArrayPoints } from '../js/points/array_points.js';
import { PickingLayer } from '../js/renderer/picking.js';
import { FLAG_FOCUS, FLAG_HIDDEN, FLAG_NEIGHBOR, FLAG_SELECTED } from '../js/renderer/points.js';
import { screenOf } from '../js/tiles/answers.js';
import { tileFlags } from '../js/tiles/paint.js';
import { TilePoints } from '../js/tiles/tile_points.js';

const WIDTH = 400;
const HEIGHT = 300;

/** 500 points in projection units over [0, 10] x [0, 6], from a fixed generator. */
function points() {
  let seed = 7;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const n = 500;
  const data = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    data[i * 2] = next() * 10;
    data[i * 2 + 1] = next() * 6;
  }
  return { n, data };
}

/** A plot as ArrayPoints and its picking layer read it: the whole array in its buffers. */
function arrayPlot(data, n, matrix) {
  const { positions, missing } = fitPositions(data, n, 2, [0, 1], null);
  const plot = {
    n,
    positions,
    flags: new Uint8Array(n),
    fromPositions: null,
    order: null,
    threeD: false,
    canvas: { clientWidth: WIDTH, clientHeight: HEIGHT },
    matrix: () => matrix,
    currentPositions: () => positions,
    setFlags(flags) {
      this.flags = flags;
    },
  };
  plot.picking = new PickingLayer();
  plot.picking.setScene(plot);
  const source = new ArrayPoints(positions, { missing, coords: { data, cols: 2 } });
  source.plot = plot; // attached without GL buffers: answers and marks only
  return { plot, source };
}

/** The same points as three resident tiles (split in row order), fitted as the server's bounds say. */
function tilePlot(data, n, matrix) {
  let lo = [Infinity, Infinity];
  let hi = [-Infinity, -Infinity];
  for (let i = 0; i < n; i++) {
    lo = [Math.min(lo[0], data[i * 2]), Math.min(lo[1], data[i * 2 + 1])];
    hi = [Math.max(hi[0], data[i * 2]), Math.max(hi[1], data[i * 2 + 1])];
  }
  const manifest = { budget: 200, total: n, axes: [0, 1], box: { lo, hi }, bounds: { lo, hi }, tiles: [[0, 0, 0, n]] };
  const tiles = new TilePoints(null, 'job', manifest);
  const { mid, scale } = tiles.fit;
  for (const [key, from, to] of [['0/0/0', 0, 200], ['1/0/0', 200, 350], ['1/1/1', 350, n]]) {
    const count = to - from;
    const rows = Int32Array.from({ length: count }, (_, r) => from + r);
    const coords = data.slice(from * 2, to * 2);
    const positions = new Float32Array(count * 3);
    for (let r = 0; r < count; r++) {
      positions[r * 3] = (coords[r * 2] - mid[0]) * scale;
      positions[r * 3 + 1] = (coords[r * 2 + 1] - mid[1]) * scale;
    }
    tiles.resident.set(key, { key, z: 0, count, rows, positions, coords, codes: null, column: null, layer: { setFlags() {}, setColors() {} }, used: 0 });
    tiles.residentPoints += count;
  }
  return { plot: { matrix: () => matrix, canvas: { clientWidth: WIDTH, clientHeight: HEIGHT } }, source: tiles };
}

/** Row -> flags the tiles mark under the source's rules (what their layers would draw). */
function tileMarked(tiles) {
  const out = new Map();
  for (const tile of tiles.resident.values()) {
    const flags = tileFlags(tile, tiles.marks, tiles.axes);
    for (let r = 0; r < tile.count; r++) if (flags[r]) out.set(tile.rows[r], flags[r]);
  }
  return out;
}

function arrayMarked(flags) {
  const out = new Map();
  flags.forEach((f, i) => f && out.set(i, f));
  return out;
}

for (const [name, camera] of [['the whole view', defaultCamera()], ['zoomed in', zoom(defaultCamera(), false, 3, 0.3, 0.6, WIDTH / HEIGHT)]]) {
  test(`a pick and a region answer the same rows from the whole array and from tiles (${name})`, () => {
    const { n, data } = points();
    const matrix = viewProjection(camera, false, WIDTH / HEIGHT);
    const array = arrayPlot(data, n, matrix);
    const tiled = tilePlot(data, n, matrix);
    // Every point's screen place, from the array's own projection: pick at each of some of them.
    const screen = array.plot.picking.screenPositions();
    let picked = 0;
    for (let i = 0; i < n; i += 7) {
      const [x, y] = [screen[i * 2], screen[i * 2 + 1]];
      if (!(x >= 0 && x <= WIDTH && y >= 0 && y <= HEIGHT)) continue;
      const a = array.source.pick(array.plot, x + 1.5, y - 1, 6);
      assert.equal(tiled.source.pick(tiled.plot, x + 1.5, y - 1, 6), a, `pick near row ${i}`);
      assert.notEqual(a, -1);
      picked++;
    }
    assert.ok(picked > 10);
    assert.equal(array.source.pick(array.plot, -50, -50, 6), tiled.source.pick(tiled.plot, -50, -50, 6));
    const box = { kind: 'box', points: [[60, 40], [250, 220]] };
    const lasso = { kind: 'lasso', points: [[30, 30], [330, 60], [200, 270], [60, 200]] };
    for (const region of [box, lasso]) {
      const rows = array.source.region(array.plot, region);
      assert.ok(rows.length > 20, `${region.kind}: ${rows.length} rows`);
      assert.deepEqual(tiled.source.region(tiled.plot, region), rows, region.kind);
    }
  });
}

test('the same highlight marks the same rows on the whole array and on tiles', () => {
  const { n, data } = points();
  const matrix = viewProjection(defaultCamera(), false, WIDTH / HEIGHT);
  const array = arrayPlot(data, n, matrix);
  const tiled = tilePlot(data, n, matrix);
  const neighbors = new Map([[11, FLAG_NEIGHBOR], [12, FLAG_NEIGHBOR]]);
  const cases = [
    { selected: [3, 250, 499], rows: new Map([[3, FLAG_FOCUS | FLAG_SELECTED], ...neighbors]), region: null, match: null, keep: null },
    { selected: [5, 6], rows: new Map(), region: null, match: null, keep: new Set([5, 6, 11, 400]) },
    // A region the tiles answered stands for the selection: both mark every point inside it.
    { selected: [], rows: neighbors, region: { polygon: [[1, 1], [6, 1.5], [5, 5], [1.5, 4]], axes: [0, 1] }, match: null, keep: null },
  ];
  for (const marks of cases) {
    array.source.setMarks(marks);
    tiled.source.setMarks(marks);
    const expected = arrayMarked(array.plot.flags);
    assert.ok(expected.size > 0);
    assert.deepEqual(tileMarked(tiled.source), expected);
  }
  // Hidden rows (isolated) are the same, and a box over the view then leaves them out alike.
  array.source.setMarks(cases[1]);
  tiled.source.setMarks(cases[1]);
  const hidden = [...arrayMarked(array.plot.flags)].filter(([, f]) => f & FLAG_HIDDEN).length;
  assert.equal(hidden, n - 4);
  assert.ok(screenOf(tiled.source.resident.get('0/0/0'), matrix, WIDTH, HEIGHT).length === 400);
});
