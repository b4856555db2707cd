import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { fromTensorBoardState, toTensorBoardState } from '../js/bookmarks.js';
import { Projecting } from '../js/controller/projecting.js';
import { clampNote, clampState, clampToLimit, isQuick, limitFor, paramInfo, startsFromLayout, tableDefaults, withinLimit } from '../js/limits.js';
import { defaultState, defaultStateFor, sanitizeState } from '../js/state.js';

// As GET /api/runs sends them for 150 points (projector_core.projection.methods.data_limits).
const IRIS = {
  info: {
    limits: {
      projections: { tsne: { points: { minimum: 4, maximum: null }, perplexity: { minimum: 2, maximum: 149 / 3 } }, pca: {} },
      neighbors: { k: { minimum: 1, maximum: 149 } },
    },
  },
};

test('limits are read from the server, per method or for neighbours', () => {
  assert.equal(limitFor(IRIS, 'tsne', 'perplexity').maximum, 149 / 3);
  assert.equal(limitFor(IRIS, 'neighbors', 'k').maximum, 149);
  assert.equal(limitFor(IRIS, 'pca', 'spherize'), null);
  assert.equal(limitFor({ info: null }, 'tsne', 'perplexity'), null); // local data: none
});

test('values are clamped into the range, the minimum winning when nothing fits', () => {
  const perplexity = limitFor(IRIS, 'tsne', 'perplexity');
  assert.equal(clampToLimit(30, perplexity), 30);
  assert.equal(clampToLimit(80, perplexity), 149 / 3);
  assert.equal(clampToLimit(1, perplexity), 2);
  assert.equal(clampToLimit(5, { minimum: 2, maximum: 1 }), 2);
  assert.equal(clampToLimit(500, null), 500);
  assert.equal(withinLimit(150, limitFor(IRIS, 'neighbors', 'k')), false);
  assert.equal(withinLimit(149, limitFor(IRIS, 'neighbors', 'k')), true);
  assert.equal(withinLimit(1e9, null), true);
});

// ---- the parameter table (GET /api/projections/methods), as the server makes it for iris ----

// tests/test_parameter_table.py checks that this copy is the table the server publishes.
const TABLE = JSON.parse(readFileSync(new URL('./fixtures/method_table_iris.json', import.meta.url), 'utf8'));
const IRIS_TABLE = { methods: TABLE, info: { limits: IRIS.info.limits } };

test('with a table, limits and capabilities are read from it', () => {
  assert.deepEqual(limitFor(IRIS_TABLE, 'tsne', 'perplexity'), { minimum: 2, maximum: 149 / 3 });
  assert.deepEqual(limitFor(IRIS_TABLE, 'tsne', 'n_iter'), { minimum: 1, maximum: 100000 });
  assert.deepEqual(limitFor(IRIS_TABLE, 'umap', 'n_neighbors'), { minimum: 2, maximum: 149 });
  assert.deepEqual(limitFor(IRIS_TABLE, 'tsne', 'points'), { minimum: 4, maximum: null });
  assert.equal(limitFor(IRIS_TABLE, 'neighbors', 'k').maximum, 149);
  assert.equal(paramInfo(IRIS_TABLE, 'tsne', 'learning_rate').choices[0], 'auto');
  assert.deepEqual(['pca', 'tsne', 'umap', 'custom'].filter((m) => isQuick(IRIS_TABLE, m)), ['pca', 'custom']);
  assert.deepEqual(['pca', 'tsne', 'umap'].filter((m) => startsFromLayout(TABLE, m)), ['tsne', 'umap']);
  assert.equal(isQuick({ methods: null }, 'pca'), false); // no table: followed, which always works
});

test('the page asks the table\'s default request, its state\'s values over it', () => {
  /** @param {any} state */
  const ask = (method, state) => {
    const projecting = new Projecting(/** @type {any} */ ({ dataset: IRIS_TABLE, state }));
    return projecting.requestFor(method);
  };
  const fresh = defaultStateFor(TABLE);
  for (const method of ['pca', 'tsne', 'umap']) {
    assert.deepEqual(ask(method, fresh), TABLE.methods[method].default_request, method);
  }
  // A value the user set replaces the table's; one past the data's limit is clamped to it.
  const set = { ...fresh, tsne: { ...fresh.tsne, perplexity: 80, learningRate: 200, is3d: true } };
  assert.deepEqual(ask('tsne', set), { dims: 3, params: { perplexity: 149 / 3, learning_rate: 200, n_iter: 750 } });
  // A state that leaves a parameter to the table (null) asks the table's.
  assert.deepEqual(ask('umap', defaultState()).params, TABLE.methods.umap.default_request.params);
});

test('the defaults are the table\'s: one set for the API, the page and exports', () => {
  assert.deepEqual(tableDefaults(TABLE), {
    pca: { spherize: false },
    tsne: { perplexity: 30, learningRate: null, nIter: 750, superviseWeight: 0 },
    umap: { nNeighbors: 15, minDist: 0.1 },
  });
  const small = structuredClone(TABLE);
  small.methods.tsne.params.perplexity.default = 13; // (40 - 1) / 3: the server's for 40 points
  assert.equal(defaultStateFor(small).tsne.perplexity, 13);
  assert.deepEqual(defaultStateFor(null), defaultState());
  const plain = structuredClone(TABLE); // the table without data: perplexity's default is the data's
  plain.methods.tsne.params.perplexity.default = null;
  assert.equal(defaultStateFor(plain).tsne.perplexity, defaultState().tsne.perplexity);
});

test('a state out of range is clamped into the table, each move said', () => {
  const wild = sanitizeState({
    tsne: { nIter: 200000, perplexity: 80, learningRate: -5, superviseWeight: 2 },
    umap: { nNeighbors: 1000, minDist: 3 },
    neighbors: { k: 5000 },
  }, defaultStateFor(TABLE));
  const { state, notes } = clampState(wild, TABLE);
  assert.equal(state.tsne.nIter, 100000);
  assert.equal(state.tsne.perplexity, 149 / 3);
  assert.equal(state.tsne.learningRate, null); // at or below the excluded 0: "auto"
  assert.equal(state.tsne.superviseWeight, 1);
  assert.equal(state.umap.nNeighbors, 149);
  assert.equal(state.umap.minDist, 0.99);
  assert.equal(state.neighbors.k, 149);
  assert.equal(notes.length, 7);
  assert.ok(notes.includes('t-SNE n_iter 200000 is out of range, using 100000'), notes.join('\n'));
  assert.ok(notes.includes('UMAP n_neighbors 1000 is out of range, using 149'));
  assert.ok(notes.includes('t-SNE learning_rate -5 is out of range, using auto'));
  assert.match(clampNote(notes, 'The link'), /^The link asked for values this data does not allow: /);
  assert.equal(clampNote([]), '');
});

test('a state inside the table is left alone, and nothing is clamped without a table', () => {
  const fine = defaultStateFor(TABLE);
  fine.tsne.nIter = 1.6e4;
  const { state, notes } = clampState(fine, TABLE);
  assert.deepEqual(state, fine);
  assert.deepEqual(notes, []);
  const wild = sanitizeState({ tsne: { nIter: 2e5 } });
  assert.equal(clampState(wild, null).state.tsne.nIter, 2e5); // local data: no server to refuse it
  assert.equal(clampState(sanitizeState({ tsne: { nIter: 300.4 } }), TABLE).state.tsne.nIter, 300);
});

test('a bookmark with values out of range loads clamped, with notes', () => {
  const saved = defaultState();
  saved.projection = 'tsne';
  saved.tsne = { ...saved.tsne, nIter: 200000 };
  saved.umap = { ...saved.umap, nNeighbors: 1000 };
  const tb = toTensorBoardState(saved, { label: 'wild', n: 150, d: 4 });
  const { state, notes } = fromTensorBoardState(tb, { n: 150, d: 4, table: TABLE });
  assert.equal(state.tsne.nIter, 100000);
  assert.equal(state.umap.nNeighbors, 149);
  assert.equal(notes.length, 2);
  // A TensorBoard file (no `projector` field) too: its perplexity 500 is past (N - 1) / 3.
  delete tb.projector;
  tb.tSNEPerplexity = 500;
  const fromTb = fromTensorBoardState(tb, { n: 150, d: 4, table: TABLE });
  assert.equal(fromTb.state.tsne.perplexity, 149 / 3);
  assert.equal(fromTb.state.tsne.nIter, 750); // not in TensorBoard's State: the table's default
  assert.deepEqual(fromTensorBoardState(tb, { n: 150, d: 4 }).notes, []); // no table, no clamp
  // TensorBoard writes 0 for a t-SNE never run: the table's defaults, and nothing to say.
  const unset = fromTensorBoardState({ ...tb, tSNEPerplexity: 0, tSNELearningRate: 0 }, { n: 150, d: 4, table: TABLE });
  assert.deepEqual(unset.notes, ['UMAP n_neighbors 1000 is out of range, using 149']); // no t-SNE note
  assert.equal(unset.state.tsne.perplexity, 30);
  assert.equal(unset.state.tsne.learningRate, null);
});
