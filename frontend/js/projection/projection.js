// One projection's life in the page, owned here: the request, following its job's stream
// (frames, progress, phases, pause/resume/cancel) or computing it in the browser (running.js),
// its first picture and level-of-detail order (preview.js), and its display: how its points
// reach the page is its PointDelivery's (points/point_source.js: the whole array, display.js,
// or tiles, tiles/delivery.js), chosen once when it is made. Every field it has is declared
// once, in the constructor, and the object is sealed: a field written anywhere else throws,
// and tests/store.test.js refuses one in the sources. The controller
// (controller/projecting.js) asks it to start, stop or show itself, and says which is shown.

import { formatCount } from '../dom.js';
import { ARRAY } from '../points/array_delivery.js';
import { cancel, start, togglePause } from './running.js';

/**
 * What a projection shows itself through (the App is one): passed to the display and
 * preview functions, never kept.
 * @typedef {object} View
 * @property {import('../plot.js').Plot} plot
 * @property {import('../dataset.js').Dataset} dataset
 * @property {import('../store.js').State} state
 * @property {Projection | null} shown
 * @property {(text: string, isError?: boolean) => void} setMessage
 * @property {() => void} pointsShown  the shown projection's points are in the plot: marks follow
 */

/** @typedef {{ update: (fraction: number | null, text?: string) => void, done: () => void }} Task */

export class Projection {
  /**
   * `api` (api.js) runs it; `onChange(projection)` hears each update (the app decides
   * whether it is on screen); `task` is its line in the progress bar; `delivery`: how its
   * points reach the page (point_source.js deliveryFor), over `sourceAxes` (tiles: the two
   * shown; null: every column).
   * @param {string} method
   * @param {object} params
   * @param {number} dims
   * @param {{ api?: import('../api.js').Api | null, onChange?: (p: Projection) => void, task?: Task | null,
   *   delivery?: import('../points/point_source.js').PointDelivery, sourceAxes?: number[] | null }} [options]
   */
  constructor(method, params, dims, { api = null, onChange = () => {}, task = null, delivery = ARRAY, sourceAxes = null } = {}) {
    /** @type {import('../api.js').Api | null} */
    this.api = api;
    /** @type {(p: Projection) => void} */
    this.onChange = onChange;
    /** @type {Task | null} */
    this.task = task;
    /** @type {string} 'pca' | 'tsne' | 'umap' | 'custom' */
    this.method = method;
    /** @type {object} the request's parameters */
    this.params = params;
    /** @type {number} dimensions asked for */
    this.dims = dims;
    /** @type {string} method, dims and params: which request it answers */
    this.key = projectionKey(method, params, dims);
    /** @type {Float32Array | null} the whole set's coordinates (N x cols), null when they come as tiles */
    this.data = null;
    /** @type {number} */
    this.cols = 0;
    /** @type {object | null} the result's info (explained variance, ...) */
    this.info = null;
    /** @type {string} 'queued' | 'running' | 'done' | 'failed' | 'cancelled', or 'interrupted':
     * its server went away (stopped, or unreachable) while it ran: not the user's doing */
    this.status = 'queued';
    /** @type {number} */
    this.progress = 0;
    /** @type {number | null} */
    this.iteration = null;
    /** @type {string | null} what the server does now (neighbours, affinities, optimisation…) */
    this.phase = null;
    /** @type {number | null} */
    this.phaseProgress = null;
    /** @type {string | null} */
    this.error = null;
    /** @type {string | null} */
    this.jobId = null;
    /** @type {number} frames streamed so far */
    this.frames = 0;
    /** @type {boolean} */
    this.paused = false;
    /** @type {boolean} this page asked it to stop (a "cancelled" it hears is then its own) */
    this.stopAsked = false;
    /** @type {Promise<Projection> | null} resolves when it ends */
    this.finished = null;
    /** @type {import('../points/point_source.js').PointDelivery} how its points reach the page */
    this.delivery = delivery;
    /** @type {number[] | null} the axes its points come over (tiles), null: every column */
    this.sourceAxes = sourceAxes;
    /** @type {import('../points/point_source.js').PointSource | null} its points as the plot
     * takes them: its tiles once opened, its fitted whole array once displayed */
    this.source = null;
    /** @type {string | null} the axes its tiles are being opened over (tiles/delivery.js) */
    this.tilesFor = null;
    /** @type {unknown[] | null} what the plot is being filled with in slices (data, axes, order,
     * isolated rows), while it is (display.js) */
    this.slicing = null;
    /** @type {Promise<void> | null} the first picture from its top LOD tiles (preview.js) */
    this.previewLoad = null;
    /** @type {Promise<void> | null} the placed points of a running layout shown from tiles, on their way (preview.js) */
    this.earlyLoad = null;
    /** @type {number | null} the progress its last early picture was asked at */
    this.earlyProgress = null;
    /** @type {boolean} the first picture is in the LOD order: the whole set waits for it */
    this.previewInOrder = false;
    /** @type {{ key: string, order: Int32Array } | null} the server's LOD order over some axes */
    this.lod = null;
    /** @type {string | null} the LOD order being fetched (its key) */
    this.lodPending = null;
    /** @type {boolean} the whole set waits for the LOD order on its way */
    this.heldForOrder = false;
    /** @type {Int32Array | null} a streaming job's draw order, placed points first (stream_order.js) */
    this.streamOrder = null;
    /** @type {Float32Array | null} the coordinates the plot has */
    this.displayedData = null;
    /** @type {boolean} it has been in the plot once (a whole set or tiles) */
    this.displayedOnce = false;
    Object.seal(this);
  }

  get running() {
    return this.status === 'queued' || this.status === 'running';
  }

  /**
   * Starts it: in the browser for an uploaded data set, else on the server once `after`
   * (the cancellation of the job it replaces) has settled.
   * @param {import('../dataset.js').Dataset} dataset
   * @param {Promise<unknown> | null} [after]
   */
  start(dataset, after = null) {
    start(this, dataset, after);
  }

  /** Pauses or resumes a running server job. */
  togglePause() {
    return togglePause(this);
  }

  /** Stops a running server job; its last frame stays. */
  cancel() {
    return cancel(this);
  }

  /**
   * Columns of its coordinates (`cols` of them) on the x, y (and z) axes under `state`.
   * @param {import('../store.js').State} state
   */
  axes(state, cols = this.cols) {
    if (this.method === 'pca') {
      const { x, y, z, is3d: threeD } = state.pca;
      const axes = threeD && cols >= 3 ? [x, y, z] : [x, y];
      return axes.map((a) => Math.min(a, cols - 1));
    }
    return this.dims === 3 && cols >= 3 ? [0, 1, 2] : [0, 1];
  }

  /**
   * Puts what it has new in the plot, it being shown: its points, a frame, or a first picture.
   * @param {View} view
   */
  refresh(view) {
    this.delivery.refresh(this, view);
  }

  /**
   * Puts it in the plot (again: the axes or the isolated rows changed), if it has points.
   * @param {View} view
   */
  show(view, animate = true) {
    this.delivery.show(this, view, animate);
  }

  /** A finished projection from stored coordinates (a bookmark), without a job. */
  /**
   * @param {string} method
   * @param {object} params
   * @param {number} dims
   * @param {{ data: Float32Array, dims: number }} coords
   * @param {number | null} iteration
   */
  static restored(method, params, dims, coords, iteration) {
    const p = new Projection(method, params, dims);
    p.data = coords.data;
    p.cols = coords.dims;
    p.status = 'done';
    p.progress = 1;
    p.iteration = iteration || null;
    p.finished = Promise.resolve(p);
    return p;
  }
}

export function projectionKey(method, params, dims) {
  return JSON.stringify([method, dims, params]);
}

export function methodName(method) {
  return { pca: 'PCA', tsne: 't-SNE', umap: 'UMAP', custom: 'Custom projection' }[method];
}

/**
 * What a running projection does, as the server says: its phase, t-SNE's iteration (UMAP's
 * epoch) once it optimises, and how far the whole run is: the percentage its bars show (the
 * plot's progress card and the panel's), never a phase's own, so the two always agree.
 */
export function progressText(p) {
  const name = methodName(p.method);
  if (p.status === 'queued') return `${name}: queued…`;
  const doing = runningText(p);
  return doing ? `${name}: ${doing}` : `${name}…`;
}

/** progressText without the method's name (null: nothing said yet). */
function runningText(p) {
  const percent = `${Math.round((p.progress || 0) * 100)}%`;
  if (p.phase === 'optimisation' && p.iteration !== null) {
    const unit = p.method === 'tsne' ? 'iteration' : 'epoch';
    return `optimisation, ${unit} ${formatCount(p.iteration)} (${percent})`;
  }
  if (p.phase) return `${p.phase} (${percent})`;
  if (p.method === 'tsne' && p.iteration !== null) return `iteration ${formatCount(p.iteration)} (${percent})`;
  if (p.progress) return percent;
  return null;
}

/**
 * A projection's status line in its panel: the progress card's words while it runs (see
 * progressText), paused, or how it ended; 'not run yet' for none.
 * @param {Projection | null} p
 */
export function jobStatus(p) {
  if (!p) return 'not run yet';
  if (p.status === 'failed') return p.error ? `failed: ${p.error}` : 'failed';
  if (p.status === 'interrupted') return 'server unreachable: goes on once it is back';
  if (p.running && p.paused) return `paused (${Math.round((p.progress || 0) * 100)}%)`;
  if (p.status === 'running') return `running: ${runningText(p) ?? 'starting…'}`;
  return p.status;
}
