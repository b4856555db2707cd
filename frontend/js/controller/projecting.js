// Projections on screen, a part of the App (app.js): the request a state asks for, starting
// or reusing its projection, and which one is shown. A projection's own life (its job,
// stream, level of detail and display) is its own (projection/projection.js): this only asks
// it to start, stop or show. How its points reach the page is chosen here once per
// projection (points/point_source.js deliveryFor).

import { clampToLimit, defaultRequest, isQuick, limitFor, STATE_PARAMS } from '../limits.js';
import { deliveryFor } from '../points/point_source.js';
import { methodName, Projection, progressText, projectionKey } from '../projection/projection.js';
import { is3d } from '../state.js';
import { superviseColumn } from '../supervision.js';

export class Projecting {
  /** @param {import('../app.js').App} app */
  constructor(app) {
    this.app = app;
    /** @type {{ pca: Projection | null, tsne: Projection | null, umap: Projection | null, custom: Projection | null }}
     * each method's latest projection of the open data set */
    this.projections = { pca: null, tsne: null, umap: null, custom: null };
    /** @type {Projection | null} the projection the plot shows */
    this.shown = null;
    Object.seal(this);
  }

  /** A data set opens: the last one's projections stop and go. */
  reset() {
    for (const p of Object.values(this.projections)) if (p?.running) p.cancel();
    this.projections = { pca: null, tsne: null, umap: null, custom: null };
    this.shown = null;
  }

  /**
   * The request parameters and dimensions of a method under a state: the parameter table's
   * default request for this data (what the server's default view and exports ask too), the
   * state's values over it. Nothing here restates a default.
   * @param {string} method
   * @param {import('../store.js').State} [state]
   * @returns {{ params: Record<string, any>, dims: number }}
   */
  requestFor(method, state = this.app.state) {
    const ds = this.app.dataset;
    if (method === 'custom') {
      const { column, left, right, up, down, regex } = state.custom;
      return { params: { column, left, right, up, down, regex }, dims: 2 };
    }
    const base = defaultRequest(ds, method);
    const params = { ...base?.params };
    /** @type {Record<string, any>} */
    const values = state[method];
    for (const [field, name] of Object.entries(STATE_PARAMS[method])) {
      if (name in params && values[field] != null) params[name] = values[field]; // null: the table's
    }
    // Within the table's limits for this data (perplexity <= (N - 1) / 3, n_neighbors < N).
    for (const name of ['perplexity', 'n_neighbors']) {
      if (typeof params[name] === 'number') params[name] = clampToLimit(params[name], limitFor(ds, method, name));
    }
    const supervise = method === 'tsne' ? superviseColumn(state.tsne, ds) : null;
    if (supervise) Object.assign(params, { supervise_column: supervise, supervise_weight: state.tsne.superviseWeight });
    // PCA asks the table's components (the view picks its axes among them); t-SNE and UMAP
    // as many as the view shows.
    const shown = values.is3d ? 3 : 2;
    return { params, dims: method === 'pca' ? base?.dims ?? shown : shown };
  }

  /** How a projection of `method` reaches the page under the state now. */
  _deliveryOf(method) {
    return deliveryFor(this.app.dataset, method, is3d(this.app.state));
  }

  /** Starts the state's projection of `method` (the one it replaces is cancelled first). */
  _start(method) {
    const { app } = this;
    const { params, dims } = this.requestFor(method);
    const old = this.projections[method];
    const cancelled = old?.running ? old.cancel() : null;
    const delivery = this._deliveryOf(method);
    const task = app.progress.start(`${methodName(method)}…`);
    const p = new Projection(method, params, dims, {
      api: app.api,
      onChange: (q) => this._projectionChanged(q),
      task,
      delivery,
      sourceAxes: delivery.axes(method, app.state),
    });
    p.start(app.dataset, cancelled);
    this.projections[method] = p;
    p.finished.then(() => task.done());
    return p;
  }

  /**
   * A finished projection from a bookmark's coordinates replaces its method's.
   * @param {Projection} p
   */
  restore(p) {
    const old = this.projections[p.method];
    if (old?.running) old.cancel();
    this.projections[p.method] = p;
  }

  /** Whether the custom projection has something to compute. */
  customReady() {
    const c = this.app.state.custom;
    return Boolean(c.column) && [c.left, c.right, c.up, c.down].some((q) => q.trim());
  }

  /** Puts the state's projection on screen, starting its computation when needed. */
  showProjection({ animate, resetCamera = false }) {
    const { app } = this;
    const ds = app.dataset;
    if (!ds) return;
    const method = app.state.projection;
    let p = this.projections[method];
    const { params, dims } = this.requestFor(method);
    const key = projectionKey(method, params, dims);
    if (ds.local && (method === 'tsne' || method === 'umap')) {
      this.shown = null;
      app.status.showPlotMessage(`${methodName(method)} runs on the server. Put these files in a LOGDIR and run \`projector serve LOGDIR\` to use it; PCA and Custom work here.`);
      app.render();
      return;
    }
    if (method === 'custom' && !this.customReady()) {
      this.shown = null;
      app.status.showPlotMessage('Type a query for at least one side (Left, Right, Up, Down) to place the points.');
      app.render();
      return;
    }
    if (isQuick(ds, method)) {
      // Tiles or the whole set: a 2-D view of tiles turned 3-D needs the whole set.
      if (!p || p.key !== key || p.delivery !== this._deliveryOf(method)) p = this._start(method);
    } else if (!p) {
      p = this._start(method);
    }
    this.shown = p;
    app.status.showPlotMessage(null);
    app.plot.setMode(is3d(app.state) && (method !== 'pca' || !p.data || p.cols >= 3));
    p.show(app, animate);
    if (resetCamera) app.plot.resetView();
    app.render();
  }

  /** Stops and restarts the current t-SNE/UMAP with the current parameters. */
  rerun() {
    const { app } = this;
    this.shown = this._start(app.state.projection);
    app.plot.setMode(is3d(app.state));
    app.status.showPlotMessage(null);
    app.render();
  }

  stopJob(method) {
    this.projections[method]?.cancel();
  }

  /** Pause holds the server job (its frames stop); resume lets it go on. */
  togglePause(method) {
    this.projections[method]?.togglePause();
  }

  _projectionChanged(p) {
    const { app } = this;
    if (p !== this.projections[p.method]) return;
    if (p === this.shown) {
      if (p.status === 'failed') {
        app.setMessage(`${methodName(p.method)} failed: ${p.error}`, true);
        if (!p.data) app.status.showPlotMessage(`${methodName(p.method)} failed: ${p.error}`); // nothing else to show
      }
      p.refresh(app);
    }
    if (p.task) p.task.update(p.progress || null, progressText(p));
    app.render();
  }

  /** The shown projection in the plot again (the axes or the isolated rows changed). */
  refit() {
    this.shown?.show(this.app, true);
  }

  /** The shown projection's coordinates as { data, dims } (for PCA every component). */
  currentCoords() {
    const p = this.shown;
    if (!p?.data) return null;
    return { data: p.data, dims: p.cols };
  }
}
