// The plot: a WebGL2 canvas whose drawing is done by layers sharing one camera (points,
// sprites, picking, labels, selection; `addLayer` takes more). Every layer implements one
// contract, as vz_projector's ScatterPlotVisualizer:
//   setScene(plot)                        once, when added: gl, canvases, the plot's state
//   onPositionsChanged(to, from, order)   new positions (the points' own order), draw order
//   render(view)                          twice a frame: view.pass 'base' then 'top'
//   onResize(width, height, dpr)          CSS size of the plot and device pixel ratio
//   dispose()
// and the plot loops over them. Picking needs no render pass of its own: the picking layer
// finds points on the CPU over all of them. Level of detail: the points sit in the GPU in a draw order
// whose every prefix is an even sample (the server's LOD order), so while the view moves a
// frame draws at most `budget` points, drawn a little larger so that the sample looks like
// the whole; once the view is still, the full-detail frame builds off screen a slice per
// animation frame and replaces the sample in one copy (plot_frames.js); input in
// plot_input.js. Renders on demand.

import { defaultCamera, pointScale, viewProjection } from './camera.js';
import { pointsInPolygon, pointsInRect } from './geometry.js';
import { mixin } from './mixin.js';
import { PlotFrames } from './plot_frames.js';
import { PlotInput } from './plot_input.js';
import { PlotTiles } from './tiles/frames.js';
import { CpuDetail } from './renderer/cpu_detail.js';
import { ViewCull } from './renderer/cull.js';
import { DetailBuffer } from './renderer/detail.js';
import { inverseOrder, randomOrder } from './renderer/lod.js';
import { LabelLayer } from './renderer/labels.js';
import { PickingLayer } from './renderer/picking.js';
import { FLAG_HIDDEN, PointLayer } from './renderer/points.js';
import { PreviewLayer } from './renderer/preview.js';
import { SelectionLayer } from './renderer/selection.js';
import { SpriteLayer } from './renderer/sprites.js';
import { TileLayer } from './tiles/layer.js';

const TRANSITION_MS = 700;
/** Points a moving frame draws at first: about 70 ms of software GL at 1.2 us a point. */
export const FRAME_BUDGET = 60000;

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
    this.n = 0;
    this.positions = new Float32Array(0);
    this.fromPositions = null;
    this.order = null;
    this.rank = null;
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
    this.frameRequested = false;
    this.firstFrameMs = null;
    this.frameTimes = [];
    this.theme = null;
    this.budget = FRAME_BUDGET;
    this.probe = new Uint8Array(4);
    this.lastChange = 0;
    this.detailed = { offset: 0, complete: false };
    /** Points the canvas shows now (a sample, those on screen, or all). */
    this.drawn = 0;
    this.presentPending = true;
    this.cssWidth = 0; // the canvas's CSS size and pixel ratio, once _resize has measured them
    this.cssHeight = 0;
    this.dpr = 0;
    this.cpuStep = null; // points a slice of the CPU still frame draws (plot_frames.js)
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
    /** A projection shown from its tiles (tiled_projection.js, plot_tiles.js), or null. */
    this.tiles = null;
    this.tileLayer = new TileLayer();
    for (const layer of [this.preview, this.tileLayer, this.points, this.spriteLayer, this.picking, this.labels, this.selection]) this.addLayer(layer);
    this.input = new PlotInput(this);
    new ResizeObserver(() => this._changed()).observe(container);
  }

  /** Adds a layer (the contract above); it draws from the next frame on. */
  addLayer(layer) {
    layer.setScene(this);
    this.layers.push(layer);
    if (this.n) layer.onPositionsChanged(this.positions, this.fromPositions ?? this.positions, this.order);
    if (this.cssWidth) layer.onResize(this.cssWidth, this.cssHeight, this.dpr);
    this._changed();
  }

  /** Takes a layer out and frees what it holds. */
  removeLayer(layer) {
    this.layers = this.layers.filter((l) => l !== layer);
    layer.dispose();
    this._changed({ moving: false });
  }

  // ---- data -------------------------------------------------------------------------

  /**
   * New positions (n x 3, fitted to the unit cube); `animate` glides from the current ones;
   * `order` is the draw order (an Int32Array permutation whose prefixes are even samples);
   * without one, the current order of as many points, or a random one when a frame cannot
   * draw every point.
   */
  setPositions(positions, { animate = false, order = null } = {}) {
    this.preview.clear();
    if (this.tiles) this.setTiles(null);
    const n = positions.length / 3;
    if (!order || order.length !== n) order = this.order?.length === n ? this.order : null;
    if (!order && n > this.budget) order = randomOrder(n);
    const sameSize = positions.length === this.positions.length;
    const from = animate && sameSize && this.n ? this._currentPositions() : positions;
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
    this._changed();
  }

  _transitionT() {
    if (!this.fromPositions) return 1;
    const t = (performance.now() - this.transitionStart) / TRANSITION_MS;
    if (t >= 1) {
      this.fromPositions = null;
      for (const layer of this.layers) layer.onPositionsChanged(this.positions, this.positions, this.order);
      return 1;
    }
    return ease(t);
  }

  _currentPositions() {
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

  setColors(colors, { plain }) {
    this.plain = plain;
    this.preview.setColors(colors);
    this.points.setColors(colors);
    this._changed({ moving: false });
  }

  setFlags(flags, hasSelection) {
    this.flags = flags;
    this.hasSelection = hasSelection;
    this.points.setFlags(flags);
    this.selection.setHighlighted(flags, this.rank, this.budget);
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
    this._schedule();
  }

  _schedule() {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame(() => {
      this.frameRequested = false;
      this._draw();
    });
  }

  _resize() {
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

  _view() {
    const theme = this.theme;
    const atlas = this.spriteLayer.atlas;
    return {
      matrix: this.matrix(),
      t: this._transitionT(),
      size: this.sprites && atlas ? this.size * 3.6 : this.size,
      scale: pointScale(this.camera, this.threeD) * (this.dpr || 1),
      sampleSize: 1,
      threeD: this.threeD,
      hover: this.hover,
      rank: this.rank,
      hasSelection: this.hasSelection,
      plain: this.plain,
      sprites: this.sprites,
      spriteAtlas: atlas,
      dim: theme.dim,
      selectedColor: theme.selected,
      hoverColor: theme.hovered,
      ringColor: theme.ring,
      inkColor: theme.text,
      background: theme.background,
      start: 0,
      count: this.n,
      sampled: false,
      pass: 'base',
    };
  }

  /** Whether the canvas shows every point (not a sample). */
  get fullDetail() {
    return this.n <= this.budget || this.detailed.complete;
  }

  // ---- picking and regions ---------------------------------------------------------------

  _local(event) {
    const rect = this.canvas.getBoundingClientRect();
    return [event.clientX - rect.left, event.clientY - rect.top];
  }

  /** The point under CSS pixel (x, y), or -1: exact over all points, whatever is drawn. */
  pickAt(x, y) {
    if (!this.n && !this.tiles) return -1;
    this._resize();
    const scale = pointScale(this.camera, this.threeD);
    const radius = Math.max(4, this.threeD ? 4 : (this.size * scale * (this.sprites && this.spriteLayer.atlas ? 3.6 : 1)) / 2);
    if (this.tiles) return this._pickTiled(x, y, radius); // a Promise when the server answers
    return this.picking.pick(x, y, radius);
  }

  /** Indices of visible points inside a box or lasso (CSS pixels): one projection pass. */
  pointsInRegion(region) {
    if (this.tiles) return this._regionTiled(region); // a Promise when the server answers
    const screen = this.picking.screenPositions();
    const hidden = (i) => (this.flags[i] & FLAG_HIDDEN) !== 0;
    if (region.kind === 'box') {
      return pointsInRect(screen, region.points[0], region.points[region.points.length - 1], hidden);
    }
    return pointsInPolygon(screen, region.points, hidden);
  }
}

mixin(Plot, PlotFrames);
mixin(Plot, PlotTiles);
