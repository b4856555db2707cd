// The phrases of a search by meaning on the map: a layer of the plot (plot.js's layer
// contract) on its own canvas, over the points and their labels, drawing each phrase as a
// labelled pin in its colour where the server placed it (the answer's marker, in projection
// units, fitted into the plot's cube by the shown PointSource as its own points are: the
// whole array or tiles alike). It redraws on the 'top' pass only when what it shows changed.

import { clearedCanvas } from '../dom.js';

/** @typedef {{ text: string, color: string, coords: number[] }} Marker */

const FONT = '600 12px system-ui, -apple-system, "Segoe UI", "Noto Sans", sans-serif';
const STEM = 16; // px from the point up to the label
const MAX_LABEL = 40; // characters of a phrase shown on the map (all of it in the list)

export class MarkerLayer {
  /** @param {() => Marker[]} markersOf  the markers to draw now */
  constructor(markersOf) {
    this.markersOf = markersOf;
    /** @type {import('../plot.js').Plot | null} */
    this.plot = null;
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'meaning-markers';
    this.canvas.setAttribute('aria-hidden', 'true');
    this.canvas.dataset.testid = 'meaning-markers';
    /** @type {unknown[] | null} what the last drawing showed */
    this.seen = null;
    /** @type {Array<{ text: string, color: string, x: number, y: number }>} the pins drawn (CSS pixels), for tests */
    this.drawn = [];
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    this.plot = plot;
    plot.overlay.after(this.canvas); // over the labels: the phrases are what was asked
  }

  onPositionsChanged() {
    this.seen = null;
  }

  render(view) {
    if (view.pass !== 'top' || !this.plot) return;
    const p = this.plot;
    const markers = this.markersOf();
    const width = p.canvas.clientWidth;
    const height = p.canvas.clientHeight;
    const key = [p.source, p.camera, width, height, p.threeD, p.theme, markers.map((m) => `${m.text}|${m.color}|${m.coords}`).join('\n')];
    if (this.seen && key.every((v, i) => v === this.seen[i])) return;
    this.seen = key;
    this.draw(markers, width, height);
  }

  onResize() {
    this.seen = null;
  }

  dispose() {
    this.canvas.remove();
    this.plot = null;
  }

  // ---- drawing -------------------------------------------------------------------------

  draw(markers, width, height) {
    const p = this.plot;
    const ctx = clearedCanvas(this.canvas, width, height);
    this.drawn = [];
    if (!markers.length || !p.source.place) return;
    const m = p.matrix();
    const css = getComputedStyle(document.documentElement);
    const halo = css.getPropertyValue('--plot-bg').trim() || '#ffffff';
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    ctx.lineJoin = 'round';
    for (const marker of markers) {
      const at = p.source.place(marker.coords);
      const spot = at && screenOf(m, at, width, height);
      if (!spot) continue;
      const [x, y] = spot;
      const text = marker.text.length > MAX_LABEL ? `${marker.text.slice(0, MAX_LABEL - 1)}…` : marker.text;
      const tw = ctx.measureText(text).width;
      const top = y - STEM - 10;
      // The stem, the label in the phrase's colour above it, and a ringed dot on the spot.
      ctx.strokeStyle = marker.color;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.moveTo(x, y);
      ctx.lineTo(x, top + 10);
      ctx.stroke();
      ctx.fillStyle = marker.color;
      ctx.strokeStyle = halo;
      ctx.lineWidth = 2;
      roundedRect(ctx, x - 4, top - 10, tw + 12, 20, 6);
      ctx.fill();
      ctx.stroke();
      ctx.fillStyle = '#ffffff';
      ctx.fillText(text, x + 2, top);
      ctx.beginPath();
      ctx.arc(x, y, 5, 0, 2 * Math.PI);
      ctx.fillStyle = marker.color;
      ctx.fill();
      ctx.lineWidth = 2;
      ctx.strokeStyle = halo;
      ctx.stroke();
      this.drawn.push({ text: marker.text, color: marker.color, x, y });
    }
  }
}

/**
 * CSS pixel position of a point of the plot's cube, or null behind the camera or off the plot.
 * @param {ArrayLike<number>} m  the plot's view-projection matrix
 * @param {number[]} at  x, y, z
 * @param {number} width
 * @param {number} height
 */
function screenOf(m, at, width, height) {
  const [x, y, z] = at;
  const w = m[3] * x + m[7] * y + m[11] * z + m[15];
  if (!(w > 0)) return null;
  const sx = ((m[0] * x + m[4] * y + m[8] * z + m[12]) / w + 1) * 0.5 * width;
  const sy = (1 - (m[1] * x + m[5] * y + m[9] * z + m[13]) / w) * 0.5 * height;
  return sx >= 0 && sx <= width && sy >= 0 && sy <= height ? [sx, sy] : null;
}

function roundedRect(ctx, x, y, w, h, r) {
  ctx.beginPath();
  ctx.moveTo(x + r, y);
  ctx.arcTo(x + w, y, x + w, y + h, r);
  ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r);
  ctx.arcTo(x, y, x + w, y, r);
  ctx.closePath();
}
