// Running a projection (methods of Projection, projection.js): a server job requested and
// followed (t-SNE and UMAP frame by frame over the job's stream, with its progress, phases,
// pause/resume and cancel, or for status alone and then opened as tiles when too large to
// come whole; PCA and custom as one request, or opened as tiles), or PCA and
// custom computed in the browser for an uploaded data set. Each update calls
// `this.onChange(this)`.

import { customProjection, pca } from '../kernels.js';
import { isQuick } from '../limits.js';
import { TiledProjection } from '../tiles/tile_points.js';
import { PREVIEW_ABOVE } from '../tiles/fetch.js';

/** How long the whole result waits for a large set's first slice (see _wait). */
const PREVIEW_WAIT_MS = 3000;

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

export class ProjectionRunning {
  /**
   * Starts the projection of a data set: in the browser for an uploaded one (runLocally),
   * else on the server once `after` (the cancellation of the job it replaces) has settled.
   */
  start(dataset, after = null) {
    if (dataset.local) this._runLocally(dataset);
    else this._runOnServer(dataset, after);
  }

  /**
   * A server projection, started once `after` has settled, so the server never hands back
   * the job being cancelled. PCA and custom are one blocking request; t-SNE and UMAP are
   * followed frame by frame. `this.finished` resolves when it ends.
   */
  _runOnServer(dataset, after) {
    const { method, params, dims } = this;
    const request = { run: dataset.run, embedding: dataset.name, method, dims, params };
    const quick = isQuick(dataset, method);
    const work = this.tileAxes ? (quick ? this._waitTiled(request) : this._followTiled(request))
      : quick ? this._wait(request, dataset.n) : this._follow(request, dataset.n);
    this.finished = (async () => {
      try {
        await after;
        await work();
      } catch (err) {
        this.status = 'failed';
        this.error = err.message;
      }
      this.onChange(this);
      return this;
    })();
  }

  _wait(request, n) {
    return async () => {
      this.status = 'running';
      // A large set's job id comes first, so that a first picture (a level-of-detail slice)
      // can be fetched while the whole result is computed and downloaded.
      if (n > PREVIEW_ABOVE) this.jobId = await this.api.startProjection(request);
      this.onChange(this);
      // The slice goes first when it comes soon (a cached job), not behind the whole result.
      if (this.previewLoad) await Promise.race([this.previewLoad, new Promise((r) => setTimeout(r, PREVIEW_WAIT_MS))]);
      const result = await this.api.projectNow(request, n);
      Object.assign(this, { data: result.data, cols: result.cols, info: result.info, jobId: result.jobId });
      this.status = 'done';
      this.progress = 1;
    };
  }

  /**
   * A projection shown from tiles (tiled_projection.js): the job id at once (a first
   * picture from its early tiles), then its tile index, which the server answers once the
   * job is done; the whole set is never downloaded.
   */
  _waitTiled(request) {
    return async () => {
      this.status = 'running';
      this.jobId = await this.api.startProjection(request);
      this.onChange(this);
      const tiled = await TiledProjection.open(this.api, this.jobId, this.tileAxes);
      Object.assign(this, { tiled, cols: tiled.manifest.columns, info: tiled.manifest.info ?? null });
      this.status = 'done';
      this.progress = 1;
    };
  }

  /**
   * A t-SNE/UMAP shown from tiles (too large to come whole: `tsne_umap_tiles` in /api/runs):
   * its job followed for status alone (progress, phase, pause; the server sends no frame),
   * then its tile index opened once it is done; neither a frame nor `/result` is fetched.
   */
  _followTiled(request) {
    return async () => {
      await this._startFollowed(request);
      const final = await this.api.follow(this.jobId, { onStatus: (s) => this._heard(s), frames: false });
      const status = await this._finalStatus(final);
      if (status.status === 'done') {
        const tiled = await TiledProjection.open(this.api, this.jobId, this.tileAxes);
        Object.assign(this, { tiled, cols: tiled.manifest.columns, info: tiled.manifest.info ?? this.info });
      }
      this._ended(status);
    };
  }

  async _startFollowed(request) {
    this.jobId = await this.api.startProjection(request, { followed: true });
    this.status = 'running';
    this.onChange(this);
  }

  /** A followed job's message: its status, progress, phase, pause and info. */
  _heard(s) {
    // 'done' is said once the result is in hand (its coordinates or its tiles), never before.
    if (s.status && s.status !== 'done') this.status = s.status;
    if (typeof s.progress === 'number') this.progress = s.progress;
    if (s.iteration !== undefined && s.iteration !== null) this.iteration = s.iteration;
    if (s.phase !== undefined) this.phase = s.phase;
    if (s.phase_progress !== undefined) this.phaseProgress = s.phase_progress;
    if (s.error) this.error = s.error;
    if (typeof s.paused === 'boolean') this.paused = s.paused;
    if (s.info) this.info = s.info;
    this.onChange(this);
  }

  /** The job's status once its stream closed (asked again when the stream ended early). */
  async _finalStatus(final) {
    return final?.status && final.status !== 'running' ? final : this.api.job(this.jobId);
  }

  /** Takes a followed job's final status, its result being in hand. */
  _ended(status) {
    this.status = status.status;
    this.error = status.error ?? null;
    if (status.iteration !== undefined && status.iteration !== null) this.iteration = status.iteration;
    this.paused = false;
    if (this.status === 'done') this.progress = 1;
  }

  _follow(request, n) {
    return async () => {
      await this._startFollowed(request);
      let lastFrame = null;
      const final = await this.api.follow(this.jobId, {
        onStatus: (s) => this._heard(s),
        onFrame: (frame) => {
          if (frame.length % n !== 0 || frame.length === 0) return;
          lastFrame = frame;
          this.frames++;
          // An early frame squeezed to a line (t-SNE's exaggeration phase) is held back:
          // the last readable picture stays, also when the run is stopped there (the last
          // frame of a stopped run is such a frame too).
          if (this.data && exaggerating(this) && !readableSpread(frame, frame.length / n)) {
            this.onChange(this);
            return;
          }
          this.data = frame;
          this.cols = frame.length / n;
          this.onChange(this);
        },
      });
      const status = await this._finalStatus(final);
      if (status.status === 'done' && (!lastFrame || !this.info)) await this._fetchResult(n);
      else if (status.status === 'done') this.data = lastFrame; // the finished picture, held or not
      this._ended(status);
    };
  }

  async _fetchResult(n) {
    const result = await this.api.jobResult(this.jobId, n);
    this.data = result.data;
    this.cols = result.cols;
    this.info = result.info;
  }

  /** Pauses or resumes a running server job. */
  async togglePause() {
    if (!this.running || !this.jobId) return;
    try {
      const status = this.paused ? await this.api.resumeJob(this.jobId) : await this.api.pauseJob(this.jobId);
      this.paused = Boolean(status.paused);
    } catch (err) {
      this.error = err.message;
    }
    this.onChange(this);
  }

  /** Stops a running server job; its last frame stays. */
  async cancel() {
    if (!this.running || !this.jobId) return;
    try {
      const status = await this.api.cancelJob(this.jobId);
      this.status = status.status || 'cancelled';
    } catch (err) {
      this.error = err.message;
    }
    this.onChange(this);
  }

  /** PCA or custom for an uploaded data set, computed in the browser (PCA in a worker). */
  _runLocally(dataset) {
    const { method, params } = this;
    this.status = 'running';
    this.finished = (async () => {
      try {
        if (method === 'pca') {
          const result = await pcaInWorker(dataset.vectors, dataset.n, dataset.d, params.spherize);
          this.data = result.coords;
          this.cols = result.k;
          this.info = { explained_variance_ratio: result.varianceRatio };
        } else if (method === 'custom') {
          const values = dataset.values(params.column) ?? new Array(dataset.n).fill('');
          const result = customProjection(dataset.vectors, dataset.n, dataset.d, values, params);
          this.data = result.coords;
          this.cols = 2;
          this.info = { matches: result.matches };
        } else {
          throw new Error(`${method} runs on the server: put the data in the LOGDIR to use it`);
        }
        this.status = 'done';
        this.progress = 1;
      } catch (err) {
        this.status = 'failed';
        this.error = err.message;
      }
      this.onChange(this);
      return this;
    })();
    this.onChange(this);
  }
}

function pcaInWorker(vectors, n, d, spherize) {
  return new Promise((resolve, reject) => {
    let worker;
    try {
      worker = new Worker(new URL('../pca_worker.js', import.meta.url), { type: 'module' });
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
