// The plot: a WebGL2 canvas with the point layer, the label overlay and GPU picking sharing
// one camera; mouse and wheel control the camera; hover, click, box and lasso report
// through callbacks. Renders on demand (one requestAnimationFrame per change).

import { defaultCamera, orbit, pan, pointScale, toScreen, viewProjection, zoom } from './camera.js';
import { pointsInPolygon, pointsInRect, projectPoints } from './geometry.js';
import { LabelLayer } from './renderer/labels.js';
import { PickingBuffer } from './renderer/picking.js';
import { FLAG_HIDDEN, PointLayer } from './renderer/points.js';

const TRANSITION_MS = 700;
const CLICK_SLOP = 4;

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
    this.points = new PointLayer(gl);
    this.picking = new PickingBuffer(gl);
    this.labels = new LabelLayer(this.overlay);
    this.n = 0;
    this.positions = new Float32Array(0);
    this.fromPositions = null;
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
    this._bindEvents();
    this._bindToolbar();
    new ResizeObserver(() => this.requestRender()).observe(container);
  }

  // ---- data -------------------------------------------------------------------------

  /** New positions (n x 3, fitted to the unit cube); `animate` glides from the current ones. */
  setPositions(positions, { animate = false } = {}) {
    const sameSize = positions.length === this.positions.length;
    const from = animate && sameSize && this.n ? this._currentPositions() : positions;
    this.fromPositions = from === positions ? null : from;
    this.positions = positions;
    this.n = positions.length / 3;
    this.points.setPositions(positions, from);
    this.transitionStart = this.fromPositions ? performance.now() : 0;
    this.picking.invalidate();
    this.requestRender();
  }

  _transitionT() {
    if (!this.fromPositions) return 1;
    const t = (performance.now() - this.transitionStart) / TRANSITION_MS;
    if (t >= 1) {
      this.fromPositions = null;
      this.points.setPositions(this.positions);
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

  setColors(colors, { plain }) {
    this.plain = plain;
    this.points.setColors(colors);
    this.requestRender();
  }

  setFlags(flags, hasSelection) {
    this.flags = flags;
    this.hasSelection = hasSelection;
    this.points.setFlags(flags);
    this.picking.invalidate();
    this.requestRender();
  }

  /** `atlas` from loadSpriteAtlas (renderer/sprite_atlas.js), or null for none. */
  setSprite(atlas) {
    if (atlas) this.points.setSprite(atlas);
    else this.points.clearSprite();
    this.requestRender();
  }

  setShowSprites(show) {
    this.sprites = show;
    this.picking.invalidate();
    this.requestRender();
  }

  setPointSize(size) {
    this.size = size;
    this.picking.invalidate();
    this.requestRender();
  }

  /** Labels to draw: [{ index, text, priority, strong }], lowest priority value first. */
  setLabels(candidates) {
    this.labelCandidates = candidates;
    this.requestRender();
  }

  setTheme(theme) {
    this.theme = theme;
    this.requestRender();
  }

  setHover(index) {
    if (index === this.hover) return;
    this.hover = index;
    this.requestRender();
  }

  // ---- camera -----------------------------------------------------------------------

  setMode(threeD) {
    this.threeD = threeD;
    this.picking.invalidate();
    this.requestRender();
  }

  setCamera(camera) {
    this.camera = camera;
    this.picking.invalidate();
    this.requestRender();
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

  _bindToolbar() {
    for (const button of this.container.querySelectorAll('[data-tool]')) {
      button.addEventListener('click', () => this.setTool(button.dataset.tool));
    }
    this.container.querySelector('[data-testid="reset-view"]').addEventListener('click', () => this.resetView());
  }

  // ---- rendering --------------------------------------------------------------------

  requestRender() {
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
      this.labels.resize(width, height, dpr);
      this.picking.invalidate();
    }
    this.dpr = dpr;
  }

  _view(picking = false) {
    const theme = this.theme;
    return {
      matrix: this.matrix(),
      t: this._transitionT(),
      size: this.sprites && this.points.atlas ? this.size * 3.6 : this.size,
      scale: pointScale(this.camera, this.threeD) * (this.dpr || 1),
      threeD: this.threeD,
      hover: picking ? -1 : this.hover,
      hasSelection: this.hasSelection,
      plain: this.plain,
      sprites: this.sprites,
      picking,
      dim: theme.dim,
      selectedColor: theme.selected,
      hoverColor: theme.hovered,
      ringColor: theme.ring,
      background: theme.background,
    };
  }

  _draw() {
    if (!this.theme) return;
    const start = performance.now();
    const gl = this.gl;
    this._resize();
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    const [r, g, b] = this.theme.background;
    gl.clearColor(r, g, b, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.depthFunc(gl.LEQUAL);
    gl.enable(gl.BLEND);
    gl.blendFuncSeparate(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA, gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    const view = this._view();
    this.points.draw(view);
    if (view.t < 1) this.picking.invalidate();
    this._drawLabels();
    if (view.t < 1) this.requestRender();
    if (this.n && this.firstFrameMs === null) {
      gl.finish();
      this.firstFrameMs = performance.now();
    }
    this.frameTimes.push(performance.now() - start);
    if (this.frameTimes.length > 600) this.frameTimes.splice(0, 300);
  }

  _drawLabels() {
    const m = this.matrix();
    const width = this.canvas.clientWidth;
    const height = this.canvas.clientHeight;
    const to = this.positions;
    const from = this.fromPositions ?? to;
    const t = this.fromPositions ? ease(Math.min(1, (performance.now() - this.transitionStart) / TRANSITION_MS)) : 1;
    const at = (k) => from[k] + (to[k] - from[k]) * t;
    const candidates = [];
    for (const c of this.labelCandidates) {
      const i = c.index;
      if (i < 0 || i >= this.n || this.flags[i] & FLAG_HIDDEN) continue;
      const s = toScreen(m, at(i * 3), at(i * 3 + 1), at(i * 3 + 2), width, height);
      if (s) candidates.push({ ...c, x: s[0], y: s[1] });
    }
    this.labels.draw(candidates, this.region, this.theme);
  }

  // ---- interaction ------------------------------------------------------------------

  _local(event) {
    const rect = this.canvas.getBoundingClientRect();
    return [event.clientX - rect.left, event.clientY - rect.top];
  }

  /** The point under CSS pixel (x, y), or -1: one small read of the id buffer. */
  pickAt(x, y) {
    if (!this.n) return -1;
    this._resize();
    const dpr = this.dpr || 1;
    return this.picking.pick(x * dpr, y * dpr, Math.ceil(4 * dpr), this.canvas.width, this.canvas.height, () =>
      this.points.draw(this._view(true)),
    );
  }

  /** Indices of visible points inside a box or lasso (CSS pixels): one projection pass. */
  pointsInRegion(region) {
    const screen = projectPoints(this._currentPositions(), this.matrix(), this.canvas.clientWidth, this.canvas.clientHeight);
    const hidden = (i) => (this.flags[i] & FLAG_HIDDEN) !== 0;
    if (region.kind === 'box') {
      return pointsInRect(screen, region.points[0], region.points[region.points.length - 1], hidden);
    }
    return pointsInPolygon(screen, region.points, hidden);
  }

  _bindEvents() {
    const canvas = this.canvas;
    let drag = null;
    let hoverPending = null;
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('pointerdown', (event) => {
      canvas.setPointerCapture(event.pointerId);
      const at = this._local(event);
      const regionTool = this.tool !== 'navigate' || event.shiftKey;
      const kind = this.tool === 'lasso' ? 'lasso' : 'box';
      const panning = event.button === 2 || event.button === 1 || event.ctrlKey || event.metaKey;
      drag = { start: at, last: at, moved: false, region: regionTool && event.button === 0 ? kind : null, panning };
      if (drag.region) this.region = { kind: drag.region, points: [at] };
      this.tooltip.hidden = true;
    });
    canvas.addEventListener('pointermove', (event) => {
      const at = this._local(event);
      if (drag) {
        const dx = at[0] - drag.last[0];
        const dy = at[1] - drag.last[1];
        if (Math.hypot(at[0] - drag.start[0], at[1] - drag.start[1]) > CLICK_SLOP) drag.moved = true;
        drag.last = at;
        if (drag.region) {
          if (drag.region === 'box') this.region.points = [drag.start, at];
          else this.region.points.push(at);
          this.requestRender();
        } else if (drag.moved) {
          const height = canvas.clientHeight;
          const next =
            this.threeD && !drag.panning
              ? orbit(this.camera, dx, dy)
              : pan(this.camera, this.threeD, dx, dy, height, this._aspect());
          this._moveCamera(next);
        }
        return;
      }
      hoverPending = at;
      requestAnimationFrame(() => {
        if (!hoverPending) return;
        const [x, y] = hoverPending;
        hoverPending = null;
        const index = this.pickAt(x, y);
        this._showTooltip(index, x, y);
        if (index !== this.hover) {
          this.setHover(index);
          this.callbacks.hover(index);
        }
      });
    });
    const finish = (event) => {
      if (!drag) return;
      const d = drag;
      drag = null;
      if (d.region) {
        const region = this.region;
        this.region = null;
        this.requestRender();
        if (d.moved) this.callbacks.region(this.pointsInRegion(region), event);
        else this.callbacks.click(this.pickAt(...d.start), event);
      } else if (!d.moved && event.button === 0) {
        this.callbacks.click(this.pickAt(...d.start), event);
      }
    };
    canvas.addEventListener('pointerup', finish);
    canvas.addEventListener('pointercancel', () => {
      drag = null;
      this.region = null;
      this.requestRender();
    });
    canvas.addEventListener('pointerleave', () => {
      this.tooltip.hidden = true;
      if (this.hover !== -1 && !drag) {
        this.setHover(-1);
        this.callbacks.hover(-1);
      }
    });
    canvas.addEventListener(
      'wheel',
      (event) => {
        event.preventDefault();
        const [x, y] = this._local(event);
        const factor = Math.exp(-event.deltaY * (event.deltaMode === 1 ? 0.05 : 0.0015));
        const ndcX = (x / canvas.clientWidth) * 2 - 1;
        const ndcY = 1 - (y / canvas.clientHeight) * 2;
        this._moveCamera(zoom(this.camera, this.threeD, factor, ndcX, ndcY, this._aspect()));
      },
      { passive: false },
    );
  }

  _showTooltip(index, x, y) {
    const tip = this.tooltip;
    if (index < 0) {
      tip.hidden = true;
      return;
    }
    tip.textContent = this.callbacks.describe(index);
    tip.hidden = false;
    const maxX = this.canvas.clientWidth - tip.offsetWidth - 8;
    tip.style.left = `${Math.min(x + 14, maxX)}px`;
    tip.style.top = `${Math.max(4, y - 30)}px`;
  }
}
