// The 2D overlay over the WebGL canvas: point labels (hovered, selected, neighbours) placed
// with a collision grid, and the outline of a box or lasso being drawn. Canvas text is
// drawn by the browser's font stack, so every script and emoji shows.

import { layoutLabels } from '../geometry.js';

const FONT_SIZE = 12;
const WIDTH_CACHE_LIMIT = 20000;

export class LabelLayer {
  constructor(canvas) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.widths = new Map();
    this.dpr = 1;
  }

  resize(width, height, dpr) {
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
   * important first when they collide; `region` is a selection outline in progress.
   */
  draw(candidates, region, theme) {
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
    if (region) this._drawRegion(region, theme);
    return kept.length;
  }

  _drawRegion(region, theme) {
    const ctx = this.ctx;
    ctx.save();
    ctx.strokeStyle = theme.region;
    ctx.fillStyle = theme.regionFill;
    ctx.setLineDash([5, 4]);
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    if (region.kind === 'box') {
      const [x0, y0] = region.points[0];
      const [x1, y1] = region.points[region.points.length - 1];
      ctx.rect(Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0), Math.abs(y1 - y0));
    } else {
      region.points.forEach(([x, y], i) => (i ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
      ctx.closePath();
    }
    ctx.fill();
    ctx.stroke();
    ctx.restore();
  }
}
