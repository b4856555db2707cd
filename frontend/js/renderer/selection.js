// The selection layer: what must show whatever sample of the points a frame draws. The
// selected points, neighbours, focus and hovered point are drawn again on top of the base
// layers (by their place in the draw order), and the outline of a box or lasso being drawn
// goes on the overlay after the labels.

import { FLAG_FOCUS, FLAG_HIDDEN, FLAG_NEIGHBOR, FLAG_SELECTED } from './points.js';

const HIGHLIGHT = FLAG_SELECTED | FLAG_NEIGHBOR | FLAG_FOCUS;

export class SelectionLayer {
  /** `points`: the PointLayer whose program and buffers draw the highlighted points. */
  constructor(points) {
    this.points = points;
    this.count = 0;
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    this.plot = plot;
    this.gl = plot.gl;
    this.elements = this.gl.createBuffer();
    this.ctx = plot.overlay.getContext('2d');
  }

  /** A new draw order moves the highlighted points' ranks. */
  onPositionsChanged(to, from, order) {
    if (order === this.order) return;
    this.order = order;
    const plot = this.plot;
    if (plot.flags.length === plot.n) this.setHighlighted(plot.flags, plot.rank, plot.frames.budget);
  }

  /**
   * Highlighted points of `flags` (the points' own order) by rank in the draw order `rank`
   * (null: the identity); at most `limit`, the first in the draw order, so an even sample.
   */
  setHighlighted(flags, rank, limit) {
    const ranks = [];
    if (rank && rank.length !== flags.length) rank = null;
    // Four flags a word: most words are zero (nothing highlighted), skipped at once.
    const words = flags.byteOffset % 4 === 0 ? new Uint32Array(flags.buffer, flags.byteOffset, flags.length >> 2) : new Uint32Array(0);
    const take = (i) => {
      if (flags[i] & HIGHLIGHT && !(flags[i] & FLAG_HIDDEN)) ranks.push(rank ? rank[i] : i);
    };
    for (let w = 0; w < words.length; w++) if (words[w] !== 0) for (let i = w * 4; i < w * 4 + 4; i++) take(i);
    for (let i = words.length * 4; i < flags.length; i++) take(i);
    ranks.sort((a, b) => a - b);
    const kept = Uint32Array.from(ranks.length > limit ? ranks.slice(0, limit) : ranks);
    const gl = this.gl;
    gl.bindVertexArray(null);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.elements);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, kept, gl.DYNAMIC_DRAW);
    this.count = kept.length;
  }

  render(view) {
    if (view.pass !== 'top') return;
    const plot = this.plot;
    const current = plot.flags.length === plot.n && view.hover < plot.n;
    if (current && view.sampled && !(view.sprites && view.spriteAtlas)) this._drawHighlighted(view);
    const region = this.plot.region;
    if (region) this._drawRegion(this.ctx, region, this.plot.theme);
  }

  onResize() {}

  dispose() {
    this.gl.deleteBuffer(this.elements);
  }

  _drawHighlighted(view) {
    const gl = this.gl;
    const hoverRank = view.hover >= 0 && view.rank ? view.rank[view.hover] : view.hover;
    if (!this.count && hoverRank < 0) return;
    const full = { ...view, sampleSize: 1 };
    this.points.bind(full, null);
    if (this.count) {
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.elements);
      gl.drawElements(gl.POINTS, this.count, gl.UNSIGNED_INT, 0);
    }
    if (hoverRank >= 0) gl.drawArrays(gl.POINTS, hoverRank, 1);
    gl.bindVertexArray(null);
  }

  _drawRegion(ctx, region, theme) {
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
