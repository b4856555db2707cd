// The whole array as a PointSource (point_source.js): the points sit in the plot's own
// buffers (plot.positions, in a draw order whose every prefix is an even sample). A frame
// draws every point when they fit the frame budget; while the view moves, the first
// `budget` points of the draw order (drawn a little larger); once it is still, the
// full-detail frame built off screen a slice per animation frame and shown in one copy.
// Picks and regions are exact over all points (renderer/picking.js); the page's marks
// become one flag byte per point, its colours one RGBA word per point.

import { placeIn, pointInPolygon, pointsInPolygon, pointsInRect } from '../geometry.js';
import { CPU_SLICE } from '../renderer/cpu_detail.js';
import { sampleSize } from '../renderer/lod.js';
import { FLAG_HIDDEN, FLAG_SELECTED } from '../renderer/points.js';

/** Still frames of more points than this are rasterised on the CPU (when they can be). */
const CPU_ABOVE = 200000;
/** A slice of the CPU still frame aims at this (ms): a busy CPU draws slower, slices shrink. */
const CPU_SLICE_MS = 60;

/**
 * The projection's own coordinates behind the positions: what a region in projection units
 * (Marks.region) is tested against.
 * @typedef {{ data: Float32Array, cols: number }} Coords
 */

/** @typedef {import('./point_source.js').PointSource} PointSource */

/** @implements {PointSource} */
export class ArrayPoints {
  /**
   * `positions` (n x 3, fitted to the unit cube); `missing`: 1 per row without coordinates
   * (hidden); `coords`: the projection's coordinates they were fitted from, by `frame`.
   * @param {Float32Array} positions
   * @param {{ missing?: Uint8Array | null, coords?: Coords | null, frame?: import('../geometry.js').FitFrame | null }} [options]
   */
  constructor(positions, { missing = null, coords = null, frame = null } = {}) {
    this.positions = positions;
    this.missing = missing;
    this.coords = coords;
    this.frame = frame;
    /** @type {import('../plot.js').Plot | null} */
    this.plot = null;
    /** @type {import('./point_source.js').RegionScope | null} its answers list every row */
    this.lastRegion = null;
    this.n = positions.length / 3;
  }

  /**
   * Its positions go into the plot's buffers (`animate` from the current ones, in `order`).
   * @param {import('../plot.js').Plot} plot
   * @param {{ animate?: boolean, order?: Int32Array | null }} [options]
   */
  attach(plot, options = {}) {
    this.plot = plot;
    plot.loadPositions(this.positions, options);
    // The page's colours, when they came while another source was shown (the points layer
    // keeps them for the points they fit).
    const { colors } = plot.coloring;
    if (colors && plot.points.colors !== colors) plot.setColors(colors);
  }

  detach() {
    this.plot = null;
  }

  /**
   * A point in projection units in the plot's cube, fitted as these points were.
   * @param {ArrayLike<number>} coords
   */
  place(coords) {
    return this.frame ? placeIn(this.frame, coords) : null;
  }

  // ---- drawing -----------------------------------------------------------------------------

  /**
   * @param {import('../plot.js').Plot} plot
   * @param {any} view
   * @param {boolean} moving
   * @param {number} start
   */
  drawFrame(plot, view, moving, start) {
    if (plot.n <= plot.frames.budget) {
      this._drawOnCanvas(plot, view, plot.n);
      if (moving) plot.frames.adaptBudget(start, plot.n);
    } else if (moving) {
      if (plot.presentPending || view.t < 1) {
        const drawn = this._drawOnCanvas(plot, view, plot.frames.budget);
        // Fewer than the budget (few points on screen) says little about what a frame holds.
        if (drawn >= plot.frames.budget * 0.9) plot.frames.adaptBudget(start, drawn);
      }
      plot.detailed = { offset: 0, complete: false };
      plot.frames.scheduleStill();
    } else {
      this._refine(plot, view);
    }
  }

  /**
   * Draws onto the canvas: `count` points (the first of the draw order, or as many of the
   * points on screen when zoomed in), then the top pass. Returns how many it drew.
   */
  _drawOnCanvas(plot, view, count) {
    const gl = plot.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.viewport(0, 0, plot.canvas.width, plot.canvas.height);
    plot.frames.clear();
    const culled = count < plot.n && view.t >= 1 ? plot.cull.select(plot, view.matrix, count) : null;
    view.count = culled ? culled.count : count;
    view.elements = culled ? culled.buffer : null;
    view.sampled = count < plot.n;
    view.sampleSize = sampleSize(culled ? culled.fraction : plot.n ? count / plot.n : 1);
    if (!view.threeD && view.sampled) {
      // Zoomed in, points are large already: a sample's discs together cover the canvas
      // about four times at most, so that a frame's cost stays with its number of points.
      const disc = view.size * view.scale;
      const cap = Math.sqrt((4 * plot.canvas.width * plot.canvas.height) / Math.max(1, view.count)) / disc;
      view.sampleSize = Math.max(1, Math.min(view.sampleSize, cap));
    }
    plot.frames.renderLayers(view, 'base');
    view.sampleSize = 1;
    view.elements = null;
    plot.frames.renderLayers(view, 'top');
    plot.drawn = view.count;
    return view.count;
  }

  /**
   * One slice of the full-detail frame; the canvas shows it once it is whole. Large 2D
   * frames are rasterised on the CPU (renderer/cpu_detail.js), the rest by the GPU off screen.
   */
  _refine(plot, view) {
    const gl = plot.gl;
    const d = plot.detailed;
    if (!d.complete) {
      if (d.offset === 0) {
        // Zoomed in: every point on screen, and none of those off it.
        d.culled = view.t >= 1 ? plot.cull.select(plot, view.matrix, Infinity) : null;
        d.total = d.culled ? d.culled.count : plot.n;
        d.cpu = d.total > CPU_ABOVE && plot.cpuDetail.suits(plot, view);
        if (d.cpu) plot.cpuDetail.begin(plot, view);
      }
      const step = d.cpu ? plot.cpuStep : plot.frames.budget * 2; // twice a moving frame: hover stays responsive
      const count = Math.min(step, d.total - d.offset);
      if (d.cpu) {
        const began = performance.now();
        plot.cpuDetail.draw(plot, view, d.culled?.ranks ?? null, d.offset, d.offset + count);
        const ms = Math.max(1, performance.now() - began);
        // Towards CPU_SLICE_MS a slice, from what this one took.
        if (count >= step) plot.cpuStep = Math.round(Math.max(CPU_SLICE / 8, Math.min(CPU_SLICE * 4, (step * 0.5) + (step * CPU_SLICE_MS / ms) * 0.5)));
      } else {
        plot.detail.bind(plot.canvas.width, plot.canvas.height);
        if (d.offset === 0) plot.frames.clear();
        view.start = d.offset;
        view.count = count;
        view.elements = d.culled ? d.culled.buffer : null;
        plot.frames.renderLayers(view, 'base');
        view.elements = null;
        gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      }
      d.offset += count;
      d.complete = d.offset >= d.total;
      if (d.complete) {
        if (d.cpu) plot.cpuDetail.finish(plot, view);
        plot.drawn = d.total;
        plot.presentPending = true;
      } else {
        plot.frames.schedule();
      }
    }
    if (!plot.presentPending) return;
    const top = { ...view, start: 0, count: plot.n };
    if (d.complete) {
      gl.viewport(0, 0, plot.canvas.width, plot.canvas.height);
      plot.frames.clear();
      (d.cpu ? plot.cpuDetail : plot.detail).present();
      top.sampled = true; // highlighted points go on top of the finished frame as well
      plot.frames.renderLayers(top, 'top');
    } else {
      this._drawOnCanvas(plot, top, plot.frames.budget);
    }
  }

  // ---- answers -----------------------------------------------------------------------------

  /**
   * @param {import('../plot.js').Plot} plot
   * @param {number} x
   * @param {number} y
   * @param {number} radius
   */
  pick(plot, x, y, radius) {
    return plot.picking.pick(x, y, radius);
  }

  /**
   * Rows of visible points inside a box or lasso: one projection pass over all of them.
   * @param {import('../plot.js').Plot} plot
   * @param {import('./point_source.js').Region} region
   */
  region(plot, region) {
    const screen = plot.picking.screenPositions();
    const hidden = (i) => (plot.flags[i] & FLAG_HIDDEN) !== 0;
    if (region.kind === 'box') return pointsInRect(screen, region.points[0], region.points[region.points.length - 1], hidden);
    return pointsInPolygon(screen, region.points, hidden);
  }

  // ---- colours and marks -------------------------------------------------------------------

  /** @param {import('./point_source.js').Coloring} coloring */
  setColoring(coloring) {
    if (coloring.colors) this.plot?.setColors(coloring.colors); // a rule per code (tiles) has none
  }

  /** @param {import('./point_source.js').Marks} marks */
  setMarks(marks) {
    this.plot?.setFlags(this.flagsOf(marks));
  }

  /**
   * One flag byte per point under `marks`: hidden where it has no coordinates or is not
   * kept; a region over the projection's coordinates when they are here.
   * @param {import('./point_source.js').Marks} marks
   */
  flagsOf(marks) {
    const n = this.n;
    const flags = new Uint8Array(n);
    if (this.missing) for (let i = 0; i < n; i++) if (this.missing[i]) flags[i] = FLAG_HIDDEN;
    if (marks.keep) {
      const kept = new Uint8Array(n);
      for (const i of marks.keep) if (i < n) kept[i] = 1;
      for (let i = 0; i < n; i++) if (!kept[i]) flags[i] |= FLAG_HIDDEN;
    }
    for (const i of marks.selected) if (i < n) flags[i] |= FLAG_SELECTED;
    for (const [i, f] of marks.rows) if (i < n) flags[i] |= f;
    const region = marks.region;
    const coords = this.coords;
    if (region && coords && region.axes.every((a) => a < coords.cols)) {
      const [ax, ay] = region.axes;
      for (let i = 0; i < n; i++) {
        if (pointInPolygon(coords.data[i * coords.cols + ax], coords.data[i * coords.cols + ay], region.polygon)) flags[i] |= FLAG_SELECTED;
      }
    }
    return flags;
  }

  // ---- labels --------------------------------------------------------------------------------

  /**
   * @param {import('./point_source.js').LabelCandidate[]} candidates
   * @param {number} t  how far a transition is (0..1)
   */
  labelPositions(candidates, t) {
    const plot = this.plot;
    if (!plot) return [];
    const to = plot.positions;
    const from = plot.fromPositions ?? to;
    const at = (k) => from[k] + (to[k] - from[k]) * t;
    const out = [];
    for (const c of candidates) {
      const i = c.index;
      if (i < 0 || i >= plot.n || plot.flags[i] & FLAG_HIDDEN) continue;
      out.push({ ...c, at: [at(i * 3), at(i * 3 + 1), at(i * 3 + 2)] });
    }
    return out;
  }

  /** The whole array carries no codes: its labels come from whole columns (Dataset.label). */
  codesOf() {
    return new Map();
  }
}
