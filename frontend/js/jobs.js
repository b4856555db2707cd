// Projection jobs as the UI sees them: one object per computation, filled in as the server
// streams frames (t-SNE, UMAP) or as the browser computes (uploads). Each update calls
// `onChange(projection)`; the app decides whether it is on screen.

import { customProjection, pca } from './compute.js';
import { isQuick } from './limits.js';
import { PREVIEW_ABOVE } from './lod_points.js';
import { TiledProjection } from './tiled_projection.js';

/** How long the whole result waits for a large set's first slice (see _wait). */
const PREVIEW_WAIT_MS = 3000;

/**
 * @typedef {object} ProjectionShape  the fields of a Projection (one computation's life)
 * @property {string} method        'pca' | 'tsne' | 'umap' | 'custom'
 * @property {object} params        the request's parameters
 * @property {number} dims          dimensions asked for
 * @property {string} key           method, dims and params: which request it answers
 * @property {Float32Array|null} data  the whole set's coordinates (N x cols), null when shown
 *   from tiles
 * @property {number} cols
 * @property {object|null} info     the result's info (explained variance, ...)
 * @property {string} status        'queued' | 'running' | 'done' | 'failed' | 'cancelled'
 * @property {number} progress
 * @property {number|null} iteration
 * @property {string|null} phase
 * @property {number|null} phaseProgress
 * @property {string|null} error
 * @property {string|null} jobId
 * @property {number} frames        frames streamed so far
 * @property {boolean} paused
 * @property {Promise<Projection>|null} finished
 * @property {number[]|null} tileAxes  shown from tiles over these axes (no whole set)
 * @property {TiledProjection|null} tiled  its tiles, once the job is done
 */

/** @implements {ProjectionShape} */
export class Projection {
  constructor(method, params, dims) {
    this.method = method;
    this.params = params;
    this.dims = dims;
    this.key = projectionKey(method, params, dims);
    this.data = null;
    this.cols = 0;
    this.info = null;
    this.status = 'queued';
    this.progress = 0;
    this.iteration = null;
    this.phase = null; // what the server does now (neighbours, affinities, optimisation…)
    this.phaseProgress = null;
    this.error = null;
    this.jobId = null;
    this.frames = 0;
    this.paused = false;
    this.finished = null;
    this.tileAxes = null;
    this.tiled = null;
  }

  get running() {
    return this.status === 'queued' || this.status === 'running';
  }
}

/** Below this ratio of its narrowest to widest spread, a 2-D picture reads as a line. */
export const READABLE_SPREAD = 0.2;

/**
 * Whether a frame's first two axes spread enough both ways to show its points: the ratio of
 * the smaller to the larger principal spread (square roots of the 2 x 2 covariance's
 * eigenvalues), rows with a missing coordinate skipped.
 */
export function readableSpread(data, cols) {
  let count = 0;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i + 1 < data.length; i += cols) {
    const x = data[i];
    const y = data[i + 1];
    if (Number.isFinite(x) && Number.isFinite(y)) {
      sx += x;
      sy += y;
      count++;
    }
  }
  if (count < 3) return true;
  const mx = sx / count;
  const my = sy / count;
  let xx = 0;
  let yy = 0;
  let xy = 0;
  for (let i = 0; i + 1 < data.length; i += cols) {
    const x = data[i] - mx;
    const y = data[i + 1] - my;
    if (Number.isFinite(x) && Number.isFinite(y)) {
      xx += x * x;
      yy += y * y;
      xy += x * y;
    }
  }
  const mean = (xx + yy) / 2;
  const gap = Math.sqrt(((xx - yy) / 2) ** 2 + xy * xy);
  const wide = mean + gap;
  if (!(wide > 0)) return true;
  return Math.sqrt(Math.max(0, mean - gap) / wide) >= READABLE_SPREAD;
}

/**
 * Whether a t-SNE is in its early-exaggeration iterations (openTSNE's 250, a third of short
 * runs: kernels/tsne.py), where clusters are pulled into lines before they spread. Data that
 * is a line for real shows as one once they are over.
 */
function exaggerating(p) {
  const iterations = p.params?.n_iter ?? 1000;
  const phase = Math.min(250, Math.floor(iterations / 3));
  // The lines take some iterations to open once the exaggeration ends (about 0.2 of a
  // round spread at its end on the words sample, 0.7 a hundred later).
  const opening = Math.min(100, phase);
  return p.method === 'tsne' && (p.iteration ?? 0) < phase + opening;
}

export function projectionKey(method, params, dims) {
  return JSON.stringify([method, dims, params]);
}

/** A finished projection from stored coordinates (a bookmark), without a job. */
export function restoredProjection(method, params, dims, coords, iteration) {
  const p = new Projection(method, params, dims);
  p.data = coords.data;
  p.cols = coords.dims;
  p.status = 'done';
  p.progress = 1;
  p.iteration = iteration || null;
  p.finished = Promise.resolve(p);
  return p;
}

export class JobRunner {
  constructor(api, onChange) {
    this.api = api;
    this.onChange = onChange;
  }

  /**
   * Starts a server projection of a data set once `after` (the cancellation of the job it
   * replaces) has settled, so the server never hands back the job being cancelled.
   * PCA and custom are one blocking request; t-SNE and UMAP are followed frame by frame.
   * `projection.finished` resolves when it ends.
   */
  runOnServer(dataset, method, params, dims, after = null, tileAxes = null) {
    const p = new Projection(method, params, dims);
    p.tileAxes = tileAxes;
    const request = { run: dataset.run, embedding: dataset.name, method, dims, params };
    const work = tileAxes ? this._waitTiled(p, request)
      : isQuick(dataset, method) ? this._wait(p, request, dataset.n) : this._follow(p, request, dataset.n);
    p.finished = (async () => {
      try {
        await after;
        await work();
      } catch (err) {
        p.status = 'failed';
        p.error = err.message;
      }
      this.onChange(p);
      return p;
    })();
    return p;
  }

  _wait(p, request, n) {
    return async () => {
      p.status = 'running';
      // A large set's job id comes first, so that a first picture (a level-of-detail slice)
      // can be fetched while the whole result is computed and downloaded.
      if (n > PREVIEW_ABOVE) p.jobId = await this.api.startProjection(request);
      this.onChange(p);
      // The slice goes first when it comes soon (a cached job), not behind the whole result.
      if (p.previewLoad) await Promise.race([p.previewLoad, new Promise((r) => setTimeout(r, PREVIEW_WAIT_MS))]);
      const result = await this.api.projectNow(request, n);
      Object.assign(p, { data: result.data, cols: result.cols, info: result.info, jobId: result.jobId });
      p.status = 'done';
      p.progress = 1;
    };
  }

  /**
   * A projection shown from tiles (tiled_projection.js): the job id at once (a first
   * picture from its early tiles), then its tile index, which the server answers once the
   * job is done; the whole set is never downloaded.
   */
  _waitTiled(p, request) {
    return async () => {
      p.status = 'running';
      p.jobId = await this.api.startProjection(request);
      this.onChange(p);
      const tiled = await TiledProjection.open(this.api, p.jobId, p.tileAxes);
      Object.assign(p, { tiled, cols: tiled.manifest.columns, info: tiled.manifest.info ?? null });
      p.status = 'done';
      p.progress = 1;
    };
  }

  _follow(p, request, n) {
    return async () => {
      p.jobId = await this.api.startProjection(request, { followed: true });
      p.status = 'running';
      this.onChange(p);
      let lastFrame = null;
      const final = await this.api.follow(p.jobId, {
        onStatus: (s) => {
          // 'done' is said once the result is in hand (below), never before its coordinates.
          if (s.status && s.status !== 'done') p.status = s.status;
          if (typeof s.progress === 'number') p.progress = s.progress;
          if (s.iteration !== undefined && s.iteration !== null) p.iteration = s.iteration;
          if (s.phase !== undefined) p.phase = s.phase;
          if (s.phase_progress !== undefined) p.phaseProgress = s.phase_progress;
          if (s.error) p.error = s.error;
          if (typeof s.paused === 'boolean') p.paused = s.paused;
          if (s.info) p.info = s.info;
          this.onChange(p);
        },
        onFrame: (frame) => {
          if (frame.length % n !== 0 || frame.length === 0) return;
          lastFrame = frame;
          p.frames++;
          // An early frame squeezed to a line (t-SNE's exaggeration phase) is held back:
          // the last readable picture stays, also when the run is stopped there (the last
          // frame of a stopped run is such a frame too).
          if (p.data && exaggerating(p) && !readableSpread(frame, frame.length / n)) {
            this.onChange(p);
            return;
          }
          p.data = frame;
          p.cols = frame.length / n;
          this.onChange(p);
        },
      });
      const status = final?.status && final.status !== 'running' ? final : await this.api.job(p.jobId);
      if (status.status === 'done' && (!lastFrame || !p.info)) await this._fetchResult(p, n);
      else if (status.status === 'done') p.data = lastFrame; // the finished picture, held or not
      p.status = status.status;
      p.error = status.error ?? null;
      if (status.iteration !== undefined && status.iteration !== null) p.iteration = status.iteration;
      p.paused = false;
      if (p.status === 'done') p.progress = 1;
    };
  }

  async _fetchResult(p, n) {
    const result = await this.api.jobResult(p.jobId, n);
    p.data = result.data;
    p.cols = result.cols;
    p.info = result.info;
  }

  /** Pauses or resumes a running server job. */
  async togglePause(p) {
    if (!p.running || !p.jobId) return;
    try {
      const status = p.paused ? await this.api.resumeJob(p.jobId) : await this.api.pauseJob(p.jobId);
      p.paused = Boolean(status.paused);
    } catch (err) {
      p.error = err.message;
    }
    this.onChange(p);
  }

  /** Stops a running server job; its last frame stays. */
  async cancel(p) {
    if (!p.running || !p.jobId) return;
    try {
      const status = await this.api.cancelJob(p.jobId);
      p.status = status.status || 'cancelled';
    } catch (err) {
      p.error = err.message;
    }
    this.onChange(p);
  }

  /** PCA or custom for an uploaded data set, computed in the browser (PCA in a worker). */
  runLocally(dataset, method, params, dims) {
    const p = new Projection(method, params, dims);
    p.status = 'running';
    p.finished = (async () => {
      try {
        if (method === 'pca') {
          const result = await pcaInWorker(dataset.vectors, dataset.n, dataset.d, params.spherize);
          p.data = result.coords;
          p.cols = result.k;
          p.info = { explained_variance_ratio: result.varianceRatio };
        } else if (method === 'custom') {
          const values = dataset.values(params.column) ?? new Array(dataset.n).fill('');
          const result = customProjection(dataset.vectors, dataset.n, dataset.d, values, params);
          p.data = result.coords;
          p.cols = 2;
          p.info = { matches: result.matches };
        } else {
          throw new Error(`${method} runs on the server: put the data in the LOGDIR to use it`);
        }
        p.status = 'done';
        p.progress = 1;
      } catch (err) {
        p.status = 'failed';
        p.error = err.message;
      }
      this.onChange(p);
      return p;
    })();
    this.onChange(p);
    return p;
  }
}

function pcaInWorker(vectors, n, d, spherize) {
  return new Promise((resolve, reject) => {
    let worker;
    try {
      worker = new Worker(new URL('./pca_worker.js', import.meta.url), { type: 'module' });
    } catch {
      resolve(pca(vectors, n, d, { spherize }));
      return;
    }
    worker.onmessage = (event) => {
      worker.terminate();
      if (event.data.error) reject(new Error(event.data.error));
      else resolve(event.data);
    };
    worker.onerror = (event) => {
      worker.terminate();
      reject(new Error(event.message || 'PCA failed'));
    };
    worker.postMessage({ vectors, n, d, spherize });
  });
}
