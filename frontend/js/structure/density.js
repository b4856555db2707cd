// Kernel density of the points on screen, cheap enough to redo on every streamed frame: the
// points are binned on a coarse pixel grid (one pass over typed arrays), the grid is blurred
// by a separable Gaussian (the KDE of the binned points), and contour lines come from
// marching squares. Pure: no DOM, so node tests and a worker could run it alike.

export const CELL = 4; // CSS pixels per grid cell
export const SIGMA = 3; // kernel width in cells (12 px)
export const LEVELS = [0.1, 0.25, 0.45, 0.7, 0.9]; // contour heights, as fractions of the peak

/**
 * The density grid of `n` positions (n x 3 in the plot's space) seen through `matrix` on a
 * width x height canvas. Points whose `flags[i] & hiddenBit` is set are left out.
 */
export function densityGrid(positions, n, matrix, width, height, { cell = CELL, sigma = SIGMA, flags = null, hiddenBit = 0 } = {}) {
  const cols = Math.max(2, Math.ceil(width / cell));
  const rows = Math.max(2, Math.ceil(height / cell));
  const grid = new Float32Array(cols * rows);
  const m = matrix;
  const sx = width / 2 / cell;
  const sy = height / 2 / cell;
  for (let i = 0; i < n; i++) {
    if (flags !== null && flags[i] & hiddenBit) continue;
    const x = positions[i * 3];
    const y = positions[i * 3 + 1];
    const z = positions[i * 3 + 2];
    const w = m[3] * x + m[7] * y + m[11] * z + m[15];
    if (!(w > 0)) continue;
    const gx = ((m[0] * x + m[4] * y + m[8] * z + m[12]) / w + 1) * sx;
    const gy = (1 - (m[1] * x + m[5] * y + m[9] * z + m[13]) / w) * sy;
    if (gx < 0 || gy < 0 || gx >= cols || gy >= rows) continue;
    grid[(gy | 0) * cols + (gx | 0)] += 1;
  }
  blur(grid, cols, rows, sigma);
  let max = 0;
  for (let i = 0; i < grid.length; i++) if (grid[i] > max) max = grid[i];
  return { grid, cols, rows, cell, max };
}

/** In-place separable Gaussian blur (rows, then columns), kernel cut at 3 sigma. */
export function blur(grid, cols, rows, sigma) {
  const radius = Math.max(1, Math.ceil(3 * sigma));
  const kernel = new Float32Array(2 * radius + 1);
  let sum = 0;
  for (let k = -radius; k <= radius; k++) sum += kernel[k + radius] = Math.exp(-(k * k) / (2 * sigma * sigma));
  for (let k = 0; k < kernel.length; k++) kernel[k] /= sum;
  const line = new Float32Array(Math.max(cols, rows));
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let c = 0; c < cols; c++) line[c] = grid[base + c];
    for (let c = 0; c < cols; c++) {
      let acc = 0;
      const lo = Math.max(0, c - radius);
      const hi = Math.min(cols - 1, c + radius);
      for (let j = lo; j <= hi; j++) acc += line[j] * kernel[j - c + radius];
      grid[base + c] = acc;
    }
  }
  for (let c = 0; c < cols; c++) {
    for (let r = 0; r < rows; r++) line[r] = grid[r * cols + c];
    for (let r = 0; r < rows; r++) {
      let acc = 0;
      const lo = Math.max(0, r - radius);
      const hi = Math.min(rows - 1, r + radius);
      for (let j = lo; j <= hi; j++) acc += line[j] * kernel[j - r + radius];
      grid[r * cols + c] = acc;
    }
  }
}

/**
 * Contour segments at `level` by marching squares: a flat Float32Array of x0, y0, x1, y1
 * in CSS pixels (cell centres), the crossing placed by linear interpolation.
 */
export function contourSegments({ grid, cols, rows, cell }, level) {
  const out = [];
  const at = (a, b) => (level - a) / (b - a || 1e-12);
  for (let r = 0; r + 1 < rows; r++) {
    for (let c = 0; c + 1 < cols; c++) {
      const tl = grid[r * cols + c];
      const tr = grid[r * cols + c + 1];
      const br = grid[(r + 1) * cols + c + 1];
      const bl = grid[(r + 1) * cols + c];
      const code = (tl >= level ? 8 : 0) | (tr >= level ? 4 : 0) | (br >= level ? 2 : 0) | (bl >= level ? 1 : 0);
      if (code === 0 || code === 15) continue;
      // Edge crossings in cell units: top, right, bottom, left.
      const top = [c + at(tl, tr), r];
      const right = [c + 1, r + at(tr, br)];
      const bottom = [c + at(bl, br), r + 1];
      const left = [c, r + at(tl, bl)];
      const pairs = SEGMENTS[code](top, right, bottom, left, (tl + tr + br + bl) / 4 >= level);
      for (const [p, q] of pairs) out.push(p[0], p[1], q[0], q[1]);
    }
  }
  const half = cell / 2;
  const segments = new Float32Array(out.length);
  for (let i = 0; i < out.length; i++) segments[i] = out[i] * cell + half;
  return segments;
}

// Which cell edges a contour joins for each corner pattern (saddles split by the centre).
const SEGMENTS = {
  1: (t, r, b, l) => [[l, b]],
  2: (t, r, b) => [[b, r]],
  3: (t, r, b, l) => [[l, r]],
  4: (t, r) => [[t, r]],
  5: (t, r, b, l, mid) => (mid ? [[l, t], [b, r]] : [[l, b], [t, r]]),
  6: (t, r, b) => [[t, b]],
  7: (t, r, b, l) => [[l, t]],
  8: (t, r, b, l) => [[l, t]],
  9: (t, r, b) => [[t, b]],
  10: (t, r, b, l, mid) => (mid ? [[t, r], [l, b]] : [[t, l], [b, r]]),
  11: (t, r) => [[t, r]],
  12: (t, r, b, l) => [[l, r]],
  13: (t, r, b) => [[b, r]],
  14: (t, r, b, l) => [[l, b]],
};
