// Which display a projection uses and putting it there (methods of Projection,
// projection.js): the whole set fitted into the plot (in slices for a large set, placed
// points first while a sampled job streams), or its tiles (TiledProjection, for large 2-D
// views of PCA and custom). `app` is the View (projection.js) it shows through.

import { fitInSlices, prepareDrawOrder } from '../draw_order.js';
import { fitPositions } from '../geometry.js';
import { randomOrder } from '../renderer/lod.js';
import { is3d } from '../state.js';
import { showsTiles, TiledProjection } from '../tiles/tile_points.js';
import { placedFirstOrder } from './stream_order.js';

/** Data sets from this size on are put in the plot in slices (_displayInSlices). */
const SLICED_ABOVE = 500000;

/**
 * The axes a projection of `method` is shown over from its tiles (docs/ARCHITECTURE.md
 * "Tiles": large 2-D views of PCA and custom), or null: the whole set comes to the page.
 */
export function tileAxesFor(dataset, method, state) {
  if (!showsTiles(dataset, method, is3d(state))) return null;
  return method === 'pca' ? [state.pca.x, state.pca.y] : [0, 1];
}

export class ProjectionDisplay {
  /** Columns of its coordinates (`cols` of them) on the x, y (and z) axes under `state`. */
  axes(state, cols = this.cols) {
    if (this.method === 'pca') {
      const { x, y, z, is3d: threeD } = state.pca;
      const axes = threeD && cols >= 3 ? [x, y, z] : [x, y];
      return axes.map((a) => Math.min(a, cols - 1));
    }
    return this.dims === 3 && cols >= 3 ? [0, 1, 2] : [0, 1];
  }

  /** Puts what it has new in the plot, it being shown: its tiles, a frame, or a first picture. */
  refresh(app) {
    if (this.tiled && this.status === 'done') {
      app.plot.setMode(false);
      this.displayTiles(app);
    } else if (this.data && this.displayedData !== this.data) {
      const first = !this.displayedOnce;
      app.plot.setMode(is3d(app.state) && (this.method !== 'pca' || this.cols >= 3));
      this.display(app, first);
    } else if (this.placing(app)) {
      this.earlyPicture(app);
    } else if (!this.data && this.jobId) {
      this.preview(app);
    }
  }

  /** Puts it in the plot again (the axes or the isolated rows changed). */
  refit(app) {
    if (this.data) this.display(app, true);
    else if (this.tiled) this.displayTiles(app);
  }

  /**
   * Shows it from its tiles (the plot draws them, tiled_projection.js fetches what the view
   * needs); other axes than the tiles' open the tiles over those first.
   */
  async displayTiles(app) {
    const axes = this.axes(app.state).join(',');
    if (this.tiled.axes.join(',') !== axes) {
      if (this.tilesFor === axes) return;
      this.tilesFor = axes;
      const next = await TiledProjection.open(this.api, this.jobId, axes.split(',').map(Number)).catch((err) => {
        app.setMessage(`Tiles: ${err.message}`, true);
        return null;
      });
      if (!next || this.tilesFor !== axes) return;
      this.tilesFor = null;
      this.tiled = next;
    }
    if (this !== app.shown) return;
    app.missing = null;
    app.plot.setTiles(this.tiled);
    this.displayedOnce = true;
    app._updateFlags();
  }

  display(app, animate) {
    const isolated = app.state.isolated ? new Set(app.state.isolated) : null;
    const axes = this.axes(app.state);
    let order = this.lodOrder(app, axes);
    // Over a first picture, the whole set waits for its order: one permutation, not two.
    if (!order && this.lodPending && this.previewInOrder && app.plot.preview.count) {
      this.heldForOrder = true;
      return;
    }
    if (app.dataset.n >= SLICED_ABOVE && !this.running) {
      this._displayInSlices(app, animate, axes, order, isolated);
      return;
    }
    const { positions, missing } = fitPositions(this.data, app.dataset.n, this.cols, axes, isolated);
    app.missing = missing;
    // A streaming job: the placed points first, so a moving frame draws no hidden point.
    if (!order && this.running && app.dataset.n > app.plot.budget) {
      order = placedFirstOrder(missing, this.streamOrder ?? null).order;
      this.streamOrder = order;
    }
    app.plot.setPositions(positions, { animate, order });
    this.displayedData = this.data;
    this.displayedOnce = true;
    app._updateFlags();
  }

  /**
   * display() for a large set: the fit and the draw order's arrays made in slices that yield
   * to input (draw_order.js), then handed to the plot at once; the current picture (a first
   * one from the tiles, or the last projection) stays meanwhile. A newer call supersedes it.
   */
  async _displayInSlices(app, animate, axes, order, isolated) {
    if (!order && this.lodPending) {
      this.heldForOrder = true; // the order is on its way: one permutation, not a random one first
      return;
    }
    const data = this.data;
    const key = [data, axes.join(','), order, isolated ? app.state.isolated.join(',') : ''];
    const running = app.slicedDisplay;
    if (running && running.every((v, i) => v === key[i])) return;
    app.slicedDisplay = key;
    const current = () => app.slicedDisplay === key && this === app.shown && this.data === data;
    const { positions, missing } = await fitInSlices(data, app.dataset.n, this.cols, axes, isolated);
    if (!current()) return;
    const drawOrder = order ?? (app.dataset.n > app.plot.budget ? randomOrder(app.dataset.n) : null);
    if (drawOrder) await prepareDrawOrder(positions, drawOrder, app.plot.points.colors);
    if (!current()) return;
    app.slicedDisplay = null;
    app.missing = missing;
    app.plot.setPositions(positions, { animate, order: drawOrder });
    this.displayedData = data;
    this.displayedOnce = true;
    app._updateFlags();
  }
}
