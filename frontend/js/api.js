// The REST + WebSocket client. Binary bodies (tensors, coordinates, frames) arrive as
// Float32Array views of the received bytes, never as arrays of objects. Paths are relative
// to the page, so the app also works behind a path prefix.

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

async function errorOf(response) {
  let detail = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && typeof body.detail === 'string') detail = body.detail;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, detail);
}

/** Reads a response body into one ArrayBuffer, reporting (received, total) as it goes. */
async function readBody(response, total, onProgress) {
  if (!response.body || !total) return response.arrayBuffer();
  const out = new Uint8Array(total);
  const reader = response.body.getReader();
  let received = 0;
  let lastReport = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (received + value.length > out.length) {
      // The server sent more than announced: fall back to growing the buffer.
      const bigger = new Uint8Array(Math.max(out.length * 2, received + value.length));
      bigger.set(out.subarray(0, received));
      return finishGrowing(reader, bigger, received, value, onProgress, total);
    }
    out.set(value, received);
    received += value.length;
    const now = performance.now();
    if (onProgress && now - lastReport > 50) {
      lastReport = now;
      onProgress(received, total);
    }
  }
  if (onProgress) onProgress(received, total);
  return out.buffer.slice(0, received);
}

async function finishGrowing(reader, buffer, received, value, onProgress, total) {
  let out = buffer;
  let size = received;
  let chunk = value;
  while (chunk) {
    if (size + chunk.length > out.length) {
      const bigger = new Uint8Array(Math.max(out.length * 2, size + chunk.length));
      bigger.set(out.subarray(0, size));
      out = bigger;
    }
    out.set(chunk, size);
    size += chunk.length;
    if (onProgress) onProgress(Math.min(size, total), total);
    const next = await reader.read();
    chunk = next.done ? null : next.value;
  }
  return out.buffer.slice(0, size);
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
  }

  url(path, params = {}) {
    const url = new URL(`api/${path}`, this.base);
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value));
    }
    return url;
  }

  async _fetch(path, { params, method = 'GET', body, headers = {} } = {}) {
    const init = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['Content-Type'] = 'application/json';
    }
    const response = await fetch(this.url(path, params), init);
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  async _json(path, options) {
    return (await this._fetch(path, options)).json();
  }

  runs() {
    return this._json('runs');
  }

  async metadata(run, embedding, onProgress) {
    const response = await this._fetch('metadata', { params: { run, embedding } });
    const total = Number(response.headers.get('Content-Length')) || 0;
    const buffer = await readBody(response, total, onProgress);
    return new TextDecoder().decode(buffer);
  }

  /** The raw tensor as { data: Float32Array, n, d }. */
  async tensor(run, embedding, onProgress) {
    const response = await this._fetch('tensor', { params: { run, embedding } });
    const [n, d] = shapeOf(response);
    const buffer = await readBody(response, n * d * 4, onProgress);
    return { data: new Float32Array(buffer), n, d };
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

  search(run, embedding, column, query, regex) {
    return this._json('search', { params: { run, embedding, column, query, regex } });
  }

  /** Starts a projection job; resolves to its id. */
  async startProjection(request) {
    const body = await this._json('projections', { method: 'POST', body: request });
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

  /**
   * A finished job's coordinates as { data: Float32Array, cols, info }, fetched as bytes;
   * `info` comes from the X-Info header.
   */
  async jobResult(id, n, onProgress) {
    const path = `jobs/${encodeURIComponent(id)}/result`;
    const response = await this._fetch(path, { headers: { Accept: 'application/octet-stream' } });
    const type = response.headers.get('Content-Type') || '';
    if (type.includes('json')) return fromJsonResult(await response.json(), n);
    const shape = shapeOf(response);
    const total = Number(response.headers.get('Content-Length')) || (shape ? shape[0] * shape[1] * 4 : 0);
    const buffer = await readBody(response, total, onProgress);
    const data = new Float32Array(buffer);
    const cols = shape ? shape[1] : data.length / n;
    let info = null;
    const infoHeader = response.headers.get('X-Info');
    if (infoHeader) {
      try {
        info = JSON.parse(infoHeader);
      } catch {
        info = null;
      }
    }
    return { data, cols, info };
  }

  /**
   * Follows a job over its WebSocket: `onStatus(json)` for its text messages (progress,
   * frame headers, the final status with the result's info), `onFrame(Float32Array)` for
   * coordinate frames. Resolves with the last message when the server closes the stream;
   * falls back to polling when WebSockets fail.
   */
  follow(id, { onStatus = () => {}, onFrame = () => {} }) {
    const url = this.url(`jobs/${encodeURIComponent(id)}/stream`);
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

  async _poll(id, onStatus) {
    for (;;) {
      const status = await this.job(id);
      onStatus(status);
      if (!['queued', 'running'].includes(status.status)) return status;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
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
