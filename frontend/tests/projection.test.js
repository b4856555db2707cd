import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AUTO_START_POINTS, waitsForRun } from '../js/controller/projecting.js';
import { sampleNote } from '../js/panels/projections.js';
import { jobStatus, Projection, progressText } from '../js/projection/projection.js';
import { readableSpread } from '../js/projection/running.js';

test('a frame squeezed to a line is not readable; a round or diagonal cloud is', () => {
  const n = 500;
  const round = new Float32Array(n * 2);
  const line = new Float32Array(n * 2);
  const diagonal = new Float32Array(n * 3);
  for (let i = 0; i < n; i++) {
    const a = (i * 2.399) % (2 * Math.PI);
    const r = Math.sqrt(i / n);
    round.set([r * Math.cos(a), r * Math.sin(a)], i * 2);
    line.set([i, 0.01 * Math.sin(i)], i * 2); // t-SNE's early exaggeration on words
    diagonal.set([i + 3 * Math.cos(a), i + 3 * Math.sin(a), 0], i * 3);
  }
  assert.equal(readableSpread(round, 2), true);
  assert.equal(readableSpread(line, 2), false);
  assert.equal(readableSpread(diagonal, 3), false); // thin along a diagonal too
  line[1] = NaN; // a point without coordinates is skipped, not fatal
  assert.equal(readableSpread(line, 2), false);
});

test('progress names the phase and the percentage of the whole run (the bars show it), then the iteration', () => {
  const p = new Projection('umap', {}, 2);
  p.status = 'running';
  p.phase = 'neighbours';
  p.progress = 0;
  assert.equal(progressText(p), 'UMAP: neighbours (0%)');
  p.phase = 'placement';
  Object.assign(p, { phaseProgress: 0.42, progress: 0.71 });
  assert.equal(progressText(p), 'UMAP: placement (71%)');
  const t = new Projection('tsne', {}, 2);
  t.status = 'running';
  // The phase's own 98% is not the bar's 24%: the text says the bar's.
  Object.assign(t, { phase: 'neighbours', phaseProgress: 0.98, iteration: 0, progress: 0.24 });
  assert.equal(progressText(t), 't-SNE: neighbours (24%)');
  assert.equal(jobStatus(t), 'running: neighbours (24%)');
  Object.assign(t, { phase: 'optimisation', phaseProgress: 0.1, iteration: 120, progress: 0.34 });
  assert.equal(progressText(t), 't-SNE: optimisation, iteration 120 (34%)');
  assert.equal(jobStatus(t), 'running: optimisation, iteration 120 (34%)');
  t.paused = true;
  assert.equal(jobStatus(t), 'paused (34%)');
  Object.assign(t, { status: 'failed', error: 'server unreachable' });
  assert.equal(jobStatus(t), 'failed: server unreachable');
  assert.equal(jobStatus(null), 'not run yet');
});

test('a sampled fit says so once done; a full one says nothing', () => {
  assert.equal(sampleNote({ mode: 'sample', sample_size: 60000, n_points: 120000 }),
    'Fitted on a random sample of 60,000 of 120,000 points; the others were placed by the fitted map.');
  assert.equal(sampleNote({ mode: 'full', sample_size: 1797 }), '');
  assert.equal(sampleNote(null), '');
});

test('t-SNE and UMAP wait for Run above a few thousand points; PCA never', () => {
  assert.equal(waitsForRun('tsne', AUTO_START_POINTS), false);
  assert.equal(waitsForRun('tsne', AUTO_START_POINTS + 1), true);
  assert.equal(waitsForRun('umap', 120000), true);
  assert.equal(waitsForRun('pca', 120000), false);
});
