// Projections on screen, a part of the App (app.js): the request a state asks for, starting
// or reusing its projection, and which one is shown. A projection's own life (its job,
// stream, level of detail and display) is its own (projection/projection.js): this only asks
// it to start, stop or show. How its points reach the page is chosen here once per
// projection (points/point_source.js deliveryFor).

import { clampToLimit, defaultRequest, isQuick, limitFor, startsFromLayout, STATE_PARAMS } from '../limits.js';
import { deliveryFor } from '../points/point_source.js';
import { methodName, Projection, progressText, projectionKey } from '../projection/projection.js';
import { formatCount } from '../dom.js';
import { is3d } from '../state.js';
import { superviseColumn } from '../supervision.js';

/**
 * Up to this many points a t-SNE or UMAP starts as soon as its tab opens (as TensorBoard's
 * does; its own UMAP samples 5,000 points): seconds of server work, its frames streaming from
 * the first iteration. Above, minutes: opening the tab shows its parameters and the plot says
 * to press Run (a run made before comes back at once from the server's cache).
 */
export const AUTO_START_POINTS = 5000;

/** A server that cancelled a job unasked is asked again this many times, a second apart: one
 * stopping (it cancels its jobs, then goes) is gone by then, or a new one knows no such job. */
const STOPPING_CHECKS = 5;

/** Whether `method` waits for its Run button on a data set of `n` points. */
export function waitsForRun(method, n) {
  return (method === 'tsne' || method === 'umap') && n > AUTO_START_POINTS;
}

export class Projecting {
  /** @param {import('../app.js').App} app */
  constructor(app) {
    this.app = app;
    /** @type {{ pca: Projection | null, tsne: Projection | null, umap: Projection | null, custom: Projection | null }}
     * each method's latest projection of the open data set */
    this.projections = { pca: null, tsne: null, umap: null, custom: null };
    /** @type {Projection | null} the projection the plot shows */
    this.shown = null;
    /** @type {Record<string, string>} method -> the finished job of the training step before
     * (showStep): its next projection starts from it (t-SNE, UMAP) or is turned onto it */
    this.references = {};
    /** @type {Set<string>} methods the training step before had (run or asked): a new step's
     * runs them again by itself, whatever its size (showStep) */
    this.carriedOn = new Set();
    /** @type {WeakSet<Projection>} projections cut by the server's going, to start again once it is back */
    this.resuming = new WeakSet();
    Object.seal(this);
  }

  /** A data set opens: the last one's projections stop and go. */
  reset() {
    for (const p of Object.values(this.projections)) if (p?.running) p.cancel();
    this.projections = { pca: null, tsne: null, umap: null, custom: null };
    this.shown = null;
    this.references = {};
    this.carriedOn.clear();
  }

  /**
   * The open data set is another training step of the same points now
   * (DatasetLoading.openStep): each method's finished projection of the step before becomes
   * the layout its next one starts from (t-SNE, UMAP: `init_from_job`) or is turned onto (PCA,
   * custom: `align_to_job`, Procrustes), the step before's projections still running are
   * cancelled (a newer step wins), and the state's projection is shown gliding from where
   * the points are, the camera kept.
   */
  showStep() {
    this.carriedOn.clear();
    for (const [method, p] of Object.entries(this.projections)) {
      if (p?.status === 'done' && p.jobId) this.references[method] = p.jobId;
      if (p) this.carriedOn.add(method);
      if (p?.running) p.cancel();
    }
    this.projections = { pca: null, tsne: null, umap: null, custom: null };
    this.showProjection({ animate: true });
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

  /**
   * The request of `method` to compute now: the state's (requestFor), started from or turned
   * onto the training step before's layout when there is one (showStep).
   * @param {string} method
   */
  _requestNow(method) {
    const { params, dims } = this.requestFor(method);
    const reference = this.references[method];
    if (!reference) return { params, dims };
    const field = startsFromLayout(this.app.dataset.methods, method) ? 'init_from_job' : 'align_to_job';
    return { params: { ...params, [field]: reference }, dims };
  }

  /** How a projection of `method` reaches the page under the state now. */
  _deliveryOf(method) {
    return deliveryFor(this.app.dataset, method, is3d(this.app.state));
  }

  /** Starts the state's projection of `method` (the one it replaces is cancelled first). */
  _start(method) {
    const { app } = this;
    const { params, dims } = this._requestNow(method);
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
    const { params, dims } = this._requestNow(method);
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
    } else if (!p && waitsForRun(method, ds.n) && !this.carriedOn.has(method)) {
      this.shown = null;
      app.status.showPlotMessage(`${methodName(method)} of ${formatCount(ds.n)} points takes minutes on the server: set its parameters, then press Run (a run made before comes back at once).`);
      app.render();
      return;
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

  /**
   * The Run button: starts the state's t-SNE/UMAP, or restarts it with parameters changed
   * since; one running with these parameters goes on (pressed again, it is not restarted).
   */
  run() {
    const method = this.app.state.projection;
    const p = this.projections[method];
    const { params, dims } = this.requestFor(method);
    if (p?.running && p.key === projectionKey(method, params, dims)) return;
    this.rerun();
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

  /**
   * A projection cut by its server's going (status 'interrupted'): with its server still
   * there holding its job cancelled, someone else stopped it (said as cancelled); else it
   * starts again, the same request, once a server is back.
   * @param {Projection} p
   */
  async _resume(p) {
    const { app } = this;
    if (await this._cancelledThere(p)) {
      p.status = 'cancelled';
      p.error = 'stopped on the server';
      p.onChange(p);
      return;
    }
    await app.connection.whenBack();
    if (this.projections[p.method] !== p || app.dataset?.local) return; // replaced meanwhile
    const shown = this.shown === p;
    const again = this._start(p.method);
    if (shown) {
      this.shown = again;
      app.status.showPlotMessage(null);
    }
    app.render();
  }

  /**
   * Whether `p`'s job stays cancelled on a server still there (someone else's cancel), rather
   * than going with a stopping server: unreachable, or a new server that never ran it (404).
   * @param {Projection} p
   */
  async _cancelledThere(p) {
    if (!p.jobId || !this.app.connection.reachable) return false;
    for (let i = 0; i < STOPPING_CHECKS; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      try {
        if ((await p.api.job(p.jobId)).status !== 'cancelled') return false;
      } catch {
        return false;
      }
    }
    return true;
  }

  _projectionChanged(p) {
    const { app } = this;
    if (p !== this.projections[p.method]) return;
    if (p.status === 'interrupted' && !this.resuming.has(p)) {
      this.resuming.add(p);
      this._resume(p);
    }
    if (p === this.shown) {
      if (p.status === 'failed') {
        app.setMessage(`${methodName(p.method)} failed: ${p.error}`, true);
        if (!p.data) app.status.showPlotMessage(`${methodName(p.method)} failed: ${p.error}`); // nothing else to show
      }
      if (p.status === 'interrupted' && !p.data) app.status.showPlotMessage(`Server unreachable: ${methodName(p.method)} goes on once it is back.`);
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
