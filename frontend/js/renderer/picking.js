// Picking on the CPU, exact over every point whatever a frame draws (the level-of-detail
// sample or all): all points are projected to the screen once per view and bucketed in a
// grid of screen cells, so a mouse move looks at a few cells instead of every point, and a
// box or lasso tests the same projected coordinates. Rebuilt lazily, only after the camera,
// the points or their flags changed. A large 2D plot is picked through the plot's grid of
// cells in the plane instead (renderer/cull.js), which no camera move makes stale: only the
// points of the cells near the cursor are projected, the same way, so the answer is the same.

import { projectPoints } from '../geometry.js';
import { cellOf, GRID } from './cull.js';
import { FLAG_HIDDEN } from './points.js';

const CELL = 16; // CSS pixels per grid cell
/** Above this many points a 2D plot is picked through the grid in the plane. */
const PLANE_GRID_ABOVE = 500000;

export class PickingLayer {
  constructor() {
    this.stale = true;
    /** @type {Float32Array | null} every point's screen coordinates (CSS pixels) */
    this.screen = null;
    /** The grid: columns and rows of CELL pixels, each cell's first item, the items. */
    this.cols = 0;
    this.rows = 0;
    /** @type {Int32Array | null} */
    this.cellStart = null;
    /** @type {Int32Array | null} */
    this.items = null;
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    this.plot = plot;
  }

  onPositionsChanged() {
    this.stale = true;
  }

  /** Nothing to draw: picks read the grid, rebuilt on the next pick after a change. */
  render() {}

  onResize() {
    this.stale = true;
  }

  dispose() {
    this.screen = null;
    this.cellStart = null;
    this.items = null;
  }

  // ---- picking ---------------------------------------------------------------------------

  /** Marks the grid out of date (camera moved, points moved or were hidden). */
  invalidate() {
    this.stale = true;
  }

  /** Every point's screen coordinates (CSS pixels) under the current view; NaN if hidden. */
  screenPositions() {
    if (this.stale) this._build();
    return this.screen;
  }

  _build() {
    const plot = this.plot;
    const width = plot.canvas.clientWidth;
    const height = plot.canvas.clientHeight;
    const screen = projectPoints(plot.currentPositions(), plot.matrix(), width, height, this.screen);
    const flags = plot.flags;
    const n = screen.length / 2;
    const cols = Math.max(1, Math.ceil(width / CELL));
    const rows = Math.max(1, Math.ceil(height / CELL));
    const cellOf = new Int32Array(n);
    const counts = new Int32Array(cols * rows + 1);
    for (let i = 0; i < n; i++) {
      if (flags.length === n && flags[i] & FLAG_HIDDEN) {
        screen[i * 2] = NaN;
        screen[i * 2 + 1] = NaN;
      }
      const cx = Math.floor(screen[i * 2] / CELL);
      const cy = Math.floor(screen[i * 2 + 1] / CELL);
      // NaN fails every comparison, so hidden points and points behind the camera drop out.
      if (cx >= 0 && cx < cols && cy >= 0 && cy < rows) {
        cellOf[i] = cy * cols + cx;
        counts[cellOf[i] + 1]++;
      } else {
        cellOf[i] = -1;
      }
    }
    for (let c = 0; c < cols * rows; c++) counts[c + 1] += counts[c];
    const fill = counts.slice(0, cols * rows);
    const items = new Int32Array(counts[cols * rows]);
    for (let i = 0; i < n; i++) if (cellOf[i] >= 0) items[fill[cellOf[i]]++] = i;
    this.screen = screen;
    this.cols = cols;
    this.rows = rows;
    this.cellStart = counts;
    this.items = items;
    this.stale = false;
  }

  /** The point nearest to CSS pixel (x, y) within `radius` pixels, or -1. */
  pick(x, y, radius) {
    const plot = this.plot;
    if (!plot.n) return -1;
    if (this.stale && !plot.threeD && !plot.fromPositions && plot.order && plot.n > PLANE_GRID_ABOVE) {
      return this._pickInPlane(x, y, radius);
    }
    if (this.stale) this._build();
    const { screen, cols, rows, cellStart, items } = this;
    let best = -1;
    let bestDistance = radius * radius;
    const x0 = Math.max(0, Math.floor((x - radius) / CELL));
    const x1 = Math.min(cols - 1, Math.floor((x + radius) / CELL));
    const y0 = Math.max(0, Math.floor((y - radius) / CELL));
    const y1 = Math.min(rows - 1, Math.floor((y + radius) / CELL));
    for (let cy = y0; cy <= y1; cy++) {
      for (let cx = x0; cx <= x1; cx++) {
        const c = cy * cols + cx;
        for (let k = cellStart[c]; k < cellStart[c + 1]; k++) {
          const i = items[k];
          const distance = (screen[i * 2] - x) ** 2 + (screen[i * 2 + 1] - y) ** 2;
          if (distance < bestDistance || (distance === bestDistance && i < best)) {
            bestDistance = distance;
            best = i;
          }
        }
      }
    }
    return best;
  }

  /** pick() over the points of the plane's cells within `radius` of (x, y): 2D only. */
  _pickInPlane(x, y, radius) {
    const plot = this.plot;
    const { start, ranks } = plot.cull.gridOf(plot);
    const m = plot.matrix();
    const width = plot.canvas.clientWidth;
    const height = plot.canvas.clientHeight;
    // The cursor and the radius in the plane (an orthographic view: w = 1).
    const wx = ((x / width) * 2 - 1 - m[12]) / m[0];
    const wy = (1 - (y / height) * 2 - m[13]) / m[5];
    const rx = Math.abs((radius * 2) / width / m[0]);
    const ry = Math.abs((radius * 2) / height / m[5]);
    const [c0, c1, r0, r1] = [cellOf(wx - rx), cellOf(wx + rx), cellOf(wy - ry), cellOf(wy + ry)];
    const { positions, order, flags } = plot;
    const checkFlags = flags.length === plot.n;
    let best = -1;
    let bestDistance = radius * radius;
    for (let r = r0; r <= r1; r++) {
      for (let k = start[r * GRID + c0]; k < start[r * GRID + c1 + 1]; k++) {
        const i = order[ranks[k]];
        if (checkFlags && flags[i] & FLAG_HIDDEN) continue;
        const px = positions[i * 3];
        const py = positions[i * 3 + 1];
        const pz = positions[i * 3 + 2];
        const w = m[3] * px + m[7] * py + m[11] * pz + m[15];
        // As projectPoints computes and stores them (float32).
        const sx = Math.fround(((m[0] * px + m[4] * py + m[8] * pz + m[12]) / w + 1) * 0.5 * width);
        const sy = Math.fround((1 - (m[1] * px + m[5] * py + m[9] * pz + m[13]) / w) * 0.5 * height);
        const distance = (sx - x) ** 2 + (sy - y) ** 2;
        if (distance < bestDistance || (distance === bestDistance && i < best)) {
          bestDistance = distance;
          best = i;
        }
      }
    }
    return best;
  }
}
