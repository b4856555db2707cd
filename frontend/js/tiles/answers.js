// The answers of a projection shown from tiles (for TilePoints, tile_points.js): hover, click and
// box/lasso over the resident points when they are every point, else from the server's
// `GET /api/jobs/ID/pick` and `POST /api/jobs/ID/select` (docs/ARCHITECTURE.md "Tiles"), so
// they are exact over all points however few of them the tab holds.

import { pointInPolygon } from '../geometry.js';

/** Rows a server region selection answers at most (the API's maximum). */
const SELECT_LIMIT = 1000000;

/** @typedef {import('./tile_points.js').TilePoints} TilePoints */

/**
 * The row nearest to CSS pixel (x, y) within `radius` pixels, or -1: over the resident
 * points when they are all of them, else from the server (a Promise).
 * @param {TilePoints} tiles
 * @param {ArrayLike<number>} matrix  the view's
 * @param {number} width  CSS pixels
 * @param {number} height
 * @param {number} x
 * @param {number} y
 * @param {number} radius
 * @returns {number | Promise<number>}
 */
export function pickTiles(tiles, matrix, width, height, x, y, radius) {
  if (tiles.everyResident) return pickResident(tiles, matrix, width, height, x, y, radius);
  const [px, py] = toData(tiles, matrix, width, height, x, y);
  const [qx] = toData(tiles, matrix, width, height, x + radius, y);
  const params = { x: px, y: py, radius: Math.abs(qx - px), axes: tiles.axes.join(',') };
  return tiles.api
    ._json(`jobs/${encodeURIComponent(tiles.jobId)}/pick`, { params })
    .then((answer) => answer.row ?? -1);
}

function pickResident(tiles, matrix, width, height, x, y, radius) {
  let best = -1;
  let bestD = radius * radius;
  for (const tile of tiles.resident.values()) {
    const screen = screenOf(tile, matrix, width, height);
    for (let r = 0; r < tile.count; r++) {
      const dx = screen[r * 2] - x;
      const dy = screen[r * 2 + 1] - y;
      const d = dx * dx + dy * dy;
      if (d <= bestD && (d < bestD || tile.rows[r] < best)) {
        bestD = d;
        best = tile.rows[r];
      }
    }
  }
  return best;
}

/**
 * Rows inside a region ({ kind: 'box' | 'lasso', points: CSS pixels }), in row order:
 * over the resident points when they are all of them, else from the server (a Promise of
 * its first SELECT_LIMIT rows). The region is kept, in projection units, as `lastRegion`.
 * @param {TilePoints} tiles
 * @param {ArrayLike<number>} matrix
 * @param {number} width
 * @param {number} height
 * @param {import('../points/point_source.js').Region} region
 * @returns {number[] | Promise<number[]>}
 */
export function regionOfTiles(tiles, matrix, width, height, region) {
  const polygon = region.kind === 'box' ? boxCorners(region.points[0], region.points[region.points.length - 1]) : region.points;
  if (polygon.length < 3) return [];
  const inData = polygon.map(([x, y]) => toData(tiles, matrix, width, height, x, y));
  const kept = (rows, count) => {
    tiles.lastRegion = { rows, polygon: inData, axes: tiles.axes.slice(), count };
    return rows;
  };
  if (tiles.everyResident) {
    const rows = regionResident(tiles, matrix, width, height, polygon, region.kind === 'box');
    return kept(rows, rows.length);
  }
  const body = { polygon: inData, axes: tiles.axes, limit: SELECT_LIMIT };
  return tiles.api._json(`jobs/${encodeURIComponent(tiles.jobId)}/select`, { method: 'POST', body }).then((answer) => kept(answer.rows, answer.count));
}

function regionResident(tiles, matrix, width, height, polygon, box) {
  const xs = polygon.map((p) => p[0]);
  const ys = polygon.map((p) => p[1]);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const out = [];
  for (const tile of tiles.resident.values()) {
    const screen = screenOf(tile, matrix, width, height);
    for (let r = 0; r < tile.count; r++) {
      const sx = screen[r * 2];
      const sy = screen[r * 2 + 1];
      if (sx < minX || sx > maxX || sy < minY || sy > maxY) continue;
      if (box || pointInPolygon(sx, sy, polygon)) out.push(tile.rows[r]);
    }
  }
  return out.sort((a, b) => a - b);
}

/**
 * A tile's points in CSS pixels (x, y pairs; non-finite rows far off screen), as
 * camera.toScreen projects them; kept for the last view (hover asks again and again).
 * @param {import('./tile_points.js').Tile} tile
 * @param {ArrayLike<number>} m
 * @param {number} width
 * @param {number} height
 */
export function screenOf(tile, m, width, height) {
  const key = `${Array.from(m).join(',')}:${width}:${height}`;
  if (tile.screenKey === key) return tile.screen;
  const out = new Float32Array(tile.count * 2).fill(-1e9); // float32 as renderer/picking.js
  const p = tile.positions;
  for (let r = 0; r < tile.count; r++) {
    const x = p[r * 3];
    const y = p[r * 3 + 1];
    const w = m[3] * x + m[7] * y + m[15];
    if (!(w > 0) || !Number.isFinite(x + y)) continue;
    out[r * 2] = ((m[0] * x + m[4] * y + m[12]) / w + 1) * 0.5 * width;
    out[r * 2 + 1] = (1 - (m[1] * x + m[5] * y + m[13]) / w) * 0.5 * height;
  }
  tile.screenKey = key;
  tile.screen = out;
  return out;
}

/**
 * CSS pixel (x, y) in the projection's own units (the 2-D view is affine).
 * @param {TilePoints} tiles
 * @param {ArrayLike<number>} m
 * @param {number} width
 * @param {number} height
 * @param {number} x
 * @param {number} y
 */
export function toData(tiles, m, width, height, x, y) {
  const cx = (x / width) * 2 - 1;
  const cy = 1 - (y / height) * 2;
  const det = m[0] * m[5] - m[4] * m[1];
  const px = ((cx - m[12]) * m[5] - (cy - m[13]) * m[4]) / det;
  const py = ((cy - m[13]) * m[0] - (cx - m[12]) * m[1]) / det;
  const { mid, scale } = tiles.fit;
  return [px / scale + mid[0], py / scale + mid[1]];
}

/**
 * @param {number[]} corner0
 * @param {number[]} corner1
 * @returns {number[][]}
 */
function boxCorners([x0, y0], [x1, y1]) {
  return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];
}
