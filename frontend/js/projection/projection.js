// One projection's life in the page, owned here: the request, following its job's stream
// (frames, progress, phases, pause/resume/cancel) or computing it in the browser (running.js),
// its first picture and level-of-detail order (preview.js, lod.js), and its display, from the
// whole set or from tiles (display.js, composing TiledProjection). Every field it has is
// declared once, in the constructor, and the object is sealed: a field written anywhere else
// throws, and tests/store.test.js refuses one in the sources. The controller
// (controller/projecting.js) asks it to start, stop or show itself, and says which is shown.

import { formatCount } from '../dom.js';
import { mixin } from '../mixin.js';
import { ProjectionDisplay } from './display.js';
import { ProjectionPreview } from './preview.js';
import { ProjectionRunning } from './running.js';

/**
 * The App's members a projection shows itself through (the App is one): passed to the
 * display and preview methods, never kept.
 * @typedef {object} View
 * @property {object} plot          plot.js
 * @property {import('../dataset.js').Dataset} dataset
 * @property {object} state         state.js
 * @property {Projection | null} shown
 * @property {Uint8Array | null} missing
 * @property {unknown[] | null} slicedDisplay
 * @property {(text: string, isError?: boolean) => void} setMessage
 * @property {() => void} _updateFlags
 */

/** @typedef {{ update: (fraction: number | null, text?: string) => void, done: () => void }} Task */

export class Projection {
  /**
   * `api` (api.js) runs it; `onChange(projection)` hears each update (the app decides
   * whether it is on screen); `task` is its line in the progress bar; `tileAxes`: shown from
   * tiles over these axes, never downloaded whole (display.js tileAxesFor).
   */
  constructor(method, params, dims, { api = null, onChange = () => {}, task = null, tileAxes = null } = {}) {
    /** @type {object | null} api.js */
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
    /** @type {Float32Array | null} the whole set's coordinates (N x cols), null when shown from tiles */
    this.data = null;
    /** @type {number} */
    this.cols = 0;
    /** @type {object | null} the result's info (explained variance, ...) */
    this.info = null;
    /** @type {string} 'queued' | 'running' | 'done' | 'failed' | 'cancelled' */
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
    /** @type {Promise<Projection> | null} resolves when it ends */
    this.finished = null;
    /** @type {number[] | null} shown from tiles over these axes (no whole set) */
    this.tileAxes = tileAxes;
    /** @type {import('../tiles/tile_points.js').TiledProjection | null} its tiles, once the job is done */
    this.tiled = null;
    /** @type {string | null} the axes its tiles are being opened over (display.js) */
    this.tilesFor = null;
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

  /** A finished projection from stored coordinates (a bookmark), without a job. */
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

mixin(Projection, ProjectionRunning, ProjectionPreview, ProjectionDisplay);

export function projectionKey(method, params, dims) {
  return JSON.stringify([method, dims, params]);
}

export function methodName(method) {
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
