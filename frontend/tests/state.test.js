import assert from 'node:assert/strict';
import { test } from 'node:test';

import { datasetDefaults, decodeState, defaultState, defaultStateFor, encodeState, is3d, sanitizeState, unreadableLink, URL_SELECTION_LIMIT } from '../js/state.js';

test('a state survives the URL round trip, Unicode included', () => {
  const s = defaultState();
  s.run = 'ランs/ü';
  s.embedding = 'emb';
  s.projection = 'tsne';
  s.tsne.perplexity = 12;
  s.selection = [3, 1, 4];
  s.focus = 3;
  s.search = { column: 'label', query: '猫|dog', regex: true };
  s.camera = { target: [0.1, 0.2, 0], theta: 1, phi: 1.2, distance: 2, zoom: 3 };
  const hash = encodeState(s);
  assert.match(hash, /^#s=[A-Za-z0-9_-]+$/);
  assert.deepEqual(decodeState(hash), s);
});

test('an unreadable hash gives no state', () => {
  assert.equal(decodeState(''), null);
  assert.equal(decodeState('#s=!!!'), null);
  assert.equal(decodeState('#s=bm90IGpzb24'), null);
  assert.equal(decodeState('#other=1'), null);
});

test('a view link that cannot be read is told from a hash that is no link', () => {
  assert.equal(unreadableLink('#s=garbage!!!'), true);
  assert.equal(unreadableLink('#s=bm90IGpzb24'), true); // not JSON: cut short
  assert.equal(unreadableLink(encodeState(defaultState())), false);
  assert.equal(unreadableLink(''), false);
  assert.equal(unreadableLink('#main'), false); // an anchor (a skip link)
});

test('wrong types fall back to defaults and unknown fields are dropped', () => {
  const s = sanitizeState({
    projection: 'nope',
    pca: { x: -1, y: 'a', is3d: 'yes' },
    selection: [1, -2, 'x', 2.5, 7],
    neighbors: { k: 0, metric: 'manhattan' },
    camera: { target: [1, 2] },
    evil: '<script>',
  });
  const d = defaultState();
  assert.equal(s.projection, 'pca');
  assert.deepEqual(s.pca, d.pca);
  assert.deepEqual(s.selection, [1, 7]);
  assert.deepEqual(s.neighbors, d.neighbors);
  assert.equal(s.camera, null);
  assert.equal('evil' in s, false);
  assert.deepEqual(sanitizeState(null), d);
});

test('a large selection stays out of the URL', () => {
  const s = defaultState();
  s.selection = Array.from({ length: URL_SELECTION_LIMIT + 1 }, (_, i) => i);
  s.focus = 0;
  const back = decodeState(encodeState(s));
  assert.deepEqual(back.selection, []);
  assert.equal(back.focus, null);
});

test('custom projections are always 2D, others follow their toggle', () => {
  const s = defaultState();
  assert.equal(is3d(s), true);
  s.projection = 'tsne';
  assert.equal(is3d(s), false);
  s.projection = 'custom';
  assert.equal(is3d(s), false);
});

test('PCA opens in 3D when there is a third column', () => {
  assert.deepEqual(datasetDefaults(10), { pca3d: true });
  assert.equal(datasetDefaults(2).pca3d, false);
  assert.equal(datasetDefaults(10, true).pca3d, false); // shown from tiles: 2-D
});

test('the default neighbour count is what the data allows (a shared site keeps 30 a point)', () => {
  assert.equal(defaultStateFor({ neighbors: { k: { minimum: 1, maximum: 30 } } }).neighbors.k, 30);
  assert.equal(defaultStateFor({ neighbors: { k: { minimum: 1, maximum: 1796 } } }).neighbors.k, 100);
  assert.equal(defaultStateFor(null).neighbors.k, 100);
});
