// Projections on screen: the request a state asks for, starting or reusing its projection,
// and which one is shown. A projection's own life (its job, stream, level of detail and
// display) is its own (projection/projection.js): this only asks it to start, stop or show.

import { clampToLimit, isQuick, limitFor } from '../limits.js';
import { methodName, Projection, progressText, projectionKey } from '../projection/projection.js';
import { tileAxesFor } from '../projection/display.js';
import { is3d } from '../state.js';
import { superviseColumn } from '../supervision.js';

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
    const cancelled = old?.running ? old.cancel() : null;
    const ds = this.dataset;
    const tileAxes = tileAxesFor(ds, method, this.state);
    const task = this.progress.start(`${methodName(method)}…`);
    const p = new Projection(method, params, dims, { api: this.api, onChange: (q) => this._projectionChanged(q), task, tileAxes });
    p.start(ds, cancelled);
    this.projections[method] = p;
    p.finished.then(() => task.done());
    return p;
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
    const key = projectionKey(method, params, dims);
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
      if (!p || p.key !== key || Boolean(p.tileAxes) !== Boolean(tileAxesFor(this.dataset, method, this.state))) p = this._start(method);
    } else if (!p) {
      p = this._start(method);
    }
    this.shown = p;
    this._showPlotMessage(null);
    this.plot.setMode(is3d(this.state) && (method !== 'pca' || !p.data || p.cols >= 3));
    if (p.data) p.display(this, animate);
    else if (p.tiled) p.displayTiles(this);
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
    if (p) p.cancel();
  }

  /** Pause holds the server job (its frames stop); resume lets it go on. */
  togglePause(method) {
    const p = this.projections[method];
    if (p) p.togglePause();
  }

  _projectionChanged(p) {
    if (p !== this.projections[p.method]) return;
    if (p === this.shown) {
      if (p.status === 'failed') {
        this.setMessage(`${methodName(p.method)} failed: ${p.error}`, true);
        if (!p.data) this._showPlotMessage(`${methodName(p.method)} failed: ${p.error}`); // nothing else to show
      }
      p.refresh(this);
    }
    if (p.task) p.task.update(p.progress || null, progressText(p));
    this.render();
  }

  _refit() {
    this.shown?.refit(this);
  }

  /** The shown projection's coordinates as { data, dims } (for PCA every component). */
  currentCoords() {
    const p = this.shown;
    if (!p?.data) return null;
    return { data: p.data, dims: p.cols };
  }
}
