// The label layer, on the 2D overlay over the WebGL canvas: point labels (hovered,
// selected, neighbours) placed with a collision grid. It clears the overlay each frame; the
// selection layer draws its outline after it. Canvas text is drawn by the browser's font
// stack, so every script and emoji shows.

import { toScreen } from '../camera.js';
import { layoutLabels } from '../geometry.js';

const FONT_SIZE = 12;
const WIDTH_CACHE_LIMIT = 20000;

export class LabelLayer {
  constructor() {
    this.widths = new Map();
    this.dpr = 1;
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    this.plot = plot;
    this.canvas = plot.overlay;
    this.ctx = this.canvas.getContext('2d');
  }

  onPositionsChanged() {}

  /** Places the plot's label candidates at their points' screen positions and draws them. */
  render(view) {
    if (view.pass !== 'top') return;
    const plot = this.plot;
    const candidates = [];
    for (const c of plot.source.labelPositions(plot.labelCandidates, view.t)) {
      const s = toScreen(view.matrix, c.at[0], c.at[1], c.at[2], this.width, this.height);
      if (s) candidates.push({ ...c, x: s[0], y: s[1] });
    }
    this.draw(candidates, plot.theme);
  }

  dispose() {
    this.widths.clear();
  }

  onResize(width, height, dpr) {
    this.dpr = dpr;
    this.width = width;
    this.height = height;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.widths.clear();
  }

  _font(weight) {
    return `${weight} ${FONT_SIZE}px system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "Noto Color Emoji", sans-serif`;
  }

  _measure(text) {
    let w = this.widths.get(text);
    if (w === undefined) {
      w = this.ctx.measureText(text).width;
      if (this.widths.size > WIDTH_CACHE_LIMIT) this.widths.clear();
      this.widths.set(text, w);
    }
    return w;
  }

  /**
   * Draws the labels: candidates { x, y, text, priority, strong } in CSS pixels, the most
   * important first when they collide.
   */
  draw(candidates, theme) {
    const ctx = this.ctx;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.clearRect(0, 0, this.width, this.height);
    ctx.font = this._font(500);
    ctx.textBaseline = 'middle';
    const kept = layoutLabels(candidates, (t) => this._measure(t), {
      width: this.width,
      height: this.height,
      fontSize: FONT_SIZE,
    });
    for (const label of kept) {
      const { x, y, w, h } = label.box;
      ctx.fillStyle = label.strong ? theme.labelStrongBackground : theme.labelBackground;
      ctx.strokeStyle = theme.labelBorder;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.roundRect(x, y, w, h, 3);
      ctx.fill();
      ctx.stroke();
      ctx.fillStyle = label.strong ? theme.labelStrongText : theme.labelText;
      ctx.fillText(label.text, x + 3, y + h / 2 + 0.5);
    }
    return kept.length;
  }
}
