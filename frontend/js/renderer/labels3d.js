// The 3D labels layer (TensorBoard's "3D labels" mode): every point drawn as its label text
// at its place in the view, on a 2-D canvas of its own under the point-label overlay. Canvas
// text is plain text drawn by the browser's font stack (never parsed as HTML), so any script
// shows. Bounded for large sets: while the view moves, the first MOVING_BUDGET visible points
// of the level-of-detail draw order (an even sample); once still, up to STILL_BUDGET; drawn
// far to near, so nearer labels cover farther ones.

import { toScreen } from '../camera.js';
import { FLAG_HIDDEN } from './points.js';

export const MOVING_BUDGET = 600;
export const STILL_BUDGET = 6000;
const STILL_MS = 200; // as plot.js: the view counts as still this long after a change
const FONT_SIZE = 11;
const MAX_CHARS = 40;
const MARGIN = 40; // px: labels whose point is just off screen still show their start

/**
 * Which points get a label: walks the draw order `order` (null: a stride) and keeps the first
 * `budget` points that are not hidden and project inside the view (CSS pixels), at positions
 * mixed from `from` to `to` by `t`. Returns [{ index, x, y, depth }], farthest first.
 */
export function selectLabelPoints({ to, from = null, t = 1, n, order = null, flags = null, matrix, width, height, budget }) {
  const kept = [];
  const mix = from && from !== to && t < 1;
  const at = (k) => (mix ? from[k] + (to[k] - from[k]) * t : to[k]);
  const checkFlags = flags && flags.length === n;
  // Without a draw order, a stride through the points: the first pass is an even sample too.
  const step = order ? 1 : Math.max(1, Math.floor(n / Math.max(1, budget)));
  const rows = Math.ceil(n / step);
  for (let r = 0; r < rows * step && kept.length < budget; r++) {
    const i = order ? order[r] : (r % rows) * step + Math.floor(r / rows);
    if (i >= n) continue;
    if (checkFlags && flags[i] & FLAG_HIDDEN) continue;
    const s = toScreen(matrix, at(i * 3), at(i * 3 + 1), at(i * 3 + 2), width, height);
    if (!s || s[0] < -MARGIN || s[1] < -MARGIN || s[0] > width + MARGIN || s[1] > height + MARGIN) continue;
    kept.push({ index: i, x: s[0], y: s[1], depth: s[2] });
  }
  kept.sort((a, b) => b.depth - a.depth);
  return kept;
}

/** A label as drawn: one line, at most MAX_CHARS characters. */
export function labelText(text) {
  const line = String(text ?? '').replace(/[\r\n\t]+/g, ' ');
  return line.length > MAX_CHARS ? `${line.slice(0, MAX_CHARS - 1)}…` : line;
}

export class Labels3dLayer {
  /** `textOf(index)`: the label of a point (the current "label by" column). */
  constructor(textOf) {
    this.textOf = textOf;
    this.enabled = false;
    this.textVersion = 0;
    this.drawn = 0; // labels the last frame drew, for tests
    this.lastMs = 0; // how long choosing and drawing them took
    this.seen = null;
    this.stillTimer = 0;
    this.budgetBefore = 0;
  }

  /** On: the labels replace the discs (highlighted points still show over them). */
  setEnabled(on) {
    this.enabled = on;
    this.seen = null;
    const plot = this.plot;
    if (!plot) return;
    // Frames without discs are fast and lift the plot's point budget; the discs come back
    // with the budget they had.
    if (on) this.budgetBefore = plot.frames.budget;
    else if (this.budgetBefore) plot.frames.budget = Math.min(plot.frames.budget, this.budgetBefore);
    plot.points.hidden = on;
    plot._changed({ moving: false }); // the full-detail frame is drawn again without discs
  }

  /** The label column changed: redraw the texts. */
  textsChanged() {
    this.textVersion += 1;
    this.plot?.requestRender();
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    this.plot = plot;
    const canvas = document.createElement('canvas');
    canvas.setAttribute('aria-hidden', 'true');
    canvas.dataset.testid = 'labels3d-overlay';
    Object.assign(canvas.style, { position: 'absolute', inset: '0', width: '100%', height: '100%', pointerEvents: 'none' });
    plot.container.insertBefore(canvas, plot.overlay);
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.width = plot.cssWidth || plot.canvas.clientWidth;
    this.height = plot.cssHeight || plot.canvas.clientHeight;
    this.dpr = plot.dpr || 1;
  }

  onPositionsChanged() {}

  render(view) {
    if (view.pass !== 'top') return;
    const plot = this.plot;
    const moving = view.t < 1 || performance.now() - plot.lastChange < STILL_MS;
    const on = this.enabled && plot.n > 0;
    const key = [on, plot.positions, plot.camera, plot.flags, plot.order, plot.theme, plot.points.colors, plot.plain, this.width, this.height, this.textVersion, moving, view.t];
    if (this.seen && key.every((v, i) => v === this.seen[i])) return;
    this.seen = key;
    const ctx = this.ctx;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.clearRect(0, 0, this.width, this.height);
    this.drawn = 0;
    if (!on) return;
    const start = performance.now();
    const points = selectLabelPoints({
      to: plot.positions,
      from: plot.fromPositions,
      t: view.t,
      n: plot.n,
      order: plot.order,
      flags: plot.flags,
      matrix: view.matrix,
      width: this.width,
      height: this.height,
      budget: moving ? MOVING_BUDGET : STILL_BUDGET,
    });
    this._draw(points, view.background);
    this.lastMs = performance.now() - start;
    if (moving) this._redrawWhenStill();
  }

  onResize(width, height, dpr) {
    this.width = width;
    this.height = height;
    this.dpr = dpr;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.seen = null;
  }

  dispose() {
    clearTimeout(this.stillTimer);
    this.canvas.remove();
  }

  // ---- drawing -------------------------------------------------------------------------

  /** Labels in the points' colours when they are coloured by a column, else the text colour. */
  _draw(points, background) {
    const ctx = this.ctx;
    const dark = background.reduce((a, b) => a + b, 0) < 1.5;
    const colors = this.plot.points.colors;
    const coloured = !this.plot.plain && colors?.length === this.plot.n * 4;
    const shade = dark ? 1 : 0.7; // darker on a light background, to read as text
    ctx.font = `${FONT_SIZE}px system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "Noto Color Emoji", sans-serif`;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.lineJoin = 'round';
    ctx.lineWidth = 3;
    ctx.strokeStyle = dark ? 'rgba(20, 22, 28, 0.85)' : 'rgba(255, 255, 255, 0.85)';
    ctx.fillStyle = dark ? '#e8e8ee' : '#1f2430';
    for (const p of points) {
      const text = labelText(this.textOf(p.index));
      if (!text) continue;
      if (coloured) {
        const c = p.index * 4;
        ctx.fillStyle = `rgb(${colors[c] * shade}, ${colors[c + 1] * shade}, ${colors[c + 2] * shade})`;
      }
      ctx.strokeText(text, p.x, p.y);
      ctx.fillText(text, p.x, p.y);
      this.drawn += 1;
    }
  }

  /** A moving frame drew a sample: draw the still budget once the view settles. */
  _redrawWhenStill() {
    clearTimeout(this.stillTimer);
    this.stillTimer = setTimeout(() => this.plot.requestRender(), STILL_MS + 20);
  }
}
