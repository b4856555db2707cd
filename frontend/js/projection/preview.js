// A large server projection's level of detail (methods of Projection, projection.js): its
// first picture from its top LOD tile before the whole result arrives, and the server's LOD
// order the plot draws a large set in. `app` is the View (projection.js) it shows through.

import { prepareDrawOrder } from '../draw_order.js';
import { isQuick } from '../limits.js';
import { fetchLevel, fetchTile, fitSlice, PREVIEW_ABOVE } from '../tiles/fetch.js';

/** A running layout shown from tiles asks for its placed points again after this much progress. */
const EARLY_STEP = 0.02;

export class ProjectionPreview {
  /** Whether it is a t-SNE/UMAP shown from tiles that still runs (its early tiles are its picture). */
  placing(app) {
    return Boolean(this.tileAxes) && this.running && Boolean(this.jobId) && !isQuick(app.dataset, this.method);
  }

  /**
   * While a t-SNE/UMAP shown from tiles runs, a picture of the points it has placed so far:
   * its early root tile (the server's random sample of its latest frame, tiles.py), asked
   * again each time its progress moves by EARLY_STEP, one request at a time; its tiles
   * replace it once it is done.
   */
  earlyPicture(app) {
    if (this.earlyLoad || (this.earlyProgress !== null && this.progress - this.earlyProgress < EARLY_STEP)) return;
    const progress = this.progress;
    this.earlyLoad = fetchTile(this.api, this.jobId, this.tileAxes, 0, 0, 0, true)
      .then((slice) => {
        if (this !== app.shown || !this.running || slice.total !== app.dataset.n) return;
        this.earlyProgress = progress;
        if (!slice.indices.length) return;
        if (app.plot.tiles || app.plot.n) app.plot.setPositions(new Float32Array(0)); // another projection's picture
        app.plot.setPreview(fitSlice(slice), slice.indices, slice.total);
      })
      .catch(() => {}) // the next progress asks again; the tiles show once it is done
      .finally(() => {
        this.earlyLoad = null;
      });
  }

  /**
   * A first picture of a large server projection before its whole result arrives: its top
   * level-of-detail tiles (the server waits for the job; `projector serve` has them ready for
   * the default view), then the order itself is fetched beside the result, so the whole set
   * is put in the plot once, in that order.
   */
  preview(app) {
    const ds = app.dataset;
    if (this.previewLoad || ds.local || ds.n <= PREVIEW_ABOVE || app.state.isolated) return;
    if (this.running && !isQuick(ds, this.method)) return; // a followed job: its frames are its picture
    this.previewLoad = this._loadPreview(app, ds);
  }

  async _loadPreview(app, ds) {
    const axes = this.axes(app.state, this.dims);
    const shows = () => this === app.shown && !this.displayedOnce && app.dataset === ds;
    const show = (slice) => {
      if (!shows() || slice.total !== ds.n) return false;
      app.plot.setPreview(fitSlice(slice), slice.indices, slice.total);
      // Tiles of the order: the whole set waits for the rest of it (one permutation); random
      // samples (the tiles still being computed): the whole set shows when it comes.
      this.previewInOrder = slice.order === 'lod';
      return true;
    };
    let root;
    try {
      // One tile: more points than the picture draws (renderer/preview.js PREVIEW_POINTS).
      root = await fetchLevel(this.api, this.jobId, axes, 0);
    } catch {
      return; // the whole result shows when it comes, as without a preview
    }
    if (show(root)) this.lodOrder(app, root.axes, true);
  }

  /**
   * The server's level-of-detail order of a done projection over `axes`, when a frame cannot
   * draw every point: null until it arrives (the plot samples at random meanwhile), then the
   * plot takes it.
   */
  lodOrder(app, axes, done = this.status === 'done') {
    const ds = app.dataset;
    if (ds.local || ds.n <= app.plot.budget || !done || !this.jobId || this.tileAxes) return null;
    const key = `${this.jobId}:${axes.join(',')}`;
    if (this.lod?.key === key) return this.lod.order;
    if (this.lodPending === key) return null;
    this.lodPending = key;
    this.api
      .lod(this.jobId, axes)
      .then((order) => {
        this.lod = { key, order };
        const shows = () => !this.heldForOrder && this === app.shown && this.displayedData === this.data && this.axes(app.state).join(',') === axes.join(',');
        if (!shows()) return null;
        const positions = app.plot.positions;
        // The arrays in the new order are made in slices first (draw_order.js).
        return prepareDrawOrder(positions, order, app.plot.points.colors).then(() => {
          if (shows() && app.plot.positions === positions) app.plot.setPositions(positions, { order });
        });
      })
      .catch((err) => {
        app.plot.preview.clear(); // nothing to wait for: the whole set shows in a random order
        app.setMessage(`Level of detail: ${err.message}`, true);
      })
      .finally(() => {
        if (this.lodPending === key) this.lodPending = null;
        if (!this.heldForOrder) return;
        this.heldForOrder = false;
        if (this === app.shown && this.data) this.display(app, false);
      });
    return null;
  }
}
