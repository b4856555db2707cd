// How the plot fills a frame (methods of Plot): every point when they fit the frame budget;
// while the view moves, the first `budget` points of the draw order (an even sample, drawn
// a little larger); once it is still, the full-detail frame built off screen a slice per
// animation frame and shown in one copy. Layers render in two passes: 'base' (the points)
// and 'top' (what must show over any sample: highlighted points, labels, outlines).

import { CPU_SLICE } from './renderer/cpu_detail.js';
import { sampleSize } from './renderer/lod.js';

/** Still frames of more points than this are rasterised on the CPU (when they can be). */
const CPU_ABOVE = 200000;

/** The budget follows the measured frame time towards this (ms), within the bounds. */
const TARGET_FRAME_MS = 70;
const BUDGET_BOUNDS = [10000, 2000000];
/** The view counts as still this long after its last change. */
const STILL_MS = 180;
/** A slice of the CPU still frame aims at this (ms): a busy CPU draws slower, slices shrink. */
const CPU_SLICE_MS = 60;

export class PlotFrames {
  _clear() {
    const gl = this.gl;
    const [r, g, b] = this.theme.background;
    gl.clearColor(r, g, b, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.depthFunc(gl.LEQUAL);
    gl.enable(gl.BLEND);
    gl.blendFuncSeparate(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA, gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
  }

  _renderLayers(view, pass) {
    view.pass = pass;
    for (const layer of this.layers) layer.render(view);
  }

  /**
   * Draws onto the canvas: `count` points (the first of the draw order, or as many of the
   * points on screen when zoomed in), then the top pass. Returns how many it drew.
   */
  _drawOnCanvas(view, count) {
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    this._clear();
    const culled = count < this.n && view.t >= 1 ? this.cull.select(this, view.matrix, count) : null;
    view.count = culled ? culled.count : count;
    view.elements = culled ? culled.buffer : null;
    view.sampled = count < this.n;
    view.sampleSize = sampleSize(culled ? culled.fraction : this.n ? count / this.n : 1);
    if (!view.threeD && view.sampled) {
      // Zoomed in, points are large already: a sample's discs together cover the canvas
      // about four times at most, so that a frame's cost stays with its number of points.
      const disc = view.size * view.scale;
      const cap = Math.sqrt((4 * this.canvas.width * this.canvas.height) / Math.max(1, view.count)) / disc;
      view.sampleSize = Math.max(1, Math.min(view.sampleSize, cap));
    }
    this._renderLayers(view, 'base');
    view.sampleSize = 1;
    view.elements = null;
    this._renderLayers(view, 'top');
    this.drawn = view.count;
    return view.count;
  }

  _draw() {
    if (!this.theme) return;
    const gl = this.gl;
    const start = performance.now();
    this._resize();
    const view = this._view();
    const moving = view.t < 1 || start - this.lastChange < STILL_MS;
    if (this.tiles) {
      this._drawTiled(view, moving, start);
    } else if (this.n <= this.budget) {
      this._drawOnCanvas(view, this.n);
      if (moving) this._adaptBudget(start, this.n);
    } else if (moving) {
      if (this.presentPending || view.t < 1) {
        const drawn = this._drawOnCanvas(view, this.budget);
        // Fewer than the budget (few points on screen) says little about what a frame holds.
        if (drawn >= this.budget * 0.9) this._adaptBudget(start, drawn);
      }
      this.detailed = { offset: 0, complete: false };
      setTimeout(() => this._schedule(), STILL_MS);
    } else {
      this._refine(view);
    }
    this.presentPending = false;
    if (view.t < 1) this.requestRender();
    if ((this.n || this.preview.count || this.drawn) && this.firstFrameMs === null) {
      gl.finish();
      this.firstFrameMs = performance.now();
    }
    this.frameTimes.push(performance.now() - start);
    if (this.frameTimes.length > 600) this.frameTimes.splice(0, 300);
  }

  /**
   * Moves the budget towards what fits a frame on this machine now (software GL on a busy
   * CPU draws several times slower than on an idle one), from the time the frame took.
   */
  _adaptBudget(start, drawn) {
    if (this.budget === Infinity || drawn < BUDGET_BOUNDS[0]) return;
    // Reading a pixel waits for the frame's drawing (gl.finish() does not, in Chromium).
    this.gl.readPixels(0, 0, 1, 1, this.gl.RGBA, this.gl.UNSIGNED_BYTE, this.probe);
    const ms = Math.max(1, performance.now() - start);
    const fit = drawn * (TARGET_FRAME_MS / ms);
    const next = Math.round(this.budget * 0.5 + fit * 0.5);
    this.budget = Math.max(BUDGET_BOUNDS[0], Math.min(BUDGET_BOUNDS[1], next));
  }

  /**
   * One slice of the full-detail frame; the canvas shows it once it is whole. Large 2D
   * frames are rasterised on the CPU (renderer/cpu_detail.js), the rest by the GPU off screen.
   */
  _refine(view) {
    const gl = this.gl;
    const d = this.detailed;
    if (!d.complete) {
      if (d.offset === 0) {
        // Zoomed in: every point on screen, and none of those off it.
        d.culled = view.t >= 1 ? this.cull.select(this, view.matrix, Infinity) : null;
        d.total = d.culled ? d.culled.count : this.n;
        d.cpu = d.total > CPU_ABOVE && this.cpuDetail.suits(this, view);
        if (d.cpu) this.cpuDetail.begin(this, view);
      }
      this.cpuStep ??= CPU_SLICE;
      const step = d.cpu ? this.cpuStep : this.budget * 2; // twice a moving frame: hover stays responsive
      const count = Math.min(step, d.total - d.offset);
      if (d.cpu) {
        const began = performance.now();
        this.cpuDetail.draw(this, view, d.culled?.ranks ?? null, d.offset, d.offset + count);
        const ms = Math.max(1, performance.now() - began);
        // Towards CPU_SLICE_MS a slice, from what this one took.
        if (count >= step) this.cpuStep = Math.round(Math.max(CPU_SLICE / 8, Math.min(CPU_SLICE * 4, (step * 0.5) + (step * CPU_SLICE_MS / ms) * 0.5)));
      } else {
        this.detail.bind(this.canvas.width, this.canvas.height);
        if (d.offset === 0) this._clear();
        view.start = d.offset;
        view.count = count;
        view.elements = d.culled ? d.culled.buffer : null;
        this._renderLayers(view, 'base');
        view.elements = null;
        gl.bindFramebuffer(gl.FRAMEBUFFER, null);
      }
      d.offset += count;
      d.complete = d.offset >= d.total;
      if (d.complete) {
        if (d.cpu) this.cpuDetail.finish(this, view);
        this.drawn = d.total;
        this.presentPending = true;
      } else {
        this._schedule();
      }
    }
    if (!this.presentPending) return;
    const top = { ...view, start: 0, count: this.n };
    if (d.complete) {
      gl.viewport(0, 0, this.canvas.width, this.canvas.height);
      this._clear();
      (d.cpu ? this.cpuDetail : this.detail).present();
      top.sampled = true; // highlighted points go on top of the finished frame as well
      this._renderLayers(top, 'top');
    } else {
      this._drawOnCanvas(top, this.budget);
    }
  }
}
