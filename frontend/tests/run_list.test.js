import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadingLabel, loadingLine, pendingEmbedding } from '../js/run_list.js';

const ready = (name) => ({ name, status: 'ready', shape: [10, 4], error: null });
const loading = (name, done = 300 * 2 ** 20) => ({
  name, status: 'loading', shape: null, error: null,
  progress: { fraction: done / (730 * 2 ** 20), bytes_done: done, bytes_total: 730 * 2 ** 20 },
});

test('waits for the first embedding when it is still loading, not for later ones', () => {
  assert.equal(pendingEmbedding([{ name: '.', embeddings: [loading('big'), ready('small')] }]).embedding.name, 'big');
  assert.equal(pendingEmbedding([{ name: '.', embeddings: [ready('small'), loading('big')] }]), null);
  assert.equal(pendingEmbedding([{ name: 'a', embeddings: [{ name: 'bad', error: 'x', shape: null }, loading('big')] }]).run, 'a');
});

test("waits for the URL's embedding when it is the one loading", () => {
  const runs = [{ name: '.', embeddings: [ready('small'), loading('big')] }];
  assert.equal(pendingEmbedding(runs, { run: '.', embedding: 'big' }).embedding.name, 'big');
  assert.equal(pendingEmbedding(runs, { run: '.', embedding: 'small' }), null);
});

test('the progress line says how much is read', () => {
  assert.equal(loadingLabel('.', loading('big')), 'Loading big: 41% (300 / 730 MiB)');
  assert.equal(loadingLabel('run1', { name: 't', progress: null }), 'Loading run1/t…');
});

test('shows the progress of each run list until the embedding is ready, then goes', () => {
  const lists = [[loading('big', 0)], [loading('big')], [ready('big')]].map((e) => [{ name: '.', embeddings: e }]);
  const shown = [];
  const progress = { start: (label) => { shown.push(['start', label]); return { update: (f, label2) => shown.push([f, label2]), done: () => shown.push(['done']) }; } };
  const openable = loadingLine(progress);
  assert.deepEqual(lists.map((runs) => openable(runs)), [false, false, true]);
  assert.deepEqual(shown.at(-1), ['done']);
  assert.equal(shown.filter(([what]) => what === 'start').length, 1);
  assert.ok(shown.some(([, label]) => label === 'Loading big: 41% (300 / 730 MiB)'));
});
