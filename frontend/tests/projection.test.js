import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Projection, progressText } from '../js/projection/projection.js';
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

test('progress names the phase and its percentage, then the iteration', () => {
  const p = new Projection('umap', {}, 2);
  p.status = 'running';
  p.phase = 'neighbours';
  p.progress = 0;
  assert.equal(progressText(p), 'UMAP: neighbours 0%');
  p.phase = 'placement';
  p.phaseProgress = 0.42;
  assert.equal(progressText(p), 'UMAP: placement 42%');
  const t = new Projection('tsne', {}, 2);
  t.status = 'running';
  Object.assign(t, { phase: 'neighbours', phaseProgress: 0.5, iteration: 0, progress: 0.12 });
  assert.equal(progressText(t), 't-SNE: neighbours 50%');
  Object.assign(t, { phase: 'optimisation', phaseProgress: 0.1, iteration: 120, progress: 0.34 });
  assert.equal(progressText(t), 't-SNE: optimisation, iteration 120 (34%)');
});
