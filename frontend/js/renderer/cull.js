// Culling to the view: when a 2D view is zoomed in, a frame's points are spent on the part of
// the picture on screen. A grid of cells over the plot's unit square lists each cell's points
// by their rank in the level-of-detail draw order, so the head of a cell's list is an even
// sample of that cell: a moving frame draws the same share of every visible cell's list (all
// of them when the visible points fit the budget: zooming into a region draws every point of
// it), and the still frame draws every visible point and nothing off screen. The lists are
// drawn through an element buffer of ranks, sorted, so points overlap as in the full frame.
// The same grid serves hover in large 2D plots (picking.js): no camera move makes it stale.

export const GRID = 128;
/** Culling pays when the cells on screen hold less than this share of the points. */
const WORTH = 0.7;
/** Plots of more points than this build their grid ahead, when the page is idle. */
const IDLE_BUILD_ABOVE = 500000;
/** Points are discs: those just outside the view (world units) still show their edge. */
const MARGIN = 0.02;
/** Rows an idle slice of the grid's build takes: a few ms, so input is never kept waiting. */
const IDLE_ROWS = 1 << 18;

export class ViewCull {
  constructor(gl) {
    this.gl = gl;
    // Moving frames and the still frame (built over several frames) keep lists of their own.
    this.lists = [0, 1].map(() => ({ buffer: gl.createBuffer(), key: '', count: 0, ranks: null }));
    this.index = null;
    this.source = null;
    this.building = null;
  }

  /**
   * The points or their order changed: the grid is rebuilt when next needed, or once the
   * page is idle for a large 2D `plot` (the first zoom or hover then finds it ready).
   */
  invalidate(plot = null) {
    this.index = null;
    this.source = null;
    this.building = null;
    for (const list of this.lists) list.key = '';
    if (!plot || plot.n < IDLE_BUILD_ABOVE || typeof requestIdleCallback !== 'function') return;
    const positions = plot.positions;
    // In slices while the page is idle: ten million points are seconds of work on a busy CPU.
    const slice = (deadline) => {
      if (plot.positions !== positions || plot.threeD || plot.order?.length !== plot.n) return;
      if (this.index && this.source === positions) return;
      const build = this.building?.positions === positions ? this.building : (this.building = new GridBuild(plot));
      do build.step(IDLE_ROWS);
      while (!build.done && deadline.timeRemaining() > 4);
      if (build.done) this._finish(build);
      else requestIdleCallback(slice);
    };
    requestIdleCallback(slice);
  }

  /**
   * Ranks to draw for a 2D view (`matrix`, an orthographic view-projection): the points of
   * the cells on screen, at most `budget` (Infinity: every one), in an element buffer.
   * Returns { buffer, ranks, count, fraction } (fraction: the share of the visible points
   * drawn), or null when most points are on screen (a prefix of the draw order serves then).
   */
  select(plot, matrix, budget) {
    if (plot.threeD || !plot.order || plot.n !== plot.order.length) return null;
    const [x0, x1] = visibleRange(matrix[0], matrix[12], MARGIN);
    const [y0, y1] = visibleRange(matrix[5], matrix[13], MARGIN);
    // The whole plot (the unit square) on screen: nothing to cull, no grid to build.
    if ((x1 - x0) * (y1 - y0) > 4 * WORTH && x0 < -0.5 && x1 > 0.5 && y0 < -0.5 && y1 > 0.5) return null;
    const index = this.gridOf(plot);
    const c0 = cellOf(x0);
    const c1 = cellOf(x1);
    const r0 = cellOf(y0);
    const r1 = cellOf(y1);
    const { start } = index;
    let visible = 0;
    for (let r = r0; r <= r1; r++) visible += start[r * GRID + c1 + 1] - start[r * GRID + c0];
    if (visible > WORTH * plot.n) return null;
    const fraction = Math.min(1, budget / Math.max(1, visible));
    const list = this.lists[budget === Infinity ? 1 : 0];
    const key = `${c0},${c1},${r0},${r1},${fraction}`;
    if (key === list.key) return { buffer: list.buffer, ranks: list.ranks, count: list.count, fraction };
    const out = new Uint32Array(Math.min(visible, Math.ceil(visible * fraction) + (r1 - r0 + 1) * (c1 - c0 + 1)));
    let m = 0;
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        const cell = r * GRID + c;
        const size = start[cell + 1] - start[cell];
        const take = fraction >= 1 ? size : Math.min(size, Math.ceil(size * fraction));
        out.set(index.ranks.subarray(start[cell], start[cell] + take), m);
        m += take;
      }
    }
    const ranks = out.subarray(0, m).sort();
    const gl = this.gl;
    gl.bindVertexArray(null);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, list.buffer);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, ranks, gl.DYNAMIC_DRAW);
    Object.assign(list, { key, count: m, ranks });
    return { buffer: list.buffer, ranks, count: m, fraction };
  }

  /**
   * The grid over the plot's positions (built once per positions and order): { start, ranks },
   * cell c (row-major, GRID x GRID over [-1, 1]^2) holding ranks[start[c]..start[c + 1]).
   */
  gridOf(plot) {
    if (this.index && this.source === plot.positions) return this.index;
    // Needed now (a zoom, a hover): the idle build goes on from where it is, to the end.
    const build = this.building?.positions === plot.positions && this.building.order === plot.order ? this.building : new GridBuild(plot);
    build.step(Infinity);
    return this._finish(build);
  }

  _finish(build) {
    this.index = build.index;
    this.source = build.positions;
    this.building = null;
    for (const list of this.lists) list.key = '';
    return this.index;
  }

  dispose() {
    for (const list of this.lists) this.gl.deleteBuffer(list.buffer);
  }
}

/**
 * The grid of a plot's positions and order, built in steps of rows (two passes over the
 * points: each one's cell and the cells' sizes, then the ranks into their cells).
 */
class GridBuild {
  /** @param {{ positions: Float32Array, order: Int32Array, n: number }} plot */
  constructor({ positions, order, n }) {
    this.positions = positions;
    this.order = order;
    this.n = n;
    this.row = 0;
    this.pass = 0;
    this.done = false;
    this.index = null;
    this.cells = new Uint16Array(n);
    this.start = new Int32Array(GRID * GRID + 1);
  }

  step(rows) {
    const { positions, order, n, cells, start } = this;
    const end = Math.min(n, this.row + rows);
    if (this.pass === 0) {
      for (let r = this.row; r < end; r++) {
        const i = order[r] * 3;
        // cellOf, inlined (ten million calls); NaN (a missing point) goes to cell 0.
        let cx = Math.floor((positions[i] + 1) * (GRID / 2));
        let cy = Math.floor((positions[i + 1] + 1) * (GRID / 2));
        cx = cx >= 0 ? (cx < GRID ? cx : GRID - 1) : 0;
        cy = cy >= 0 ? (cy < GRID ? cy : GRID - 1) : 0;
        const cell = cy * GRID + cx;
        cells[r] = cell;
        start[cell + 1]++;
      }
      this.row = end;
      if (end < n) return;
      for (let c = 0; c < GRID * GRID; c++) start[c + 1] += start[c];
      this.fill = start.slice(0, GRID * GRID);
      this.ranks = new Uint32Array(n);
      this.pass = 1;
      this.row = 0;
      if (rows !== Infinity) return;
      return this.step(rows);
    }
    const { fill, ranks } = this;
    for (let r = this.row; r < end; r++) ranks[fill[cells[r]]++] = r;
    this.row = end;
    if (end < n) return;
    this.index = { start, ranks };
    this.done = true;
  }
}

/** The grid column (or row) of a coordinate of the unit square [-1, 1], clamped. */
export function cellOf(v) {
  const c = Math.floor(((v + 1) / 2) * GRID);
  return c < 0 ? 0 : c >= GRID ? GRID - 1 : Number.isNaN(c) ? 0 : c;
}

/** World coordinates on screen along one axis of an orthographic matrix (clip = a v + b). */
function visibleRange(a, b, margin) {
  const lo = (-1 - b) / a;
  const hi = (1 - b) / a;
  return [Math.min(lo, hi) - margin, Math.max(lo, hi) + margin];
}
