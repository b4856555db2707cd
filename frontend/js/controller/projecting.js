// Projections on screen: the request a state asks for, starting or reusing its job, and
// fitting its coordinates into the plot as frames arrive.

import { formatCount } from '../dom.js';
import { fitInSlices, prepareDrawOrder } from '../draw_order.js';
import { fitPositions } from '../geometry.js';
import { clampToLimit, isQuick, limitFor } from '../limits.js';
import { is3d } from '../state.js';
import { randomOrder } from '../renderer/lod.js';
import { placedFirstOrder } from '../stream_order.js';
import { superviseColumn } from '../supervision.js';
import { showsTiles, TiledProjection } from '../tiled_projection.js';

/** Data sets from this size on are put in the plot in slices (_displayInSlices). */
const SLICED_ABOVE = 500000;

export class Projecting {

  /** The request parameters and dimensions of a method under a state. */
  requestFor(method, state = this.state) {
    switch (method) {
      case 'pca':
        return { params: { spherize: state.pca.spherize }, dims: 3 };
      case 'tsne': {
        // The parameter table's limit for this data (perplexity <= (N - 1) / 3).
        const perplexity = clampToLimit(state.tsne.perplexity, limitFor(this.dataset, 'tsne', 'perplexity'));
        const params = { perplexity, learning_rate: state.tsne.learningRate ?? 'auto', n_iter: state.tsne.nIter };
        const supervise = superviseColumn(state.tsne, this.dataset);
        if (supervise) Object.assign(params, { supervise_column: supervise, supervise_weight: state.tsne.superviseWeight });
        return { params, dims: state.tsne.is3d ? 3 : 2 };
      }
      case 'umap': {
        const nNeighbors = clampToLimit(state.umap.nNeighbors, limitFor(this.dataset, 'umap', 'n_neighbors'));
        return { params: { n_neighbors: nNeighbors, min_dist: state.umap.minDist }, dims: state.umap.is3d ? 3 : 2 };
      }
      default: {
        const { column, left, right, up, down, regex } = state.custom;
        return { params: { column, left, right, up, down, regex }, dims: 2 };
      }
    }
  }

  _start(method) {
    const { params, dims } = this.requestFor(method);
    const old = this.projections[method];
    const cancelled = old?.running ? this.runner.cancel(old) : null;
    const ds = this.dataset;
    const p = ds.local
      ? this.runner.runLocally(ds, method, params, dims)
      : this.runner.runOnServer(ds, method, params, dims, cancelled, this._tileAxes(method));
    this.projections[method] = p;
    const task = this.progress.start(`${methodName(method)}…`);
    p.task = task;
    p.finished.then(() => task.done());
    return p;
  }

  /**
   * The axes a projection is shown over from its tiles (docs/ARCHITECTURE.md "Tiles": large
   * 2-D views of PCA and custom), or null: the whole set comes to the page.
   */
  _tileAxes(method, state = this.state) {
    if (!showsTiles(this.dataset, method, is3d(state))) return null;
    return method === 'pca' ? [state.pca.x, state.pca.y] : [0, 1];
  }

  /** Whether the custom projection has something to compute. */
  customReady() {
    const c = this.state.custom;
    return Boolean(c.column) && [c.left, c.right, c.up, c.down].some((q) => q.trim());
  }

  /** Puts the state's projection on screen, starting its computation when needed. */
  _showProjection({ animate, resetCamera = false }) {
    if (!this.dataset) return;
    const method = this.state.projection;
    let p = this.projections[method];
    const { params, dims } = this.requestFor(method);
    const key = JSON.stringify([method, dims, params]);
    const local = this.dataset.local;
    if (local && (method === 'tsne' || method === 'umap')) {
      this.shown = null;
      this._showPlotMessage(`${methodName(method)} runs on the server. Put these files in a LOGDIR and run \`projector serve LOGDIR\` to use it; PCA and Custom work here.`);
      this.render();
      return;
    }
    if (method === 'custom' && !this.customReady()) {
      this.shown = null;
      this._showPlotMessage('Type a query for at least one side (Left, Right, Up, Down) to place the points.');
      this.render();
      return;
    }
    if (isQuick(this.dataset, method)) {
      // Tiles or the whole set: a 2-D view of tiles turned 3-D needs the whole set.
      if (!p || p.key !== key || Boolean(p.tileAxes) !== Boolean(this._tileAxes(method))) p = this._start(method);
    } else if (!p) {
      p = this._start(method);
    }
    this.shown = p;
    this._showPlotMessage(null);
    this.plot.setMode(is3d(this.state) && (method !== 'pca' || !p.data || p.cols >= 3));
    if (p.data) this._display(p, animate);
    else if (p.tiled) this._displayTiles(p);
    if (resetCamera) this.plot.resetView();
    this.render();
  }

  /** Stops and restarts the current t-SNE/UMAP with the current parameters. */
  rerun() {
    const method = this.state.projection;
    const p = this._start(method);
    this.shown = p;
    this.plot.setMode(is3d(this.state));
    this._showPlotMessage(null);
    this.render();
  }

  stopJob(method) {
    const p = this.projections[method];
    if (p) this.runner.cancel(p);
  }

  /** Pause holds the server job (its frames stop); resume lets it go on. */
  togglePause(method) {
    const p = this.projections[method];
    if (p) this.runner.togglePause(p);
  }

  _projectionChanged(p) {
    if (p !== this.projections[p.method]) return;
    if (p === this.shown) {
      if (p.status === 'failed') {
        this.setMessage(`${methodName(p.method)} failed: ${p.error}`, true);
        if (!p.data) this._showPlotMessage(`${methodName(p.method)} failed: ${p.error}`); // nothing else to show
      }
      if (p.tiled && p.status === 'done') {
        this.plot.setMode(false);
        this._displayTiles(p);
      } else if (p.data && p.displayedData !== p.data) {
        const first = !p.displayedOnce;
        this.plot.setMode(is3d(this.state) && (p.method !== 'pca' || p.cols >= 3));
        this._display(p, first);
      } else if (!p.data && p.jobId) {
        this._preview(p);
      }
    }
    if (p.task) p.task.update(p.progress || null, progressText(p));
    this.render();
  }

  /** Columns of the projection's coordinates on the x, y (and z) axes. */
  _axes(p) {
    if (p.method === 'pca') {
      const { x, y, z, is3d: threeD } = this.state.pca;
      const axes = threeD && p.cols >= 3 ? [x, y, z] : [x, y];
      return axes.map((a) => Math.min(a, p.cols - 1));
    }
    return p.dims === 3 && p.cols >= 3 ? [0, 1, 2] : [0, 1];
  }

  /**
   * Shows a projection from its tiles (the plot draws them, tiled_projection.js fetches what
   * the view needs); other axes than the tiles' open the tiles over those first.
   */
  async _displayTiles(p) {
    const axes = this._axes(p).join(',');
    if (p.tiled.axes.join(',') !== axes) {
      if (p.tilesFor === axes) return;
      p.tilesFor = axes;
      const next = await TiledProjection.open(this.api, p.jobId, axes.split(',').map(Number)).catch((err) => {
        this.setMessage(`Tiles: ${err.message}`, true);
        return null;
      });
      if (!next || p.tilesFor !== axes) return;
      p.tilesFor = null;
      p.tiled = next;
    }
    if (p !== this.shown) return;
    this.missing = null;
    this.plot.setTiles(p.tiled);
    p.displayedOnce = true;
    this._updateFlags();
  }

  _display(p, animate) {
    const isolated = this.state.isolated ? new Set(this.state.isolated) : null;
    const axes = this._axes(p);
    let order = this._lodOrder(p, axes);
    // Over a first picture, the whole set waits for its order: one permutation, not two.
    if (!order && p.lodPending && p.previewInOrder && this.plot.preview.count) {
      p.heldForOrder = true;
      return;
    }
    if (this.dataset.n >= SLICED_ABOVE && !p.running) {
      this._displayInSlices(p, animate, axes, order, isolated);
      return;
    }
    const { positions, missing } = fitPositions(p.data, this.dataset.n, p.cols, axes, isolated);
    this.missing = missing;
    // A streaming job: the placed points first, so a moving frame draws no hidden point.
    if (!order && p.running && this.dataset.n > this.plot.budget) {
      order = placedFirstOrder(missing, p.streamOrder ?? null).order;
      p.streamOrder = order;
    }
    this.plot.setPositions(positions, { animate, order });
    p.displayedData = p.data;
    p.displayedOnce = true;
    this._updateFlags();
  }

  /**
   * _display for a large set: the fit and the draw order's arrays made in slices that yield
   * to input (draw_order.js), then handed to the plot at once; the current picture (a first
   * one from the tiles, or the last projection) stays meanwhile. A newer call supersedes it.
   */
  async _displayInSlices(p, animate, axes, order, isolated) {
    if (!order && p.lodPending) {
      p.heldForOrder = true; // the order is on its way: one permutation, not a random one first
      return;
    }
    const data = p.data;
    const key = [data, axes.join(','), order, isolated ? this.state.isolated.join(',') : ''];
    const running = this.slicedDisplay;
    if (running && running.every((v, i) => v === key[i])) return;
    this.slicedDisplay = key;
    const current = () => this.slicedDisplay === key && p === this.shown && p.data === data;
    const { positions, missing } = await fitInSlices(data, this.dataset.n, p.cols, axes, isolated);
    if (!current()) return;
    const drawOrder = order ?? (this.dataset.n > this.plot.budget ? randomOrder(this.dataset.n) : null);
    if (drawOrder) await prepareDrawOrder(positions, drawOrder, this.plot.points.colors);
    if (!current()) return;
    this.slicedDisplay = null;
    this.missing = missing;
    this.plot.setPositions(positions, { animate, order: drawOrder });
    p.displayedData = data;
    p.displayedOnce = true;
    this._updateFlags();
  }

  /**
   * The server's level-of-detail order of a done projection over `axes`, when a frame cannot
   * draw every point: null until it arrives (the plot samples at random meanwhile), then the
   * plot takes it.
   */
  _lodOrder(p, axes, done = p.status === 'done') {
    const ds = this.dataset;
    if (ds.local || ds.n <= this.plot.budget || !done || !p.jobId || p.tileAxes) return null;
    const key = `${p.jobId}:${axes.join(',')}`;
    if (p.lod?.key === key) return p.lod.order;
    if (p.lodPending === key) return null;
    p.lodPending = key;
    this.api
      .lod(p.jobId, axes)
      .then((order) => {
        p.lod = { key, order };
        const shows = () => !p.heldForOrder && p === this.shown && p.displayedData === p.data && this._axes(p).join(',') === axes.join(',');
        if (!shows()) return null;
        const positions = this.plot.positions;
        // The arrays in the new order are made in slices first (draw_order.js).
        return prepareDrawOrder(positions, order, this.plot.points.colors).then(() => {
          if (shows() && this.plot.positions === positions) this.plot.setPositions(positions, { order });
        });
      })
      .catch((err) => {
        this.plot.preview.clear(); // nothing to wait for: the whole set shows in a random order
        this.setMessage(`Level of detail: ${err.message}`, true);
      })
      .finally(() => {
        if (p.lodPending === key) p.lodPending = null;
        if (!p.heldForOrder) return;
        p.heldForOrder = false;
        if (p === this.shown && p.data) this._display(p, false);
      });
    return null;
  }

  _refit() {
    if (this.shown?.data) this._display(this.shown, true);
    else if (this.shown?.tiled) this._displayTiles(this.shown);
  }

  /** The shown projection's coordinates as { data, dims } (for PCA every component). */
  currentCoords() {
    const p = this.shown;
    if (!p?.data) return null;
    return { data: p.data, dims: p.cols };
  }
}

function methodName(method) {
  return { pca: 'PCA', tsne: 't-SNE', umap: 'UMAP', custom: 'Custom projection' }[method];
}

/**
 * What a running projection does, as the server says: its phase with how far through it
 * (the whole run's percentage when the phase cannot tell), t-SNE's iteration once it
 * optimises, UMAP's epoch.
 */
export function progressText(p) {
  const name = methodName(p.method);
  if (p.status === 'queued') return `${name}: queued…`;
  const percent = (f) => `${Math.round(f * 100)}%`;
  if (p.phase === 'optimisation' && p.iteration !== null) {
    const unit = p.method === 'tsne' ? 'iteration' : 'epoch';
    return `${name}: optimisation, ${unit} ${formatCount(p.iteration)} (${percent(p.progress || 0)})`;
  }
  if (p.phase) return `${name}: ${p.phase} ${percent(p.phaseProgress ?? p.progress ?? 0)}`;
  if (p.method === 'tsne' && p.iteration !== null) return `${name}: iteration ${formatCount(p.iteration)}`;
  if (p.progress) return `${name}: ${percent(p.progress)}`;
  return `${name}…`;
}

