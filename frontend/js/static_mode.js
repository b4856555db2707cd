// Static mode: the app as a shared site (`projector export`), with no server behind it. The
// page carries <meta name="projector-static" content="static.json">; StaticApi then answers
// what the app asks /api/ for from the precomputed files the manifest lists (same shapes as
// the server's answers, so the rest of the front end does not know the difference), and
// installStaticMode hides what needs a server: new projections and their controls, uploads,
// comparison, the site export. Nothing here ever requests /api/.

import { Api, ApiError } from './api.js';
import { decodeColumn } from './columns.js';
import { search as localSearch } from './kernels.js';

const TAG = 'meta[name="projector-static"]';
const METHOD_NAMES = { pca: 'PCA', tsne: 't-SNE', umap: 'UMAP', custom: 'Custom' };

/** Whether this page is a shared static site. */
export function isStaticSite(doc = document) {
  return Boolean(doc.querySelector(TAG));
}

/** The bytes of a file of the site; a gzip file (by its magic bytes) is decompressed here. */
async function fetchBytes(url) {
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    const hint = location.protocol === 'file:' ? ' (browsers refuse files opened from file://: serve the folder, e.g. python -m http.server)' : '';
    throw new ApiError(0, `${url}: ${err.message}${hint}`);
  }
  if (!response.ok) throw new ApiError(response.status, `${url}: ${response.status} ${response.statusText}`);
  const buffer = await response.arrayBuffer();
  const head = new Uint8Array(buffer, 0, Math.min(2, buffer.byteLength));
  if (head[0] !== 0x1f || head[1] !== 0x8b) return buffer;
  const stream = new Blob([buffer]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Response(stream).arrayBuffer();
}

/** One categorical column file: uint32 head length, the dictionary as JSON, int32 codes. */
export function parseColumnFile(buffer) {
  const head = new DataView(buffer).getUint32(0, true);
  const dictionary = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, head)));
  return { kind: 'categorical', dictionary, codes: new Int32Array(buffer, 4 + head) };
}

/** A point's neighbour list from its chunk file (rows x k int32, then rows x k float32). */
export function neighborsFromChunk(buffer, rows, k, row, wanted) {
  const indices = new Int32Array(buffer, 0, rows * k);
  const distances = new Float32Array(buffer, rows * k * 4, rows * k);
  const out = [];
  for (let j = 0; j < Math.min(k, wanted); j++) {
    const index = indices[row * k + j];
    if (index < 0) break;
    out.push({ index, distance: distances[row * k + j] });
  }
  return out;
}

export class StaticApi extends Api {
  constructor(base = document.baseURI, manifestPath = document.querySelector(/** @type {'meta'} */ (TAG))?.content || 'static.json') {
    super(base);
    this.isStatic = true;
    this.manifestUrl = new URL(manifestPath, base);
    this.manifest = null;
    this.files = new Map();
  }

  fileUrl(path) {
    return new URL(path, this.manifestUrl).href;
  }

  async loadManifest() {
    if (!this.manifest) {
      this.manifest = fetchBytes(this.manifestUrl.href).then((b) => JSON.parse(new TextDecoder().decode(b)));
    }
    return this.manifest;
  }

  /** A file's bytes, fetched once. */
  _file(path) {
    if (!this.files.has(path)) {
      const pending = fetchBytes(this.fileUrl(path));
      pending.catch(() => this.files.delete(path));
      this.files.set(path, pending);
    }
    return this.files.get(path);
  }

  async _entry(run, embedding) {
    const manifest = await this.loadManifest();
    const entry = manifest.embeddings.find((e) => e.run === run && e.embedding === embedding);
    if (!entry) throw new ApiError(404, `${run}/${embedding} is not in this shared site`);
    return entry;
  }

  /** Every path this site cannot answer: an error, never a request. */
  /** @returns {URL} never: it throws */
  url(path, params = {}) {
    if (path === 'sprite/atlas' || path === 'sprite/page') {
      throw new ApiError(404, 'sprite files are read through loadSpriteFiles in a shared site');
    }
    throw new ApiError(404, `${path} needs a Projector server; this is a shared static site`);
  }

  /** @returns {Promise<Response>} never: it throws */
  async _fetch(path, _options = {}) {
    throw new ApiError(404, `${path} needs a Projector server; this is a shared static site`);
  }

  async runs() {
    return (await this.loadManifest()).runs;
  }

  /** The parameter table the site was exported with: an embedding's, or without one the plain table. */
  async methods(run = null, embedding = null) {
    if (run === null) return (await this.loadManifest()).methods ?? null; // the table without data
    return (await this._entry(run, embedding)).methods ?? null;
  }

  async metadata(run, embedding, onProgress) {
    const entry = await this._entry(run, embedding);
    if (!entry.metadata?.tsv) throw new ApiError(404, `${run}/${embedding} has no metadata file in this site`);
    const buffer = await this._file(entry.metadata.tsv);
    onProgress?.(buffer.byteLength, buffer.byteLength);
    return new TextDecoder().decode(buffer);
  }

  async metadataColumn(run, embedding, column) {
    const entry = await this._entry(run, embedding);
    const path = entry.metadata?.columns?.[column];
    if (!path) throw new ApiError(422, `unknown metadata column ${JSON.stringify(column)}`);
    return parseColumnFile(await this._file(path));
  }

  async bookmarks(run, embedding) {
    const entry = await this._entry(run, embedding);
    if (!entry.bookmarks) return [];
    return JSON.parse(new TextDecoder().decode(await this._file(entry.bookmarks)));
  }

  async neighbors(run, embedding, index, k, metric) {
    const entry = await this._entry(run, embedding);
    const { k: stored, chunk_rows: chunkRows, metrics } = entry.neighbors;
    const files = metrics[metric];
    if (!files) {
      throw new ApiError(422, `neighbours by ${metric} distance were not exported with this site; it has ${Object.keys(metrics).join(', ')}`);
    }
    if (!(index >= 0 && index < entry.n)) throw new ApiError(422, `index ${index} out of range: ${run}/${embedding} has ${entry.n} points (0..${entry.n - 1})`);
    const chunk = Math.floor(index / chunkRows);
    const rows = Math.min(chunkRows, entry.n - chunk * chunkRows);
    const buffer = await this._file(`${files.folder}/${String(chunk).padStart(5, '0')}${files.suffix}`);
    return { neighbors: neighborsFromChunk(buffer, rows, stored, index - chunk * chunkRows, k) };
  }

  async search(run, embedding, column, query, regex) {
    const { dictionary, codes } = await this.metadataColumn(run, embedding, column);
    try {
      return { indices: localSearch(await decodeColumn(dictionary, codes), query, regex) };
    } catch (err) {
      throw new ApiError(422, err.message);
    }
  }

  // ---- projections: the exported results, as finished jobs ---------------------------------

  async _projection(request) {
    const entry = await this._entry(request.run, request.embedding);
    const p = entry.projections[request.method];
    if (!p) throw new ApiError(404, `${METHOD_NAMES[request.method] ?? request.method} was not exported with this site`);
    return { entry, p, id: `static:${entry.dir}:${request.method}` };
  }

  async _byId(id) {
    const [, dir, method] = id.split(':');
    const manifest = await this.loadManifest();
    const entry = manifest.embeddings.find((e) => e.dir === dir);
    const p = entry?.projections[method];
    if (!p) throw new ApiError(404, `unknown job ${id}`);
    return { entry, p };
  }

  async startProjection(request) {
    return (await this._projection(request)).id;
  }

  async job(id) {
    const { p } = await this._byId(id);
    return { id, status: 'done', progress: 1, iteration: null, error: null, paused: false, info: p.info };
  }

  /** @param {string} id @param {{ onStatus?: (status: any) => void, onFrame?: (frame: Float32Array) => void, frames?: boolean }} handlers */
  async follow(id, { onStatus = (_status) => {} } = {}) {
    const status = await this.job(id);
    onStatus(status);
    return status;
  }

  async jobResult(id) {
    const { p } = await this._byId(id);
    const data = new Float32Array(await this._file(p.file));
    return { data, cols: p.cols, info: p.info, jobId: id };
  }

  async projectNow(request) {
    return this.jobResult((await this._projection(request)).id);
  }

  async lod(id, axes) {
    const { p } = await this._byId(id);
    const path = p.lod[axes.join(',')];
    if (!path) throw new ApiError(404, `this site has level-of-detail orders over axes ${Object.keys(p.lod).join(' and ')} only`);
    return new Int32Array(await this._file(path));
  }

  async pauseJob(id) {
    return this.job(id);
  }

  async resumeJob(id) {
    return this.job(id);
  }

  async cancelJob(id) {
    return this.job(id);
  }

  /** The sprite's atlas layout and page images, as the server's atlas routes answer them. */
  async spriteFiles(run, embedding) {
    const entry = await this._entry(run, embedding);
    if (!entry.sprite) throw new ApiError(404, `${run}/${embedding} has no sprite in this site`);
    const layout = JSON.parse(new TextDecoder().decode(await this._file(entry.sprite.atlas)));
    return { layout, pageUrl: (index) => this.fileUrl(entry.sprite.pages[index]) };
  }
}

const HIDDEN = [
  '[data-testid="compare-link"]',
  '[data-testid="tab-custom"]',
  'details.subsection:has([data-testid="upload-tensor"])',
  'label.check:has([data-testid="spherize"])',
  '[data-server-only]',
];

/**
 * Hides what a shared site cannot do (server-only controls and the projections it was not
 * exported with) and says what it is; the rest of the app works as it is.
 * @param {import('./app.js').App} app
 */
export async function installStaticMode(app) {
  document.documentElement.classList.add('static-site');
  const api = /** @type {StaticApi} */ (app.api); // a shared site's (app.js makes it)
  const manifest = await api.loadManifest().catch(() => null);
  const exported = new Set((manifest?.embeddings ?? []).flatMap((e) => Object.keys(e.projections)));
  const hidden = [...HIDDEN];
  for (const method of ['tsne', 'umap']) {
    if (!exported.has(method)) hidden.push(`[data-testid="tab-${method}"]`);
    hidden.push(`.tab-body[data-body="${method}"] > :not(.static-note)`);
    const body = document.querySelector(`.tab-body[data-body="${method}"]`);
    if (body && exported.has(method)) {
      const note = document.createElement('p');
      note.className = 'hint static-note';
      note.textContent = `${METHOD_NAMES[method]} as computed when this site was exported; parameters are fixed in a shared site.`;
      body.prepend(note);
    }
  }
  // Neighbours: only the exported metrics can be chosen; none exported, none asked for.
  const metrics = new Set((manifest?.embeddings ?? []).flatMap((e) => Object.keys(e.neighbors?.metrics ?? {})));
  const options = /** @type {NodeListOf<HTMLOptionElement>} */ (document.querySelectorAll('[data-testid="neighbors-metric"] option'));
  for (const option of options) option.disabled = !metrics.has(option.value);
  if (!metrics.size) {
    hidden.push('.field-row:has([data-testid="neighbors-k"])');
    const hint = document.querySelector('[data-testid="neighbors-hint"]');
    if (hint) hint.textContent = 'This shared site was exported without neighbour lists.';
  }
  const style = document.createElement('style');
  style.textContent = `${hidden.map((s) => `html.static-site ${s}`).join(',\n')} { display: none !important; }`;
  document.head.append(style);
  const brand = document.querySelector('.brand span');
  if (brand) brand.textContent = 'Projector · shared view';
}
