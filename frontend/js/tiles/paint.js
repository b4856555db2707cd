// Each resident tile's colours and flags, from rules instead of per-point arrays of the whole
// set: a colour word per dictionary code of the column the tiles carry (coloring.js),
// and the page's flags as a few rows (focus, neighbours, clicked points), a region (a box or
// lasso selection, in the projection's units) and a set of codes (a search's matching
// values). What the tab holds for them grows with the resident tiles, never with N.

import { pointInPolygon } from '../geometry.js';
import { FLAG_HIDDEN, FLAG_SELECTED } from '../renderer/points.js';

/**
 * @typedef {object} TileMarks  the page's flags over a tiled projection
 * @property {Map<number, number>} rows  row -> flags (focus, neighbours with their shade, a
 *   few selected points)
 * @property {{ polygon: number[][], axes: number[] }|null} region  points inside are selected
 * @property {{ column: string, codes: Set<number> }|null} match  points whose code is in
 *   `codes` are selected (tiles carrying `column`)
 * @property {Set<number>|null} keep  isolated points: the others are hidden
 */

/** No flags: nothing selected, no neighbours, nothing isolated. */
export const NO_MARKS = Object.freeze({ rows: new Map(), region: null, match: null, keep: null });

/** A tile's colours (RGBA bytes per point) under `colors` (points/point_source.js TileColors). */
export function tileColors(tile, colors) {
  const out = new Uint32Array(tile.count).fill(colors.word);
  const { codes } = tile;
  if (colors.words && codes && tile.column === colors.column) {
    const words = colors.words;
    for (let r = 0; r < tile.count; r++) {
      const word = words[codes[r]];
      if (word !== undefined) out[r] = word;
    }
  }
  return new Uint8Array(out.buffer);
}

/** A tile's flags (one byte per point) under `marks`, hidden where it has no position. */
export function tileFlags(tile, marks, axes) {
  const { count, rows, positions } = tile;
  const out = new Uint8Array(count);
  for (let r = 0; r < count; r++) if (!Number.isFinite(positions[r * 3] + positions[r * 3 + 1])) out[r] = FLAG_HIDDEN;
  if (marks.rows.size) {
    for (let r = 0; r < count; r++) {
      const flags = marks.rows.get(rows[r]);
      if (flags !== undefined) out[r] |= flags;
    }
  }
  if (marks.region) forInside(tile, marks.region, axes, (r) => { out[r] |= FLAG_SELECTED; });
  const match = marks.match;
  if (match && tile.codes && tile.column === match.column) {
    for (let r = 0; r < count; r++) if (match.codes.has(tile.codes[r])) out[r] |= FLAG_SELECTED;
  }
  if (marks.keep) for (let r = 0; r < count; r++) if (!marks.keep.has(rows[r])) out[r] |= FLAG_HIDDEN;
  return out;
}

/**
 * Calls `inside(r)` for each point r of the tile inside `region` (a box or lasso in the
 * projection's units over `region.axes`; nothing when the tiles are over other axes): the
 * selection's rule, and an annotation's applied to a region (labelling/columns.js).
 * @param {{ count: number, coords: Float32Array }} tile
 * @param {{ polygon: number[][], axes: number[] }} region
 * @param {number[]} axes
 * @param {(r: number) => void} inside
 */
export function forInside(tile, region, axes, inside) {
  if (region.axes.join() !== axes.join()) return;
  const { count, coords } = tile;
  const k = coords.length / Math.max(1, count);
  const xs = region.polygon.map((p) => p[0]);
  const ys = region.polygon.map((p) => p[1]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  for (let r = 0; r < count; r++) {
    const x = coords[r * k];
    const y = coords[r * k + 1];
    if (x < x0 || x > x1 || y < y0 || y > y1) continue;
    if (pointInPolygon(x, y, region.polygon)) inside(r);
  }
}
