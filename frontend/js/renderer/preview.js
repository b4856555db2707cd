// The first picture of a large data set: a slice of the points at the head of the
// level-of-detail order (an even sample, coarse first), drawn before the whole projection has
// arrived, so a picture shows while the rest downloads and is prepared. It has buffers of
// its own (a point layer of the slice) and draws only while the plot holds no points of its
// own; the plot drops it when the real positions come. Nothing in it is picked or selected.

import { uniformColoring } from '../colors.js';
import { sampleSize } from './lod.js';
import { PointLayer } from './points.js';

/**
 * The most points the first picture draws. It comes while the server still prepares the
 * tiles on the same cores; software GL then draws about 5 us a point, and the compositor's
 * read of the canvas holds the main thread until the draw is done (120,000 points: 235 ms).
 */
const PREVIEW_POINTS = 16384;

export class PreviewLayer {
  constructor() {
    this.points = new PointLayer();
    this.indices = null;
    this.count = 0;
    this.total = 0;
  }

  // ---- layer contract ------------------------------------------------------------------

  setScene(plot) {
    this.plot = plot;
    this.points.setScene(plot);
  }

  /** The plot's own points replace the preview (see Plot.setPositions). */
  onPositionsChanged() {}

  render(view) {
    if (view.pass !== 'base' || !this.count || this.plot.n) return;
    // The head of the slice is an even sample still, so fewer points keep the picture.
    const count = Math.min(this.count, PREVIEW_POINTS, this.plot.frames.budget * 2);
    this.points.drawRange(
      { ...view, start: 0, count, hover: -1, hasSelection: false, sampleSize: sampleSize(count / this.total) },
      null,
    );
  }

  onResize() {}

  dispose() {
    this.points.dispose();
  }

  // ---- data ------------------------------------------------------------------------------

  /**
   * `positions` (count x 3, fitted like the whole set) of the points `indices` out of
   * `total`; `colors` the whole set's RGBA bytes (own order) when known.
   */
  show(positions, indices, total, colors) {
    this.indices = indices;
    this.count = indices.length;
    this.total = total;
    this.points.onPositionsChanged(positions, positions, null);
    this.points.setFlags(new Uint8Array(this.count));
    this.setColors(colors);
  }

  /** Colours of the slice's points out of the whole set's (own order), or the default. */
  setColors(colors) {
    if (!this.count) return;
    if (colors?.length !== this.total * 4) {
      this.points.setColors(uniformColoring(this.count).colors);
      return;
    }
    const all = new Uint32Array(colors.buffer, colors.byteOffset, this.total);
    const picked = new Uint32Array(this.count);
    for (let r = 0; r < this.count; r++) picked[r] = all[this.indices[r]];
    this.points.setColors(new Uint8Array(picked.buffer));
  }

  /** Frees the slice (the plot's own points arrived, or another data set opens). */
  clear() {
    if (!this.count) return;
    this.count = 0;
    this.indices = null;
    this.points.onPositionsChanged(new Float32Array(0), new Float32Array(0), null);
    this.points.colors = null;
    this.points.flags = null;
  }
}
