// The Plot's frame loop, a part of the Plot (plot.js): frames on demand at the next animation
// frame (and once more when the view has been still long enough for full detail), each
// frame's view (camera, sizes, theme) drawn by the plot's PointSource over the layers in two
// passes ('base': the points; 'top': what shows over any sample), and the moving frame's
// point budget, adapted to the measured frame time.

import { pointScale } from './camera.js';
import { MARKED_THUMBNAILS } from './renderer/sprites.js';

/** Points a moving frame draws at first: about 70 ms of software GL at 1.2 us a point. */
export const FRAME_BUDGET = 60000;
/** The budget follows the measured frame time towards this (ms), within the bounds. */
const TARGET_FRAME_MS = 70;
const BUDGET_BOUNDS = [10000, 2000000];
/** The view counts as still this long after its last change. */
export const STILL_MS = 180;

/** How many rows a mark lists (an array or a set). */
const markedCount = (rows) => (Array.isArray(rows) ? rows.length : (rows?.size ?? 0));

export class PlotFrames {
  /** @param {import('./plot.js').Plot} plot */
  constructor(plot) {
    this.plot = plot;
    /** Points a moving frame draws at most (adapted to the measured frame time). */
    this.budget = FRAME_BUDGET;
    /** A frame is asked for the next animation frame. */
    this.requested = false;
    /** @type {number | null} when the first frame with points was drawn (tests, bench/) */
    this.firstFrameMs = null;
    /** @type {number[]} the last frames' durations (ms) */
    this.times = [];
    this.probe = new Uint8Array(4);
    Object.seal(this);
  }

  /** A frame at the next animation frame. */
  schedule() {
    if (this.requested) return;
    this.requested = true;
    requestAnimationFrame(() => {
      this.requested = false;
      this.draw();
    });
  }

  /** A frame once the view has been still long enough for full detail. */
  scheduleStill() {
    setTimeout(() => this.schedule(), STILL_MS);
  }

  /** One frame: the plot's source draws it (a sample while moving, full detail once still). */
  draw() {
    const plot = this.plot;
    if (!plot.theme) return;
    const start = performance.now();
    plot.resize();
    const view = this.view();
    const moving = view.t < 1 || start - plot.lastChange < STILL_MS;
    plot.source.drawFrame(plot, view, moving, start);
    plot.presentPending = false;
    if (view.t < 1) plot.requestRender();
    if ((plot.n || plot.preview.count || plot.drawn) && this.firstFrameMs === null) {
      plot.gl.finish();
      this.firstFrameMs = performance.now();
    }
    this.times.push(performance.now() - start);
    if (this.times.length > 600) this.times.splice(0, 300);
  }

  /**
   * Moves the budget towards what fits a frame on this machine now (software GL on a busy
   * CPU draws several times slower than on an idle one), from the time the frame took.
   */
  adaptBudget(start, drawn) {
    if (this.budget === Infinity || drawn < BUDGET_BOUNDS[0]) return;
    const gl = this.plot.gl;
    // Reading a pixel waits for the frame's drawing (gl.finish() does not, in Chromium).
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, this.probe);
    const ms = Math.max(1, performance.now() - start);
    const fit = drawn * (TARGET_FRAME_MS / ms);
    const next = Math.round(this.budget * 0.5 + fit * 0.5);
    this.budget = Math.max(BUDGET_BOUNDS[0], Math.min(BUDGET_BOUNDS[1], next));
  }

  /** Clears the bound framebuffer to the theme's background and sets the blending. */
  clear() {
    const gl = this.plot.gl;
    const [r, g, b] = this.plot.theme.background;
    gl.clearColor(r, g, b, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.depthFunc(gl.LEQUAL);
    gl.enable(gl.BLEND);
    gl.blendFuncSeparate(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA, gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
  }

  /** Every layer's `pass` ('base': the points; 'top': what shows over any sample). */
  renderLayers(view, pass) {
    view.pass = pass;
    for (const layer of this.plot.layers) layer.render(view);
  }

  /** What a frame draws with: the camera's matrix, point sizes, highlights, the theme. */
  view() {
    const plot = this.plot;
    const theme = plot.theme;
    const atlas = plot.spriteLayer.atlas;
    return {
      matrix: plot.matrix(),
      t: plot.transitionT(),
      size: plot.sprites && atlas ? plot.size * 3.6 : plot.size,
      scale: pointScale(plot.camera, plot.threeD) * (plot.dpr || 1),
      sampleSize: 1,
      threeD: plot.threeD,
      hover: plot.hover,
      rank: plot.rank,
      hasSelection: plot.hasSelection,
      ringSelected: markedCount(plot.marks?.selected) <= MARKED_THUMBNAILS,
      plain: plot.plain,
      sprites: plot.sprites,
      spriteAtlas: atlas,
      dim: theme.dim,
      selectedColor: theme.selected,
      hoverColor: theme.hovered,
      ringColor: theme.ring,
      inkColor: theme.text,
      background: theme.background,
      start: 0,
      count: plot.n,
      sampled: false,
      pass: 'base',
      elements: null,
      tiles: null,
      ranges: null,
    };
  }
}
