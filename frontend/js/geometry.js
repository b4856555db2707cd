// Geometry on typed arrays: fitting a projection into the unit cube, projecting points to
// the screen, and the box/lasso tests of region selection. Pure: no DOM, no WebGL.

/**
 * How projection coordinates became positions: the columns fitted, their centre and the one
 * scale (a position is (coordinate - mid) * factor on each fitted column, 0 on the others).
 * @typedef {{ columns: number[], mid: number[], factor: number }} FitFrame
 */

/**
 * Positions (n x 3, z = 0 in 2D) of `columns` of a row-major coordinate matrix, centred and
 * uniformly scaled so the cloud (or the rows in the `include` set) fits in [-1, 1]^3. Rows
 * with a NaN/Inf are flagged in `missing` (1) and placed at the origin. `frame`: the fit, to
 * place other points (a phrase's marker) the same way.
 */
export function fitPositions(coords, n, stride, columns, include = null) {
  const fit = new Fit(coords, n, stride, columns, include);
  fit.extent(0, n);
  fit.scale();
  fit.place(0, n);
  return { positions: fit.positions, missing: fit.missing, frame: fit.frame() };
}

/**
 * A point in projection units (every column of the result) in the plot's cube by `frame`;
 * null when a fitted column of it is not finite.
 * @param {FitFrame} frame
 * @param {ArrayLike<number>} coords
 * @returns {number[] | null}
 */
export function placeIn(frame, coords) {
  const position = [0, 0, 0];
  for (let a = 0; a < frame.columns.length; a++) {
    const v = coords[frame.columns[a]];
    if (!Number.isFinite(v)) return null;
    position[a] = (v - frame.mid[a]) * frame.factor;
  }
  return position;
}

/**
 * fitPositions in steps over ranges of rows (draw_order.js runs them in slices): extent of
 * every range, then scale(), then place every range.
 */
export class Fit {
  /**
   * @param {ArrayLike<number>} coords  n x stride
   * @param {number} n
   * @param {number} stride
   * @param {number[]} columns  the axes fitted
   * @param {Set<number> | null} [include]  the rows kept (the others missing)
   */
  constructor(coords, n, stride, columns, include = null) {
    this.coords = coords;
    this.n = n;
    this.stride = stride;
    this.columns = columns;
    this.include = include;
    this.positions = new Float32Array(n * 3);
    this.missing = new Uint8Array(n);
    this.lo = [Infinity, Infinity, Infinity];
    this.hi = [-Infinity, -Infinity, -Infinity];
  }

  extent(start, end) {
    const { coords, stride, columns, include, missing, lo, hi } = this;
    for (let i = start; i < end; i++) {
      let finite = true;
      for (let a = 0; a < columns.length; a++) if (!Number.isFinite(coords[i * stride + columns[a]])) finite = false;
      if (!finite) {
        missing[i] = 1;
        continue;
      }
      if (include && !include.has(i)) continue;
      for (let a = 0; a < columns.length; a++) {
        const v = coords[i * stride + columns[a]];
        if (v < lo[a]) lo[a] = v;
        if (v > hi[a]) hi[a] = v;
      }
    }
  }

  scale() {
    const { columns, lo, hi } = this;
    let half = 0;
    this.mid = [0, 0, 0];
    for (let a = 0; a < columns.length; a++) {
      if (hi[a] < lo[a]) continue;
      this.mid[a] = (lo[a] + hi[a]) / 2;
      half = Math.max(half, (hi[a] - lo[a]) / 2);
    }
    this.factor = half > 0 ? 1 / half : 1;
  }

  /** @returns {FitFrame} once scale() has run */
  frame() {
    return { columns: this.columns.slice(), mid: this.mid.slice(), factor: this.factor };
  }

  place(start, end) {
    const { coords, stride, columns, missing, positions, mid, factor } = this;
    for (let i = start; i < end; i++) {
      if (missing[i]) continue;
      for (let a = 0; a < columns.length; a++) {
        positions[i * 3 + a] = (coords[i * stride + columns[a]] - mid[a]) * factor;
      }
    }
  }
}

/**
 * Screen coordinates (n x 2, CSS pixels) of every position; NaN for points behind the camera.
 * Inlined (no array per point): it runs over millions of points for picking and regions.
 */
export function projectPoints(positions, m, width, height, out = null) {
  const n = positions.length / 3;
  const screen = out && out.length === n * 2 ? out : new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    const x = positions[i * 3];
    const y = positions[i * 3 + 1];
    const z = positions[i * 3 + 2];
    const w = m[3] * x + m[7] * y + m[11] * z + m[15];
    if (w <= 0) {
      screen[i * 2] = NaN;
      screen[i * 2 + 1] = NaN;
      continue;
    }
    screen[i * 2] = ((m[0] * x + m[4] * y + m[8] * z + m[12]) / w + 1) * 0.5 * width;
    screen[i * 2 + 1] = (1 - (m[1] * x + m[5] * y + m[9] * z + m[13]) / w) * 0.5 * height;
  }
  return screen;
}

/** Indices of screen points inside the rectangle spanned by two corners, skipping `skip(i)`. */
/**
 * @param {Float32Array} screen  x, y per point
 * @param {Iterable<number>} corner0
 * @param {Iterable<number>} corner1
 * @param {(i: number) => boolean} [skip]
 */
export function pointsInRect(screen, [x0, y0], [x1, y1], skip = (_i) => false) {
  const [minX, maxX] = [Math.min(x0, x1), Math.max(x0, x1)];
  const [minY, maxY] = [Math.min(y0, y1), Math.max(y0, y1)];
  const out = [];
  for (let i = 0; i < screen.length / 2; i++) {
    const x = screen[i * 2];
    const y = screen[i * 2 + 1];
    if (x >= minX && x <= maxX && y >= minY && y <= maxY && !skip(i)) out.push(i);
  }
  return out;
}

/** Even-odd rule: whether (x, y) lies inside a polygon given as [[x, y], ...]. */
/**
 * @param {number} x
 * @param {number} y
 * @param {Iterable<number>[]} polygon
 */
export function pointInPolygon(x, y, polygon) {
  let inside = false;
  for (let i = 0, j = polygon.length - 1; i < polygon.length; j = i++) {
    const [xi, yi] = polygon[i];
    const [xj, yj] = polygon[j];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Indices of screen points inside a lasso polygon, testing its bounding box first. */
/**
 * @param {Float32Array} screen
 * @param {Iterable<number>[]} polygon
 * @param {(i: number) => boolean} [skip]
 */
export function pointsInPolygon(screen, polygon, skip = (_i) => false) {
  if (polygon.length < 3) return [];
  const xs = polygon.map((p) => p[0]);
  const ys = polygon.map((p) => p[1]);
  const candidates = pointsInRect(screen, [Math.min(...xs), Math.min(...ys)], [Math.max(...xs), Math.max(...ys)], skip);
  return candidates.filter((i) => pointInPolygon(screen[i * 2], screen[i * 2 + 1], polygon));
}

/**
 * Greedy label placement with a collision grid: candidates in priority order (lowest
 * first), each kept only if its box overlaps no kept box. `measure(text)` gives a width.
 * Returns the kept candidates with their box { x, y, w, h } (top-left, pixels).
 */
export function layoutLabels(candidates, measure, { width, height, fontSize = 12, cell = 64, limit = 10000 }) {
  const grid = new Map();
  const kept = [];
  const h = fontSize + 4;
  const sorted = candidates.slice().sort((a, b) => a.priority - b.priority);
  for (const c of sorted) {
    if (kept.length >= limit) break;
    const w = measure(c.text) + 6;
    const box = { x: c.x + 6, y: c.y - h / 2, w, h };
    if (box.x > width || box.y > height || box.x + w < 0 || box.y + h < 0) continue;
    const cx0 = Math.floor(box.x / cell);
    const cx1 = Math.floor((box.x + w) / cell);
    const cy0 = Math.floor(box.y / cell);
    const cy1 = Math.floor((box.y + h) / cell);
    let clash = false;
    for (let gx = cx0; gx <= cx1 && !clash; gx++) {
      for (let gy = cy0; gy <= cy1 && !clash; gy++) {
        for (const other of grid.get(`${gx},${gy}`) || []) {
          if (box.x < other.x + other.w && other.x < box.x + w && box.y < other.y + other.h && other.y < box.y + h) {
            clash = true;
            break;
          }
        }
      }
    }
    if (clash) continue;
    for (let gx = cx0; gx <= cx1; gx++) {
      for (let gy = cy0; gy <= cy1; gy++) {
        const key = `${gx},${gy}`;
        if (!grid.has(key)) grid.set(key, []);
        grid.get(key).push(box);
      }
    }
    kept.push({ ...c, box });
  }
  return kept;
}
