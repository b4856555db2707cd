// The REST + WebSocket client. Binary bodies (coordinates, frames) arrive as
// Float32Array views of the received bytes, never as arrays of objects. Paths are relative
// to the page, so the app also works behind a path prefix.

import { parseStringList } from './json_strings.js';

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} detail
   * @param {any} [body]  the error's whole JSON body (a 503's job and progress), if any
   */
  constructor(status, detail, body = null) {
    super(detail);
    this.status = status;
    this.body = body;
  }
}

/** No server answered (it stopped, or the network went): not the user's doing, nor a refusal.
 * The page says so and carries on once it is back (controller/connection.js). */
export class Unreachable extends ApiError {
  constructor() {
    super(0, 'server unreachable');
  }
}

/** The ApiError of a failed response: the server's `detail`, else its status line. The page's
 * one reading of an error body (fetches outside `Api`, like uploads, use it too). */
export async function errorOf(response) {
  let detail = `${response.status} ${response.statusText}`;
  let body = null;
  try {
    body = await response.json();
    if (body && typeof body.detail === 'string') detail = body.detail;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, detail, body);
}

/** Reads a response body into one ArrayBuffer, reporting (received, total) as it goes. */
async function readBody(response, total, onProgress) {
  if (!response.body || !onProgress) return response.arrayBuffer();
  const chunks = [];
  let received = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.length;
    onProgress(received, total);
  }
  const out = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out.buffer;
}

function shapeOf(response) {
  const header = response.headers.get('X-Shape');
  if (!header) return null;
  const shape = header.split(',').map((s) => Number(s.trim()));
  return shape.length === 2 && shape.every(Number.isFinite) ? shape : null;
}

export class Api {
  constructor(base = document.baseURI) {
    this.base = base;
    /** A shared site's (static_mode.js StaticApi) answers from its files, with no server. */
    this.isStatic = false;
    /** @type {(() => void) | null} told when a request finds no server (controller/connection.js) */
    this.onUnreachable = null;
  }

  /** api/PATH with `params` (an array: the parameter repeated, once per value). */
  url(path, params = {}) {
    const url = new URL(`api/${path}`, this.base);
    for (const [key, value] of Object.entries(params)) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const each of value) url.searchParams.append(key, String(each));
      else url.searchParams.set(key, String(value));
    }
    return url;
  }

  /**
   * @param {string} path  under api/
   * @param {{ params?: Record<string, any>, method?: string, body?: any, headers?: Record<string, string>, signal?: AbortSignal }} [options]
   * @returns {Promise<Response>}
   */
  async _fetch(path, { params = {}, method = 'GET', body = undefined, headers = {}, signal = undefined } = {}) {
    const init = { method, headers: { ...headers }, signal };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['Content-Type'] = 'application/json';
    }
    let response;
    try {
      response = await fetch(this.url(path, params), init);
    } catch (err) {
      if (err?.name === 'AbortError') throw err; // the page's own cancel
      this.onUnreachable?.();
      throw new Unreachable();
    }
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  async _json(path, options) {
    return (await this._fetch(path, options)).json();
  }

  /**
   * GET api/PATH as JSON; an error status becomes an ApiError with the server's detail.
   * @param {string} path
   * @param {Record<string, any>} [params]
   * @param {{ signal?: AbortSignal }} [options]  `signal` aborts it (a cancelled measure)
   */
  getJson(path, params = {}, { signal = undefined } = {}) {
    return this._json(path, { params, signal });
  }

  runs() {
    return this._json('runs');
  }

  /** GET /api/health: whether the server answers (an Unreachable when it does not). */
  health() {
    return this._json('health');
  }

  /** The parameter table (GET /api/projections/methods), with an embedding's data limits and
   * defaults when `run` and `embedding` are given. */
  methods(run = null, embedding = null) {
    return this._json('projections/methods', { params: run === null ? {} : { run, embedding } });
  }

  async metadata(run, embedding, onProgress) {
    const response = await this._fetch('metadata', { params: { run, embedding } });
    const total = Number(response.headers.get('Content-Length')) || 0;
    const buffer = await readBody(response, total, onProgress);
    return new TextDecoder().decode(buffer);
  }

  spriteUrl(run, embedding) {
    return this.url('sprite', { run, embedding }).href;
  }

  bookmarks(run, embedding) {
    return this._json('bookmarks', { params: { run, embedding } });
  }

  neighbors(run, embedding, index, k, metric) {
    return this._json('neighbors', { params: { run, embedding, index, k, metric } });
  }

  /**
   * Search by meaning (GET /api/search/meaning): each phrase's `k` nearest points, and with a
   * finished projection `job` its marker there. A 503 (the model still loading) is an
   * ApiError whose body has the job and its progress.
   * @param {string} run
   * @param {string} embedding
   * @param {string[]} texts
   * @param {number} k
   * @param {string | null} job
   */
  searchMeaning(run, embedding, texts, k, job = null) {
    return this._json('search/meaning', { params: { run, embedding, text: texts, k, job } });
  }

  /** Search by example: the `k` nearest points to the centroid of `rows`, they left out
   * (POST /api/neighbors with rows). */
  neighborsOfRows(run, embedding, rows, k, metric) {
    return this._json('neighbors', { method: 'POST', body: { run, embedding, rows, k, metric } });
  }

  search(run, embedding, column, query, regex) {
    return this._json('search', { params: { run, embedding, column, query, regex } });
  }

  /** Starts a projection job; resolves to its id. */
  /**
   * Starts a projection job. `followed`: this page follows it (stream or polls), and the
   * server cancels it once nothing has for a grace period (the tab closed).
   */
  async startProjection(request, { followed = false } = {}) {
    const params = followed ? { cancel_unfollowed: true } : undefined;
    const body = await this._json('projections', { method: 'POST', body: request, params });
    return body.job;
  }

  job(id) {
    return this._json(`jobs/${encodeURIComponent(id)}`);
  }

  cancelJob(id) {
    return this._json(`jobs/${encodeURIComponent(id)}`, { method: 'DELETE' });
  }

  /** Holds a running t-SNE/UMAP job at its next step (the server keeps its state). */
  pauseJob(id) {
    return this._json(`jobs/${encodeURIComponent(id)}/pause`, { method: 'POST' });
  }

  resumeJob(id) {
    return this._json(`jobs/${encodeURIComponent(id)}/resume`, { method: 'POST' });
  }

  /** A finished job's coordinates as { data: Float32Array, cols, info, jobId }. */
  async jobResult(id, n) {
    const path = `jobs/${encodeURIComponent(id)}/result`;
    return resultOf(await this._fetch(path, { headers: { Accept: 'application/octet-stream' } }), n);
  }

  /** A done job's level-of-detail order (Int32Array) over the coordinate columns `axes`. */
  async lod(id, axes) {
    const path = `jobs/${encodeURIComponent(id)}/lod`;
    const response = await this._fetch(path, { params: { axes: axes.join(',') } });
    return new Int32Array(await response.arrayBuffer());
  }

  /**
   * One metadata column as typed arrays: { kind: 'categorical', dictionary, codes: Int32Array }
   * or { kind: 'numeric', values: Float32Array }.
   */
  async metadataColumn(run, embedding, column, kind = 'categorical') {
    const response = await this._fetch('metadata/column', { params: { run, embedding, column, kind } });
    const buffer = await response.arrayBuffer();
    if (response.headers.get('X-Kind') === 'numeric') return { kind: 'numeric', values: new Float32Array(buffer) };
    const head = Number(response.headers.get('X-Dictionary-Bytes'));
    const dictionary = await parseStringList(new TextDecoder().decode(new Uint8Array(buffer, 0, head)));
    return { kind: 'categorical', dictionary, codes: new Int32Array(buffer, head) };
  }

  /**
   * Runs a projection and waits for it (?wait=true): one request answered with the float32
   * coordinates, for the quick methods (PCA, custom) and cached results.
   */
  async projectNow(request, n) {
    const response = await this._fetch('projections', {
      params: { wait: true },
      method: 'POST',
      body: request,
      headers: { Accept: 'application/octet-stream' },
    });
    return resultOf(response, n);
  }

  /**
   * Follows a job over its WebSocket: `onStatus(json)` for its text messages (progress,
   * frame headers, the final status with the result's info), `onFrame(Float32Array)` for
   * coordinate frames (`frames: false`: the server sends none, for a job shown from tiles).
   * Resolves with the last message when the server closes the stream; falls back to polling
   * when WebSockets fail.
   */
  /**
   * @param {string} id
   * @param {{ onStatus?: (status: any) => void, onFrame?: (frame: Float32Array) => void, frames?: boolean }} handlers
   */
  follow(id, { onStatus = (_status) => {}, onFrame = (_frame) => {}, frames = true }) {
    const url = this.url(`jobs/${encodeURIComponent(id)}/stream`, frames ? {} : { frames: false });
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return new Promise((resolve) => {
      let last = null;
      let opened = false;
      const ws = new WebSocket(url);
      ws.binaryType = 'arraybuffer';
      ws.onopen = () => {
        opened = true;
      };
      ws.onmessage = (event) => {
        if (typeof event.data === 'string') {
          try {
            last = JSON.parse(event.data);
            onStatus(last);
          } catch {
            // ignore a malformed progress message
          }
        } else {
          onFrame(new Float32Array(event.data));
        }
      };
      ws.onclose = () => {
        if (opened) resolve(last);
        else this._poll(id, onStatus).then(resolve);
      };
    });
  }

  // ---- annotations and saved bookmarks (the server's store; labelling/) ---------------------

  /** Who edits: `?user=NAME` in the page's address (X-Projector-User), else the server's "local". */
  _author() {
    const user = new URLSearchParams(globalThis.location?.search ?? '').get('user');
    return user ? { 'X-Projector-User': user } : {};
  }

  /** The embedding's annotation columns and whether the server keeps any: { enabled, reason, rule, columns }. */
  annotationColumns(run, embedding) {
    return this._json('annotations', { params: { run, embedding } });
  }

  /**
   * Sets `column` to `value` on `rows` (row numbers) or inside `selection` (a region of a done
   * job's map: { job, polygon | box, axes }), in one edit: the committed edit, its value's code.
   */
  annotate(body) {
    return this._json('annotations', { method: 'POST', body, headers: this._author() });
  }

  /** `undo` or `redo` this page's author's last edit of the embedding. */
  undoAnnotation(run, embedding, redo = false) {
    return this._json(`annotations/${redo ? 'redo' : 'undo'}`, { method: 'POST', body: { run, embedding }, headers: this._author() });
  }

  saveBookmark(run, embedding, state) {
    return this._json('bookmarks', { method: 'POST', body: { run, embedding, state }, headers: this._author() });
  }

  deleteBookmark(run, embedding, id) {
    return this._json('bookmarks', { method: 'DELETE', params: { run, embedding, id }, headers: this._author() });
  }

  async _poll(id, onStatus) {
    for (;;) {
      const status = await this.job(id);
      onStatus(status);
      if (!['queued', 'running'].includes(status.status)) return status;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

/** Coordinates from a result response: float32 bytes (X-Shape, X-Info) or the JSON form. */
async function resultOf(response, n) {
  const jobId = response.headers.get('X-Job');
  const type = response.headers.get('Content-Type') || '';
  if (type.includes('json')) return { ...fromJsonResult(await response.json(), n), jobId };
  const shape = shapeOf(response);
  const data = new Float32Array(await response.arrayBuffer());
  let info = null;
  try {
    info = JSON.parse(response.headers.get('X-Info') || 'null');
  } catch {
    info = null;
  }
  return { data, cols: shape ? shape[1] : data.length / n, info, jobId };
}

function fromJsonResult(body, n) {
  const rows = body.coordinates || [];
  const cols = rows.find((r) => Array.isArray(r))?.length ?? 0;
  const data = new Float32Array(n * cols);
  for (let i = 0; i < n; i++) {
    const row = rows[i];
    for (let j = 0; j < cols; j++) data[i * cols + j] = row && row[j] !== null ? row[j] : NaN;
  }
  return { data, cols, info: body.info || null };
}
