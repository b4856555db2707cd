// A layer of the plot (plot.js's layer contract) on its own canvas, under the point labels:
// the density field and its contours (2-D views), and the cluster names. The plot's frames
// drive it: on each 'top' pass it redraws only when what it shows changed (positions,
// camera, size, flags, its own data), so streamed t-SNE/UMAP frames re-estimate the density
// as they arrive, and a still plot costs it nothing.

import { clearedCanvas } from '../dom.js';
import { FLAG_HIDDEN } from '../renderer/points.js';
import { contourSegments, densityGrid, LEVELS } from './density.js';

const CHILDREN_SPACING = 90; // px between sub-cluster anchors before they replace their parent
const NUDGE_RINGS = 4; // how far (in name heights) a name may move off its anchor to fit
const MIN_FONT = 11;
const MAX_FONT = 22;

export class StructureOverlay {
  constructor() {
    this.plot = null;
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'structure-overlay';
    this.canvas.setAttribute('aria-hidden', 'true');
    this.canvas.dataset.testid = 'structure-overlay';
    this.density = false;
    this.clusters = null; // { clusters: [...], byParent: Map }
    this.showClusters = true;
    this.seen = null;
    this.lastDensityMs = null;
    this.drawnLabels = [];
  }

  setDensity(on) {
    this.density = on;
    this._invalidate();
  }

  /** Clusters as the API answers them (with "point" anchors), or null. */
  setClusters(clusters) {
    this.clusters = clusters;
    this._invalidate();
  }

  setShowClusters(on) {
    this.showClusters = on;
    this._invalidate();
  }

  _invalidate() {
    this.seen = null;
    this.plot?.requestRender();
  }

  // ---- layer contract ------------------------------------------------------------------

  /** Its canvas goes over the plot's, under the point labels. */
  setScene(plot) {
    this.plot = plot;
    plot.container.insertBefore(this.canvas, plot.overlay);
  }

  onPositionsChanged() {
    this.seen = null;
  }

  /** Redraws on the 'top' pass when what it shows changed since its last drawing. */
  render(view) {
    if (view.pass !== 'top') return;
    const p = this.plot;
    const width = p.canvas.clientWidth;
    const height = p.canvas.clientHeight;
    const key = [p.positions, p.camera, width, height, p.flags, p.threeD, this.density, this.clusters, this.showClusters, p.theme];
    if (this.seen && key.every((v, i) => v === this.seen[i])) return;
    this.seen = key;
    this.draw(width, height);
  }

  onResize() {
    this.seen = null;
  }

  dispose() {
    this.canvas.remove();
    this.plot = null;
  }

  draw(width, height) {
    const p = this.plot;
    const ctx = clearedCanvas(this.canvas, width, height);
    if (!p.n) return;
    const matrix = p.matrix();
    if (this.density && !p.threeD) this._drawDensity(ctx, matrix, width, height);
    this.drawnLabels = this.clusters && this.showClusters ? this._drawClusters(ctx, matrix, width, height) : [];
  }

  _drawDensity(ctx, matrix, width, height) {
    const p = this.plot;
    const start = performance.now();
    const flags = p.flags.length === p.n ? p.flags : null;
    const field = densityGrid(p.positions, p.n, matrix, width, height, { flags, hiddenBit: FLAG_HIDDEN });
    if (field.max > 0) {
      const css = getComputedStyle(document.documentElement);
      const color = hexRgb(css.getPropertyValue('--accent').trim() || '#3b6fb6');
      const image = new ImageData(field.cols, field.rows);
      for (let i = 0; i < field.grid.length; i++) {
        const t = field.grid[i] / field.max;
        image.data[i * 4] = color[0];
        image.data[i * 4 + 1] = color[1];
        image.data[i * 4 + 2] = color[2];
        image.data[i * 4 + 3] = Math.round(Math.sqrt(t) * 90);
      }
      const small = new OffscreenCanvas(field.cols, field.rows);
      small.getContext('2d').putImageData(image, 0, 0);
      ctx.imageSmoothingEnabled = true;
      ctx.drawImage(small, 0, 0, field.cols * field.cell, field.rows * field.cell);
      ctx.strokeStyle = `rgb(${color.join(',')})`;
      ctx.globalAlpha = 0.8;
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (const level of LEVELS) {
        const s = contourSegments(field, level * field.max);
        for (let k = 0; k < s.length; k += 4) {
          ctx.moveTo(s[k], s[k + 1]);
          ctx.lineTo(s[k + 2], s[k + 3]);
        }
      }
      ctx.stroke();
      ctx.globalAlpha = 1;
    }
    this.lastDensityMs = performance.now() - start;
  }

  /** Rectangles of the plot's floating controls (toolbar, progress card) in canvas pixels:
   * no cluster name is drawn under them. */
  _coveredBoxes() {
    const origin = this.canvas.getBoundingClientRect();
    return [...this.plot.container.querySelectorAll('.plot-toolbar, .plot-progress:not([hidden])')].map((node) => {
      const r = node.getBoundingClientRect();
      return [r.left - origin.left, r.top - origin.top, r.right - origin.left, r.bottom - origin.top];
    });
  }

  /** Cluster names at their anchors (or moved a little off them, inside the plot, where
   * another name or a control sits), biggest first, none overlapping; a parent gives way to
   * its sub-clusters once they are far enough apart on screen (zoomed in). */
  _drawClusters(ctx, matrix, width, height) {
    const p = this.plot;
    const { clusters, byParent } = this.clusters;
    const at = (c) => screenOf(p, matrix, c.point, width, height);
    const top = clusters.filter((c) => c.parent === null);
    const maxSize = Math.max(1, ...top.map((c) => c.size));
    const shown = [];
    for (const parent of top) {
      const children = byParent.get(parent.id) ?? [];
      const spots = children.map(at).filter(Boolean);
      let spread = spots.length >= 2 ? Infinity : 0;
      for (let a = 0; a < spots.length; a++) {
        for (let b = a + 1; b < spots.length; b++) spread = Math.min(spread, Math.hypot(spots[a][0] - spots[b][0], spots[a][1] - spots[b][1]));
      }
      if (spread >= CHILDREN_SPACING) shown.push(...children);
      else shown.push(parent);
    }
    shown.sort((a, b) => b.size - a.size);
    const css = getComputedStyle(document.documentElement);
    const text = css.getPropertyValue('--text').trim() || '#1f2328';
    const halo = css.getPropertyValue('--plot-bg').trim() || '#ffffff';
    const boxes = this._coveredBoxes();
    const drawn = [];
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.lineJoin = 'round';
    const texts = new Set();
    for (const c of shown) {
      const s = at(c);
      // A name already on the map (the same majority value of many clusters, "other
      // (100%)") is said once, at its biggest cluster.
      if (!s || texts.has(c.label)) continue;
      // Its size by its share of points; where that does not fit, the smallest.
      let size = Math.round(MIN_FONT + (MAX_FONT - MIN_FONT) * Math.sqrt(Math.min(1, c.size / maxSize)));
      let spot = null;
      let w = 0;
      for (const tried of new Set([size, MIN_FONT])) {
        ctx.font = `600 ${tried}px system-ui, -apple-system, "Segoe UI", "Noto Sans", sans-serif`;
        w = ctx.measureText(c.label).width + 6;
        spot = freeSpot(s, w, tried * 1.4, boxes, width, height);
        size = tried;
        if (spot) break;
      }
      if (!spot) continue;
      const [x, y] = spot;
      boxes.push([x - w / 2, y - size * 0.7, x + w / 2, y + size * 0.7]);
      texts.add(c.label);
      ctx.strokeStyle = halo;
      ctx.lineWidth = 4;
      ctx.strokeText(c.label, x, y);
      ctx.fillStyle = text;
      ctx.fillText(c.label, x, y);
      drawn.push({ id: c.id, label: c.label, x, y, size });
    }
    return drawn;
  }
}

/** Where a `w` x `h` name for anchor `s` fits inside the plot and clear of `boxes`: the
 * anchor itself, else the nearest of rings of spots around it (null: nowhere near). */
function freeSpot(s, w, h, boxes, width, height) {
  const clear = (x, y) => {
    const box = [x - w / 2, y - h / 2, x + w / 2, y + h / 2];
    return !boxes.some((b) => b[0] < box[2] && box[0] < b[2] && b[1] < box[3] && box[1] < b[3]);
  };
  const inside = (x, y) => [Math.min(Math.max(x, w / 2), width - w / 2), Math.min(Math.max(y, h / 2), height - h / 2)];
  for (let ring = 0; ring <= NUDGE_RINGS; ring++) {
    const offsets = ring === 0 ? [[0, 0]] : [[0, -1], [0, 1], [-1, 0], [1, 0], [-1, -1], [1, -1], [-1, 1], [1, 1]];
    for (const [dx, dy] of offsets) {
      const [x, y] = inside(s[0] + dx * ring * w * 0.6, s[1] + dy * ring * h);
      if (clear(x, y)) return [x, y];
    }
  }
  return null;
}

function screenOf(plot, m, i, width, height) {
  if (i < 0 || i >= plot.n || plot.flags[i] & FLAG_HIDDEN) return null;
  const pos = plot.positions;
  const x = pos[i * 3];
  const y = pos[i * 3 + 1];
  const z = pos[i * 3 + 2];
  const w = m[3] * x + m[7] * y + m[11] * z + m[15];
  if (!(w > 0)) return null;
  return [((m[0] * x + m[4] * y + m[8] * z + m[12]) / w + 1) * 0.5 * width, (1 - (m[1] * x + m[5] * y + m[9] * z + m[13]) / w) * 0.5 * height];
}

function hexRgb(hex) {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex);
  if (!m) return [59, 111, 182];
  const v = parseInt(m[1], 16);
  return [(v >> 16) & 255, (v >> 8) & 255, v & 255];
}
