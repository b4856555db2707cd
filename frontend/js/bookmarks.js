// Bookmarks in TensorBoard's file format (a JSON list of State objects), so that files from
// TensorBoard load here and ours load there. Our own full state rides along in an extra
// `projector` field that TensorBoard ignores. Pure: no DOM.

import { defaultCamera, fromTensorBoardCamera, toTensorBoardCamera } from './camera.js';
import { clampState } from './limits.js';
import { defaultStateFor, is3d, PROJECTIONS, sanitizeState } from './state.js';

/** Largest data set whose per-point projections go into a bookmark for PCA and custom. */
export const RECOMPUTABLE_COORDS_LIMIT = 100000;

// TensorBoard's own t-SNE learning rate, written where ours is "auto" (null): its State
// holds a number there (our choice rides along in `projector`).
const TENSORBOARD_LEARNING_RATE = 10;

const PROJECTION_KEYS = {
  pca: (i) => `pca-${i}`,
  tsne: (i) => `tsne-${i}`,
  umap: (i) => `umap-${i}`,
  custom: (i) => ['linear-x', 'linear-y'][i],
};

/**
 * The TensorBoard State of the current view. `coords` is the current projection's
 * coordinates ({ data: Float32Array, dims }, row-major; for PCA every computed component),
 * `n`/`d` the data set's shape, `iteration` the t-SNE iteration shown.
 */
export function toTensorBoardState(state, { label, n, d, coords = null, iteration = 0 }) {
  const keepCoords =
    coords && (state.projection === 'tsne' || state.projection === 'umap' || n <= RECOMPUTABLE_COORDS_LIMIT);
  const projections = [];
  if (keepCoords) {
    const key = PROJECTION_KEYS[state.projection];
    const dims = state.projection === 'custom' ? Math.min(2, coords.dims) : coords.dims;
    for (let i = 0; i < n; i++) {
      const point = {};
      for (let j = 0; j < dims; j++) {
        const v = coords.data[i * coords.dims + j];
        if (Number.isFinite(v)) point[key(j)] = v;
      }
      projections.push(point);
    }
  }
  const custom = state.custom;
  const threeD = is3d(state);
  return {
    label,
    isSelected: false,
    selectedProjection: state.projection,
    dataSetDimensions: [n, d],
    tSNEIteration: iteration,
    tSNEPerplexity: state.tsne.perplexity,
    tSNELearningRate: state.tsne.learningRate ?? TENSORBOARD_LEARNING_RATE,
    tSNEis3d: state.tsne.is3d,
    umapIs3d: state.umap.is3d,
    umapNeighbors: state.umap.nNeighbors,
    umapMinDist: state.umap.minDist,
    pcaComponentDimensions: state.pca.is3d
      ? [state.pca.x, state.pca.y, state.pca.z]
      : [state.pca.x, state.pca.y],
    customSelectedSearchByMetadataOption: state.custom.column,
    customXLeftText: custom.left,
    customXLeftRegex: custom.regex,
    customXRightText: custom.right,
    customXRightRegex: custom.regex,
    customYUpText: custom.up,
    customYUpRegex: custom.regex,
    customYDownText: custom.down,
    customYDownRegex: custom.regex,
    projections,
    filteredPoints: state.isolated ? state.isolated.slice() : [],
    selectedPoints: state.selection.slice(),
    shuffledDataIndices: [],
    cameraDef: toTensorBoardCamera(state.camera ?? defaultCamera(), threeD),
    selectedColorOptionName: state.colorBy,
    forceCategoricalColoring: state.categorical ?? false,
    selectedLabelOption: state.labelBy,
    projector: state,
  };
}

/** A TensorBoard number, or undefined where it writes 0 for "never set" (t-SNE never run). */
const set = (value) => (value === 0 ? undefined : value);

/** Our state from a TensorBoard State that has no `projector` field (a TensorBoard file). */
function stateFromTensorBoard(tb, defaults) {
  const pcaDims = Array.isArray(tb.pcaComponentDimensions) ? tb.pcaComponentDimensions : [0, 1, 2];
  const selection = Array.isArray(tb.selectedPoints) ? tb.selectedPoints : [];
  const filtered = Array.isArray(tb.filteredPoints) && tb.filteredPoints.length ? tb.filteredPoints : null;
  // TensorBoard has a regex toggle per side, our API one for all four: any side's counts.
  const regex = ['customXLeftRegex', 'customXRightRegex', 'customYUpRegex', 'customYDownRegex'].some((k) => tb[k] === true);
  return sanitizeState({
    projection: PROJECTIONS.includes(tb.selectedProjection) ? tb.selectedProjection : 'pca',
    pca: { x: pcaDims[0], y: pcaDims[1], z: pcaDims[2] ?? 2, is3d: pcaDims.length >= 3 },
    tsne: { is3d: tb.tSNEis3d, perplexity: set(tb.tSNEPerplexity), learningRate: set(tb.tSNELearningRate) },
    umap: { is3d: tb.umapIs3d, nNeighbors: tb.umapNeighbors, minDist: tb.umapMinDist },
    custom: {
      column: tb.customSelectedSearchByMetadataOption ?? null,
      left: tb.customXLeftText ?? '',
      right: tb.customXRightText ?? '',
      up: tb.customYUpText ?? '',
      down: tb.customYDownText ?? '',
      regex,
    },
    colorBy: tb.selectedColorOptionName ?? null,
    categorical: tb.forceCategoricalColoring === true ? true : null,
    labelBy: tb.selectedLabelOption ?? null,
    selection,
    focus: selection.length === 1 ? selection[0] : null,
    isolated: filtered,
    camera: fromTensorBoardCamera(tb.cameraDef),
  }, defaults);
}

/** Stored t-SNE/UMAP coordinates of a bookmark as { data, dims }, or null when it has none. */
function storedCoords(tb, state, n) {
  if (state.projection !== 'tsne' && state.projection !== 'umap') return null;
  const points = tb.projections;
  if (!Array.isArray(points) || points.length !== n) return null;
  const dims = state[state.projection].is3d ? 3 : 2;
  const key = PROJECTION_KEYS[state.projection];
  const data = new Float32Array(n * dims);
  for (let i = 0; i < n; i++) {
    const point = points[i] || {};
    for (let j = 0; j < dims; j++) {
      const v = point[key(j)];
      data[i * dims + j] = typeof v === 'number' ? v : NaN;
    }
  }
  return { data, dims };
}

/**
 * What loading a bookmark does: { state, coords, notes } where coords are stored t-SNE/UMAP
 * coordinates to show instead of recomputing, and notes say which values were out of the
 * parameter table's range (`table`, the data set's) and clamped. Fields the bookmark lacks
 * take the table's defaults. Throws when the bookmark is for a data set of another size, as
 * TensorBoard does.
 */
export function fromTensorBoardState(tb, { n, d, table = null }) {
  if (tb === null || typeof tb !== 'object') throw new Error('a bookmark must be a JSON object');
  const dims = tb.dataSetDimensions;
  if (Array.isArray(dims) && dims.length === 2 && (dims[0] !== n || dims[1] !== d)) {
    throw new Error(`the bookmark is for a data set of ${dims[0]} x ${dims[1]}, this one is ${n} x ${d}`);
  }
  const defaults = defaultStateFor(table);
  const read = tb.projector ? sanitizeState(tb.projector, defaults) : stateFromTensorBoard(tb, defaults);
  const { state, notes } = clampState(read, table);
  return { state, coords: storedCoords(tb, state, n), notes };
}

/** Fields of which a TensorBoard State holds at least one (older files lack some). */
const STATE_FIELDS = [
  'selectedProjection', 'dataSetDimensions', 'cameraDef', 'projections', 'pcaComponentDimensions',
  'selectedPoints', 'tSNEIteration', 'selectedColorOptionName', 'selectedLabelOption', 'label',
  'isSelected', 'projector',
];

/**
 * The bookmarks of a file: a JSON list of State objects (a single State object is taken as
 * one). Anything else is refused with what is wrong and where, so that a stray JSON file never
 * replaces the tray.
 */
export function parseBookmarkFile(text, name = 'the bookmark file') {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`${name} is not JSON: ${err.message}`);
  }
  const isState = (b) => b !== null && typeof b === 'object' && !Array.isArray(b) && STATE_FIELDS.some((k) => k in b);
  if (!Array.isArray(parsed) && !isState(parsed)) {
    throw new Error(`${name} is not a list of bookmarks (TensorBoard State objects)`);
  }
  const list = Array.isArray(parsed) ? parsed : [parsed];
  if (list.length === 0) throw new Error(`${name} holds no bookmarks`);
  const bad = list.findIndex((b) => !isState(b));
  if (bad >= 0) {
    throw new Error(`${name}, item ${bad + 1}: not a bookmark (a State object with fields such as selectedProjection or cameraDef)`);
  }
  return list.map((b, i) => ({ ...b, label: typeof b.label === 'string' ? b.label : `State ${i}` }));
}
