// The tiles' cells in the plot: every tile's quadtree cell placed in the plot's unit square
// (fitted as the whole set would be, from the index's bounds), and which cells a view needs:
// those meeting it, whole levels coarse first, as deep as a points budget allows (zoomed in,
// deeper levels fit: level of detail by zoom).

/**
 * @typedef {object} Cell  a tile's quadtree cell, corners in the plot's unit square
 * @property {string} key  'z/x/y'
 * @property {number} z
 * @property {number} x
 * @property {number} y
 * @property {number} count  points of its tile
 * @property {number} x0
 * @property {number} x1
 * @property {number} y0
 * @property {number} y1
 */

/**
 * Every tile's cell (x along axis 0, y along axis 1).
 * @param {{ box: { lo: number[], hi: number[] }, tiles: number[][] }} manifest  the tile index
 * @param {{ mid: number[], scale: number }} fit
 * @returns {Cell[]}
 */
export function cellsOf(manifest, fit) {
  const { lo, hi } = manifest.box;
  return manifest.tiles.map(([z, x, y, count]) => {
    const side = 2 ** z;
    const corner = (a, i) => ((lo[a] + ((hi[a] - lo[a]) * i) / side) - fit.mid[a]) * fit.scale;
    return { key: `${z}/${x}/${y}`, z, x, y, count, x0: corner(0, x), x1: corner(0, x + 1), y0: corner(1, y), y1: corner(1, y + 1) };
  });
}

/**
 * The cells meeting the view `matrix` at the density it needs: whole levels, coarse first,
 * as deep as fit `budget` points.
 * @param {Cell[]} cells
 * @param {ArrayLike<number>} matrix
 * @param {number} budget
 */
export function wantedCells(cells, matrix, budget) {
  const visible = cells.filter((c) => meets(matrix, c));
  const wanted = [];
  let taken = 0;
  for (let z = 0; ; z++) {
    const level = visible.filter((c) => c.z === z);
    if (!level.length) {
      if (visible.some((c) => c.z > z)) continue;
      break;
    }
    const points = level.reduce((sum, c) => sum + c.count, 0);
    if (z > 0 && taken + points > budget) break;
    taken += points;
    wanted.push(...level);
  }
  return wanted;
}

/**
 * Points of the cells meeting the view at every level: what a drawn sample stands for.
 * @param {Cell[]} cells
 * @param {ArrayLike<number>} matrix
 */
export function pointsMeeting(cells, matrix) {
  return cells.reduce((sum, c) => sum + (meets(matrix, c) ? c.count : 0), 0);
}

/** Centre and scale of `bounds` into the unit square, as geometry.fitPositions fits the whole set. */
export function fitOf(bounds) {
  let half = 0;
  const mid = [0, 0];
  for (let a = 0; a < 2; a++) {
    if (!(bounds.hi[a] >= bounds.lo[a])) continue;
    mid[a] = (bounds.lo[a] + bounds.hi[a]) / 2;
    half = Math.max(half, (bounds.hi[a] - bounds.lo[a]) / 2);
  }
  return { mid, scale: half > 0 ? 1 / half : 1 };
}

/** Whether a cell (unit-square corners) meets the clip square under `m`. */
function meets(m, c) {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const [x, y] of [[c.x0, c.y0], [c.x1, c.y0], [c.x0, c.y1], [c.x1, c.y1]]) {
    const w = m[3] * x + m[7] * y + m[15];
    const cx = (m[0] * x + m[4] * y + m[12]) / w;
    const cy = (m[1] * x + m[5] * y + m[13]) / w;
    x0 = Math.min(x0, cx);
    x1 = Math.max(x1, cx);
    y0 = Math.min(y0, cy);
    y1 = Math.max(y1, cy);
  }
  return x1 >= -1 && x0 <= 1 && y1 >= -1 && y0 <= 1;
}
