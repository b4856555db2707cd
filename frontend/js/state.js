// The one serialisable UI state: what a bookmark saves, what the URL hash holds, what every
// panel reads and writes. Pure functions: defaults, validation of untrusted input (URL,
// files), URL encoding. Ranges are not checked here: the parameter table (limits.js) has
// them, and clampState moves a value into them with a note once the data set's table is in.

import { tableDefaults } from './limits.js';

export const PROJECTIONS = ['pca', 'tsne', 'umap', 'custom'];
export const METRICS = ['cosine', 'euclidean'];
export const CUSTOM_SIDES = ['left', 'right', 'up', 'down'];

/** Most selected indices the URL carries; a larger selection lives in bookmarks only. */
export const URL_SELECTION_LIMIT = 2000;

/**
 * The state a fresh view starts from. The projection parameters are null, "the parameter
 * table's default": defaultStateFor fills in the data set's own, and a request is the table's
 * default request with the state's values over it (projecting.js requestFor).
 */
export function defaultState() {
  return {
    run: null,
    embedding: null,
    projection: 'pca',
    pca: { x: 0, y: 1, z: 2, is3d: true, spherize: /** @type {boolean | null} */ (null) },
    tsne: {
      is3d: false,
      perplexity: /** @type {number | null} */ (null),
      learningRate: /** @type {number | null} */ (null), // null: the table's choice ("auto")
      nIter: /** @type {number | null} */ (null),
      superviseColumn: /** @type {string | null} */ (null),
      superviseWeight: /** @type {number | null} */ (null),
    },
    umap: { is3d: false, nNeighbors: /** @type {number | null} */ (null), minDist: /** @type {number | null} */ (null) },
    custom: { column: null, left: '', right: '', up: '', down: '', regex: false },
    labelBy: null,
    colorBy: null,
    categorical: null,
    sprites: true,
    labels3d: false,
    sequences: true,
    density: false, // the structure overlay's density contours
    colorByQuality: false, // points coloured by projection quality (over colorBy) once measured
    selection: [],
    focus: null,
    isolated: null,
    neighbors: { k: 100, metric: 'cosine' },
    search: { column: null, query: '', regex: false },
    camera: null,
  };
}

/** The default state with the parameter table's defaults (for a server embedding, its data's:
 * perplexity for its N). Without a table, defaultState's. */
export function defaultStateFor(table) {
  const state = defaultState();
  for (const [method, values] of Object.entries(tableDefaults(table))) state[method] = { ...state[method], ...values };
  return state;
}

/** Per-data-set view defaults: PCA opens in 3D only when there is a third column to show (a
 * 2-column embedding opens in 2D, not with an empty Z) and the set is not shown from tiles
 * (`tiles`, the server's word: their quadtree is over two axes, and 3D takes the whole set). */
export function datasetDefaults(d, tiles = false) {
  return { pca3d: d >= 3 && !tiles };
}

/** Whether the state's projection is drawn in 3D (custom is always 2D). */
export function is3d(state) {
  const p = state.projection;
  return p === 'custom' ? false : Boolean(state[p].is3d);
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isIndex = (v) => Number.isInteger(v) && v >= 0;

function pick(value, fallback, valid) {
  return valid(value) ? value : fallback;
}

const finite = (v) => typeof v === 'number' && Number.isFinite(v);

function number(min, max) {
  return (v) => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
}

const string = (v) => typeof v === 'string';
const stringOrNull = (v) => v === null || typeof v === 'string';
const bool = (v) => typeof v === 'boolean';

function indices(value) {
  return Array.isArray(value) ? value.filter(isIndex) : [];
}

function camera(value) {
  if (!isObject(value)) return null;
  const vec3 = (v) => Array.isArray(v) && v.length === 3 && v.every(number(-1e6, 1e6));
  if (!vec3(value.target)) return null;
  return {
    target: value.target.slice(),
    theta: pick(value.theta, 0.8, number(-1e6, 1e6)),
    phi: pick(value.phi, 1.1, number(0, Math.PI)),
    distance: pick(value.distance, 3, number(1e-4, 1e6)),
    zoom: pick(value.zoom, 1, number(1e-4, 1e6)),
  };
}

/**
 * A complete, well-typed state from untrusted input (URL hash, bookmark file): every field
 * that is missing or of the wrong type falls back to its default in `d`, unknown fields are
 * dropped. Numbers out of range are kept for clampState, which says what it moved.
 */
export function sanitizeState(input, d = defaultState()) {
  if (!isObject(input)) return d;
  const sub = (key) => (isObject(input[key]) ? input[key] : {});
  const pca = sub('pca');
  const tsne = sub('tsne');
  const umap = sub('umap');
  const custom = sub('custom');
  const nb = sub('neighbors');
  const search = sub('search');
  return {
    run: pick(input.run, null, stringOrNull),
    embedding: pick(input.embedding, null, stringOrNull),
    projection: PROJECTIONS.includes(input.projection) ? input.projection : d.projection,
    pca: {
      x: pick(pca.x, d.pca.x, isIndex),
      y: pick(pca.y, d.pca.y, isIndex),
      z: pick(pca.z, d.pca.z, isIndex),
      is3d: pick(pca.is3d, d.pca.is3d, bool),
      spherize: pick(pca.spherize, d.pca.spherize, bool),
    },
    tsne: {
      is3d: pick(tsne.is3d, d.tsne.is3d, bool),
      perplexity: pick(tsne.perplexity, d.tsne.perplexity, finite),
      learningRate: pick(tsne.learningRate, d.tsne.learningRate, (v) => v === null || finite(v)),
      nIter: pick(tsne.nIter, d.tsne.nIter, finite),
      superviseColumn: pick(tsne.superviseColumn, null, stringOrNull),
      superviseWeight: pick(tsne.superviseWeight, d.tsne.superviseWeight, finite),
    },
    umap: {
      is3d: pick(umap.is3d, d.umap.is3d, bool),
      nNeighbors: pick(umap.nNeighbors, d.umap.nNeighbors, finite),
      minDist: pick(umap.minDist, d.umap.minDist, finite),
    },
    custom: {
      column: pick(custom.column, null, stringOrNull),
      left: pick(custom.left, '', string),
      right: pick(custom.right, '', string),
      up: pick(custom.up, '', string),
      down: pick(custom.down, '', string),
      regex: pick(custom.regex, false, bool),
    },
    labelBy: pick(input.labelBy, null, stringOrNull),
    colorBy: pick(input.colorBy, null, stringOrNull),
    categorical: pick(input.categorical, null, (v) => v === null || bool(v)),
    sprites: pick(input.sprites, true, bool),
    labels3d: pick(input.labels3d, false, bool),
    sequences: pick(input.sequences, true, bool),
    density: pick(input.density, false, bool),
    colorByQuality: pick(input.colorByQuality, false, bool),
    selection: indices(input.selection),
    focus: pick(input.focus, null, (v) => v === null || isIndex(v)),
    isolated: Array.isArray(input.isolated) ? indices(input.isolated) : null,
    neighbors: {
      k: pick(nb.k, d.neighbors.k, (v) => Number.isInteger(v) && v >= 1),
      metric: METRICS.includes(nb.metric) ? nb.metric : d.neighbors.metric,
    },
    search: {
      column: pick(search.column, null, stringOrNull),
      query: pick(search.query, '', string),
      regex: pick(search.regex, false, bool),
    },
    camera: camera(input.camera),
  };
}

function toBase64Url(text) {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/** The URL hash ("#s=...") of a state; a selection over URL_SELECTION_LIMIT is left out. */
export function encodeState(state) {
  const compact = { ...state };
  if (compact.selection.length > URL_SELECTION_LIMIT) {
    compact.selection = [];
    compact.focus = null;
  }
  if (compact.isolated && compact.isolated.length > URL_SELECTION_LIMIT) compact.isolated = null;
  return `#s=${toBase64Url(JSON.stringify(compact))}`;
}

/** The state in a URL hash, or null when the hash holds none or is unreadable. */
export function decodeState(hash) {
  const match = /^#?s=([A-Za-z0-9_-]+)$/.exec(hash || '');
  if (!match) return null;
  try {
    return sanitizeState(JSON.parse(fromBase64Url(match[1])));
  } catch {
    return null;
  }
}
