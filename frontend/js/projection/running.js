// Running a projection (for Projection, projection.js): a server job requested and followed
// (t-SNE and UMAP frame by frame over the job's stream, with its progress, phases,
// pause/resume and cancel, or for status alone when its points come as tiles; PCA and custom
// as one request), or PCA and custom computed in the browser for an uploaded data set. How
// the result comes is the projection's delivery's (points/point_source.js): these are its
// steps. Each update calls `p.onChange(p)`.

import { Unreachable } from '../api.js';
import { customProjection, pca } from '../kernels.js';
import { isQuick } from '../limits.js';
import { PREVIEW_ABOVE } from '../tiles/fetch.js';

/** @typedef {import('./projection.js').Projection} Projection */

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

/**
 * Starts the projection of a data set: in the browser for an uploaded one, else on the
 * server once `after` (the cancellation of the job it replaces) has settled. PCA and custom
 * are one request; t-SNE and UMAP are followed. `p.finished` resolves when it ends.
 * @param {Projection} p
 * @param {import('../dataset.js').Dataset} dataset
 * @param {Promise<unknown> | null} after
 */
export function start(p, dataset, after) {
  if (dataset.local) {
    runLocally(p, dataset);
    return;
  }
  const { method, params, dims } = p;
  const request = { run: dataset.run, embedding: dataset.name, method, dims, params };
  const work = p.delivery.run(p, request, dataset.n, isQuick(dataset, method));
  p.finished = (async () => {
    try {
      await after;
      await work();
    } catch (err) {
      // No server answered: the run was cut by its going, not failed (the app restarts it).
      p.status = err instanceof Unreachable ? 'interrupted' : 'failed';
      p.error = err instanceof Unreachable ? null : err.message;
    }
    p.onChange(p);
    return p;
  })();
}

/**
 * PCA or custom as one request, the whole result downloaded.
 * @param {Projection} p
 * @param {object} request
 * @param {number} n
 */
export function waitWhole(p, request, n) {
  return async () => {
    p.status = 'running';
    // A large set's job id comes first, so that a first picture (a level-of-detail slice)
    // can be fetched while the whole result is computed and downloaded.
    if (n > PREVIEW_ABOVE) p.jobId = await p.api.startProjection(request);
    p.onChange(p);
    // The slice goes first when it comes soon (a cached job), not behind the whole result.
    if (p.previewLoad) await Promise.race([p.previewLoad, new Promise((r) => setTimeout(r, PREVIEW_WAIT_MS))]);
    const result = await p.api.projectNow(request, n);
    Object.assign(p, { data: result.data, cols: result.cols, info: result.info, jobId: result.jobId });
    p.status = 'done';
    p.progress = 1;
  };
}

/**
 * The job started, its id in hand (a first picture can come from its early tiles).
 * `followed`: its stream will be followed (t-SNE, UMAP).
 * @param {Projection} p
 * @param {object} request
 */
export async function startJob(p, request, { followed }) {
  if (!followed) p.status = 'running';
  p.jobId = await p.api.startProjection(request, { followed });
  p.status = 'running';
  p.onChange(p);
}

/**
 * A job followed for status alone (progress, phase, pause; the server sends no frame):
 * its final status.
 * @param {Projection} p
 */
export async function followStatus(p) {
  const final = await p.api.follow(p.jobId, { onStatus: (s) => heard(p, s), frames: false });
  return finalStatus(p, final);
}

/** A followed job's message: its status, progress, phase, pause and info. */
function heard(p, s) {
  // 'done' is said once the result is in hand (its coordinates or its tiles), never before.
  if (s.status && s.status !== 'done') p.status = s.status;
  if (typeof s.progress === 'number') p.progress = s.progress;
  if (s.iteration !== undefined && s.iteration !== null) p.iteration = s.iteration;
  if (s.phase !== undefined) p.phase = s.phase;
  if (s.phase_progress !== undefined) p.phaseProgress = s.phase_progress;
  if (s.error) p.error = s.error;
  if (typeof s.paused === 'boolean') p.paused = s.paused;
  if (s.info) p.info = s.info;
  p.onChange(p);
}

/** The job's status once its stream closed (asked again when the stream ended early). */
async function finalStatus(p, final) {
  return final?.status && final.status !== 'running' ? final : p.api.job(p.jobId);
}

/**
 * Takes a job's final status, its result being in hand.
 * @param {Projection} p
 * @param {{ status: string, error?: string | null, iteration?: number | null }} status
 */
export function ended(p, status) {
  // Cancelled without this page asking: its server stopped it (it stops its jobs as it
  // stops), or someone else did; the app tells the two apart (controller/projecting.js).
  p.status = status.status === 'cancelled' && !p.stopAsked ? 'interrupted' : status.status;
  p.error = status.error ?? null;
  if (status.iteration !== undefined && status.iteration !== null) p.iteration = status.iteration;
  p.paused = false;
  if (p.status === 'done') p.progress = 1;
}

/**
 * t-SNE or UMAP followed frame by frame, its last frame (or its result) in hand at the end.
 * @param {Projection} p
 * @param {object} request
 * @param {number} n
 */
export function followFrames(p, request, n) {
  return async () => {
    await startJob(p, request, { followed: true });
    let lastFrame = null;
    const final = await p.api.follow(p.jobId, {
      onStatus: (s) => heard(p, s),
      onFrame: (frame) => {
        if (frame.length % n !== 0 || frame.length === 0) return;
        lastFrame = frame;
        p.frames++;
        // An early frame squeezed to a line (t-SNE's exaggeration phase) is held back:
        // the last readable picture stays, also when the run is stopped there (the last
        // frame of a stopped run is such a frame too).
        if (p.data && exaggerating(p) && !readableSpread(frame, frame.length / n)) {
          p.onChange(p);
          return;
        }
        p.data = frame;
        p.cols = frame.length / n;
        p.onChange(p);
      },
    });
    const status = await finalStatus(p, final);
    if (status.status === 'done' && (!lastFrame || !p.info)) {
      const result = await p.api.jobResult(p.jobId, n);
      Object.assign(p, { data: result.data, cols: result.cols, info: result.info });
    } else if (status.status === 'done') {
      p.data = lastFrame; // the finished picture, held or not
    }
    ended(p, status);
  };
}

/**
 * Pauses or resumes a running server job.
 * @param {Projection} p
 */
export async function togglePause(p) {
  if (!p.running || !p.jobId) return;
  try {
    const status = p.paused ? await p.api.resumeJob(p.jobId) : await p.api.pauseJob(p.jobId);
    p.paused = Boolean(status.paused);
  } catch (err) {
    p.error = err.message;
  }
  p.onChange(p);
}

/**
 * Stops a running server job; its last frame stays.
 * @param {Projection} p
 */
export async function cancel(p) {
  if (!p.running || !p.jobId) return;
  p.stopAsked = true;
  try {
    const status = await p.api.cancelJob(p.jobId);
    p.status = status.status || 'cancelled';
  } catch (err) {
    p.error = err.message;
  }
  p.onChange(p);
}

/**
 * PCA or custom for an uploaded data set, computed in the browser (PCA in a worker).
 * @param {Projection} p
 * @param {import('../dataset.js').Dataset} dataset
 */
function runLocally(p, dataset) {
  const { method, params } = p;
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
    p.onChange(p);
    return p;
  })();
  p.onChange(p);
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
