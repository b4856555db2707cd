// The plot: a WebGL2 canvas whose drawing is done by layers sharing one camera (points,
// sprites, picking, labels, selection; `addLayer` takes more). Every layer implements one
// contract, as vz_projector's ScatterPlotVisualizer:
//   setScene(plot)                        once, when added: gl, canvases, the plot's state
//   onPositionsChanged(to, from, order)   new positions (the points' own order), draw order
//   render(view)                          twice a frame: view.pass 'base' then 'top'
//   onResize(width, height, dpr)          CSS size of the plot and device pixel ratio
//   dispose()
// and the plot loops over them. The points come from one PointSource (points/point_source.js):
// the whole array, in the plot's own buffers (ArrayPoints: a draw order whose every prefix is
// an even sample, the server's LOD order), or tiles (TilePoints). The source draws each frame
// (while the view moves a sample of at most `budget` points, drawn a little larger; once it
// is still, the full-detail frame built off screen and shown in one copy), answers picks and
// regions, and paints the page's colours and marks. Input in plot_input.js. Renders on demand.

import { defaultCamera, pointScale, viewProjection } from './camera.js';
import { PlotFrames } from './plot_frames.js';
import { PlotInput } from './plot_input.js';
import { ArrayPoints } from './points/array_points.js';
import { CPU_SLICE, CpuDetail } from './renderer/cpu_detail.js';
import { ViewCull } from './renderer/cull.js';
import { DetailBuffer } from './renderer/detail.js';
import { inverseOrder, randomOrder } from './renderer/lod.js';
import { LabelLayer } from './renderer/labels.js';
import { PickingLayer } from './renderer/picking.js';
import { PointLayer } from './renderer/points.js';
import { PreviewLayer } from './renderer/preview.js';
import { SelectionLayer } from './renderer/selection.js';
import { SpriteLayer } from './renderer/sprites.js';
import { uniformTileColoring } from './tiles/coloring.js';
import { NO_MARKS } from './tiles/paint.js';

const TRANSITION_MS = 700;

const ease = (t) => (t < 0.5 ? 4 * t * t * t : 1 - (-2 * t + 2) ** 3 / 2);

/** Point size in CSS pixels for n points: big for small sets, small for a million. */
export function defaultPointSize(n) {
  return Math.max(1.6, Math.min(9, 26 / Math.log10(Math.max(10, n)) ** 1.25));
}

export class Plot {
  /**
   * `callbacks`: hover(index | -1), click(index | -1, event), region(indices, event),
   * camera(camera), describe(index) -> tooltip text.
   */
  constructor(container, callbacks) {
    this.container = container;
    this.callbacks = callbacks;
    this.canvas = container.querySelector('[data-testid="plot"]');
    this.overlay = container.querySelector('.plot-overlay');
    this.tooltip = container.querySelector('.plot-tooltip');
    const gl = this.canvas.getContext('webgl2', { antialias: false, alpha: false, powerPreference: 'high-performance' });
    if (!gl) throw new Error('this browser has no WebGL2');
    this.gl = gl;
    /** The frame loop: frames on demand, the moving frame's budget (plot_frames.js). */
    this.frames = new PlotFrames(this);
    this.n = 0;
    /** @type {Float32Array} the whole array's positions in the buffers (n x 3) */
    this.positions = new Float32Array(0);
    /** @type {Float32Array | null} where a transition starts */
    this.fromPositions = null;
    /** @type {Int32Array | null} the draw order */
    this.order = null;
    /** @type {Int32Array | null} its inverse */
    this.rank = null;
    /** @type {Uint8Array} */
    this.flags = new Uint8Array(0);
    this.threeD = false;
    this.camera = defaultCamera();
    this.hover = -1;
    this.hasSelection = false;
    this.plain = true;
    this.sprites = false;
    this.size = 4;
    this.tool = 'navigate';
    this.labelCandidates = [];
    this.region = null;
    this.transitionStart = 0;
    this.theme = null;
    this.lastChange = 0;
    this.detailed = { offset: 0, complete: false };
    /** Points the canvas shows now (a sample, those on screen, or all). */
    this.drawn = 0;
    this.presentPending = true;
    this.cssWidth = 0; // the canvas's CSS size and pixel ratio, once _resize has measured them
    this.cssHeight = 0;
    this.dpr = 0;
    this.cpuStep = CPU_SLICE; // points a slice of the CPU still frame draws (ArrayPoints)
    this.detail = new DetailBuffer(gl);
    this.cull = new ViewCull(gl);
    this.cpuDetail = new CpuDetail(gl);
    this.layers = [];
    this.points = new PointLayer();
    this.spriteLayer = new SpriteLayer(this.points);
    this.picking = new PickingLayer();
    this.labels = new LabelLayer();
    this.selection = new SelectionLayer(this.points);
    this.preview = new PreviewLayer();
    /** @type {import('./points/point_source.js').PointSource} where the points come from */
    this.source = /** @type {import('./points/point_source.js').PointSource} */ (new ArrayPoints(this.positions));
    /** @type {import('./points/point_source.js').Coloring} the page's colours, for sources to come too */
    this.coloring = /** @type {import('./points/point_source.js').Coloring} */ (uniformTileColoring());
    /** @type {import('./points/point_source.js').Marks} the page's marks, for sources to come too */
    this.marks = { ...NO_MARKS, selected: [] };
    for (const layer of [this.preview, this.points, this.spriteLayer, this.picking, this.labels, this.selection]) this.addLayer(layer);
    this.source.attach(this);
    this.input = new PlotInput(this);
    new ResizeObserver(() => this._changed()).observe(container);
  }

  /**
   * Adds a layer (the contract above); it draws from the next frame on. `moving`: the next
   * frames draw a sample until the view is still (a source's own layer: straight to full detail).
   */
  addLayer(layer, { moving = true } = {}) {
    layer.setScene(this);
    this.layers.push(layer);
    if (this.n) layer.onPositionsChanged(this.positions, this.fromPositions ?? this.positions, this.order);
    if (this.cssWidth) layer.onResize(this.cssWidth, this.cssHeight, this.dpr);
    this._changed({ moving });
  }

  /** Takes a layer out and frees what it holds. */
  removeLayer(layer) {
    this.layers = this.layers.filter((l) => l !== layer);
    layer.dispose();
    this._changed({ moving: false });
  }

  // ---- data -------------------------------------------------------------------------

  /**
   * Shows `source`'s points (the whole array or tiles) from now on; `animate` and `order`
   * for the whole array (see loadPositions).
   * @param {import('./points/point_source.js').PointSource} source
   * @param {{ animate?: boolean, order?: Int32Array | null }} [options]
   */
  setSource(source, options = {}) {
    if (source !== this.source) this.source.detach();
    this.source = source;
    source.attach(this, options);
  }

  /**
   * The whole array's `positions` (n x 3, fitted to the unit cube), without a projection's
   * rows missing (the comparison page, a new draw order of the same positions).
   * @param {Float32Array} positions
   * @param {{ animate?: boolean, order?: Int32Array | null }} [options]
   */
  setPositions(positions, options = {}) {
    // The positions in the buffers now are the shown source's (a new draw order of them).
    this.setSource(positions === this.positions ? this.source : new ArrayPoints(positions), options);
  }

  /** Shows no points (a data set opens, another projection's picture goes). */
  clearPoints() {
    this.setPositions(new Float32Array(0));
  }

  /**
   * The whole array into the plot's buffers (ArrayPoints.attach; empty for tiles);
   * `animate` glides from the current ones; `order` is the draw order (an Int32Array
   * permutation whose prefixes are even samples); without one, the current order of as many
   * points, or a random one when a frame cannot draw every point. `keepPreview`: the first
   * picture stays (tiles replace it as they come).
   * @param {Float32Array} positions
   * @param {{ animate?: boolean, order?: Int32Array | null, keepPreview?: boolean }} [options]
   */
  loadPositions(positions, { animate = false, order = null, keepPreview = false } = {}) {
    if (!keepPreview) this.preview.clear();
    const n = positions.length / 3;
    if (!order || order.length !== n) order = this.order?.length === n ? this.order : null;
    if (!order && n > this.frames.budget) order = randomOrder(n);
    const sameSize = positions.length === this.positions.length;
    const from = animate && sameSize && this.n ? this.currentPositions() : positions;
    this.fromPositions = from === positions ? null : from;
    this.positions = positions;
    this.n = n;
    if (order !== this.order) {
      this.order = order;
      this.rank = order ? inverseOrder(order) : null;
    }
    this.cull.invalidate(this);
    for (const layer of this.layers) layer.onPositionsChanged(positions, from, order);
    this.transitionStart = this.fromPositions ? performance.now() : 0;
    this._changed({ moving: !keepPreview }); // tiles: the camera stays, straight to the still frame
  }

  /** How far the transition between two positions is (0..1; 1: none). */
  transitionT() {
    if (!this.fromPositions) return 1;
    const t = (performance.now() - this.transitionStart) / TRANSITION_MS;
    if (t >= 1) {
      this.fromPositions = null;
      for (const layer of this.layers) layer.onPositionsChanged(this.positions, this.positions, this.order);
      return 1;
    }
    return ease(t);
  }

  currentPositions() {
    if (!this.fromPositions) return this.positions;
    const t = ease(Math.min(1, (performance.now() - this.transitionStart) / TRANSITION_MS));
    const out = new Float32Array(this.positions.length);
    for (let i = 0; i < out.length; i++) out[i] = this.fromPositions[i] + (this.positions[i] - this.fromPositions[i]) * t;
    return out;
  }

  /**
   * A first picture before the positions: `positions` (count x 3, fitted as the whole set
   * will be) of the points `indices` (the head of the level-of-detail order) out of `total`.
   * Shown until setPositions; nothing in it is picked.
   */
  setPreview(positions, indices, total) {
    this.preview.show(positions, indices, total, this.points.colors);
    this._changed();
  }

  /**
   * One RGBA per point of the whole array (`plain`: every point in the default colour).
   * @param {Uint8Array} colors
   */
  setColors(colors, { plain = this.plain } = {}) {
    this.plain = plain;
    this.preview.setColors(colors);
    this.points.setColors(colors);
    this._changed({ moving: false });
  }

  /**
   * One flag byte per point of the whole array.
   * @param {Uint8Array} flags
   */
  setFlags(flags, hasSelection = this.hasSelection) {
    this.flags = flags;
    this.hasSelection = hasSelection;
    this.points.setFlags(flags);
    this.selection.setHighlighted(flags, this.rank, this.frames.budget);
    this._changed({ moving: false });
  }

  /**
   * The page's colours (point_source.js Coloring), painted by the source now and by
   * sources to come.
   * @param {import('./points/point_source.js').Coloring} coloring
   */
  setColoring(coloring) {
    this.coloring = coloring;
    this.plain = coloring.kind === 'none';
    this.source.setColoring(coloring);
    this._changed({ moving: false });
  }

  /**
   * The page's marks (point_source.js Marks): selection, neighbours, isolated rows.
   * @param {import('./points/point_source.js').Marks} marks
   * @param {boolean} hasSelection  others are dimmed
   */
  setMarks(marks, hasSelection) {
    this.marks = marks;
    this.hasSelection = hasSelection;
    this.source.setMarks(marks);
    this._changed({ moving: false });
  }

  /** `atlas` from loadSpriteAtlas (renderer/sprite_atlas.js), or null for none. */
  setSprite(atlas) {
    if (atlas) this.spriteLayer.setSprite(atlas);
    else this.spriteLayer.clearSprite();
    this._changed({ moving: false });
  }

  setShowSprites(show) {
    this.sprites = show;
    this._changed({ moving: false });
  }

  setPointSize(size) {
    this.size = size;
    this._changed({ moving: false });
  }

  /** Labels to draw: [{ index, text, priority, strong }], lowest priority value first. */
  setLabels(candidates) {
    this.labelCandidates = candidates;
    this.requestRender();
  }

  setTheme(theme) {
    this.theme = theme;
    this._changed({ moving: false });
  }

  setHover(index) {
    if (index === this.hover) return;
    this.hover = index;
    this.requestRender();
  }

  // ---- camera -----------------------------------------------------------------------

  setMode(threeD) {
    this.threeD = threeD;
    this._changed();
  }

  setCamera(camera) {
    this.camera = camera;
    this._changed();
  }

  resetView() {
    this._moveCamera(defaultCamera());
  }

  _moveCamera(camera) {
    this.setCamera(camera);
    this.callbacks.camera(camera);
  }

  _aspect() {
    return Math.max(1e-3, this.canvas.clientWidth / Math.max(1, this.canvas.clientHeight));
  }

  matrix() {
    return viewProjection(this.camera, this.threeD, this._aspect());
  }

  setTool(tool) {
    this.tool = tool;
    this.canvas.style.cursor = tool === 'navigate' ? '' : 'crosshair';
    for (const button of this.container.querySelectorAll('[data-tool]')) {
      button.classList.toggle('active', button.dataset.tool === tool);
      button.setAttribute('aria-pressed', String(button.dataset.tool === tool));
    }
  }

  // ---- rendering --------------------------------------------------------------------

  /**
   * Something the full-detail frame depends on changed: start it over. `moving` (camera,
   * positions) also means the next frames draw a sample until the view is still.
   */
  _changed({ moving = true } = {}) {
    if (moving) this.lastChange = performance.now();
    this.detailed = { offset: 0, complete: false };
    this.picking.invalidate();
    this.requestRender();
  }

  /** Redraws the canvas at the next animation frame (hover, labels, outline changed). */
  requestRender() {
    this.presentPending = true;
    this.frames.schedule();
  }

  /**
   * New points came (a tile): the still frame starts over off screen while the canvas keeps
   * what it shows (redrawing it would make the page wait for the GPU), unless it shows nothing.
   */
  restartStill() {
    this.detailed = { offset: 0, complete: false };
    if (!this.drawn) this.presentPending = true;
    this.frames.schedule();
  }

  /** The canvas's size in device pixels, from its CSS size and the pixel ratio. */
  resize() {
    const dpr = window.devicePixelRatio || 1;
    const width = this.canvas.clientWidth;
    const height = this.canvas.clientHeight;
    const w = Math.max(1, Math.round(width * dpr));
    const h = Math.max(1, Math.round(height * dpr));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
      this.cssWidth = width;
      this.cssHeight = height;
      this.dpr = dpr;
      for (const layer of this.layers) layer.onResize(width, height, dpr);
      this.detailed = { offset: 0, complete: false };
      this.picking.invalidate();
    }
    this.dpr = dpr;
  }

  /** Whether the canvas shows every point (not a sample). */
  get fullDetail() {
    return this.n <= this.frames.budget || this.detailed.complete;
  }

  // ---- picking and regions ---------------------------------------------------------------

  _local(event) {
    const rect = this.canvas.getBoundingClientRect();
    return [event.clientX - rect.left, event.clientY - rect.top];
  }

  /** The point under CSS pixel (x, y), or -1 (a Promise when the server answers): exact over all points. */
  pickAt(x, y) {
    this.resize();
    const scale = pointScale(this.camera, this.threeD);
    const radius = Math.max(4, this.threeD ? 4 : (this.size * scale * (this.sprites && this.spriteLayer.atlas ? 3.6 : 1)) / 2);
    return this.source.pick(this, x, y, radius);
  }

  /**
   * Rows of visible points inside a box or lasso (CSS pixels); a Promise when the server answers.
   * @param {import('./points/point_source.js').Region} region
   */
  pointsInRegion(region) {
    return this.source.region(this, region);
  }
}
