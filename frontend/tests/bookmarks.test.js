import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fromTensorBoardState, parseBookmarkFile, toTensorBoardState } from '../js/bookmarks.js';
import { defaultState } from '../js/state.js';

function sampleState() {
  const s = defaultState();
  s.projection = 'tsne';
  s.tsne = { ...s.tsne, is3d: false, perplexity: 7, learningRate: 50, nIter: 300 };
  s.colorBy = 'label';
  s.labelBy = 'word';
  s.selection = [0, 2];
  s.focus = 0;
  s.camera = { target: [0.5, -0.25, 0], theta: 0.8, phi: 1.1, distance: 3.4, zoom: 2 };
  return s;
}

test('our bookmark has every TensorBoard State field and restores our state', () => {
  const coords = { data: Float32Array.from([0, 1, 2, 3, NaN, 5]), dims: 2 };
  const tb = toTensorBoardState(sampleState(), { label: 'mine', n: 3, d: 4, coords, iteration: 300 });
  assert.equal(tb.selectedProjection, 'tsne');
  assert.deepEqual(tb.dataSetDimensions, [3, 4]);
  assert.equal(tb.tSNEPerplexity, 7);
  assert.equal(tb.tSNEIteration, 300);
  assert.deepEqual(tb.selectedPoints, [0, 2]);
  assert.deepEqual(tb.projections, [{ 'tsne-0': 0, 'tsne-1': 1 }, { 'tsne-0': 2, 'tsne-1': 3 }, { 'tsne-1': 5 }]);
  assert.deepEqual(tb.cameraDef, { orthographic: true, position: [0.5, -0.25, 1], target: [0.5, -0.25, 0], zoom: (2 * 1.2) / 1.15 });
  const back = fromTensorBoardState(JSON.parse(JSON.stringify(tb)), { n: 3, d: 4 });
  assert.deepEqual(back.state, sampleState());
  assert.equal(back.coords.dims, 2);
  assert.deepEqual(Array.from(back.coords.data.slice(0, 4)), [0, 1, 2, 3]);
  assert.ok(Number.isNaN(back.coords.data[4]));
});

test('a TensorBoard bookmark without our field maps onto our state', () => {
  const tb = {
    label: 'from tensorboard',
    selectedProjection: 'pca',
    dataSetDimensions: [2, 3],
    pcaComponentDimensions: [1, 3],
    tSNEis3d: true,
    tSNEPerplexity: 18,
    tSNELearningRate: 10,
    umapIs3d: true,
    umapNeighbors: 20,
    umapMinDist: 0.3,
    customSelectedSearchByMetadataOption: 'word',
    customXLeftText: 'man',
    customXLeftRegex: false,
    customXRightText: 'wom.n',
    customXRightRegex: true,
    selectedPoints: [1],
    filteredPoints: [],
    projections: [{ 'pca-0': 1 }, { 'pca-0': 2 }],
    cameraDef: { orthographic: false, position: [0, 0, 5], target: [0, 0, 0], zoom: 1 },
    selectedColorOptionName: 'label',
    forceCategoricalColoring: true,
    selectedLabelOption: 'word',
  };
  const { state, coords } = fromTensorBoardState(tb, { n: 2, d: 3 });
  assert.equal(coords, null);
  // What TensorBoard's State leaves out is null, "the parameter table's" (none here).
  assert.deepEqual(state.pca, { x: 1, y: 3, z: 2, is3d: false, spherize: null });
  assert.deepEqual(state.tsne, { is3d: true, perplexity: 18, learningRate: 10, nIter: null, superviseColumn: null, superviseWeight: null });
  assert.deepEqual(state.umap, { is3d: true, nNeighbors: 20, minDist: 0.3 });
  assert.deepEqual(state.custom, { column: 'word', left: 'man', right: 'wom.n', up: '', down: '', regex: true });
  assert.deepEqual(state.selection, [1]);
  assert.equal(state.focus, 1);
  assert.equal(state.isolated, null);
  assert.equal(state.categorical, true);
  // TensorBoard's 70-degree lens at distance 5 shows what our 45-degree one shows from farther.
  const lens = Math.tan((35 * Math.PI) / 180) / Math.tan(Math.PI / 8);
  assert.ok(Math.abs(state.camera.distance - 5 * lens) < 1e-9);
  assert.ok(Math.abs(state.camera.phi - Math.PI / 2) < 1e-9);
});

test('a bookmark for another data set size is refused', () => {
  assert.throws(() => fromTensorBoardState({ dataSetDimensions: [5, 3] }, { n: 2, d: 3 }), /5 x 3, this one is 2 x 3/);
});

test('bookmark files are lists; bad files say why', () => {
  assert.deepEqual(parseBookmarkFile('[{"label": "a"}, {"cameraDef": null}]').map((b) => b.label), ['a', 'State 1']);
  assert.equal(parseBookmarkFile('{"label": "one"}').length, 1);
  assert.throws(() => parseBookmarkFile('nope', 'b.json'), /b\.json is not JSON/);
  assert.throws(() => parseBookmarkFile('[1, 2]', 'b.json'), /b\.json, item 1: not a bookmark/);
  assert.throws(() => parseBookmarkFile('{"not": "a list"}', 'b.json'), /b\.json is not a list of bookmarks/);
  assert.throws(() => parseBookmarkFile('[{"selectedProjection": "pca"}, {"not": 1}]'), /item 2: not a bookmark/);
  assert.throws(() => parseBookmarkFile('[]'), /holds no bookmarks/);
});

test('our "auto" t-SNE learning rate is written as a number TensorBoard reads, and comes back as auto', () => {
  const s = defaultState();
  s.tsne = { ...s.tsne, learningRate: null };
  const tb = toTensorBoardState(s, { label: 'auto', n: 3, d: 4 });
  assert.equal(tb.tSNELearningRate, 10);
  assert.equal(fromTensorBoardState(JSON.parse(JSON.stringify(tb)), { n: 3, d: 4 }).state.tsne.learningRate, null);
});
