// The draw order of a streaming projection. A sampled t-SNE/UMAP job (projector_core/kernels/
// sampling.py) fits an even random sample first and places the other points in batches; the
// rest are NaN (hidden) until placed. A random order over all N would spend most of a moving
// frame's budget on hidden points (about 90% at 1M, while only the 100k sample is placed), so
// while a job streams the plot draws the placed points first. The sample and every batch are
// random subsets, so the placed points are one too and a random order of them keeps every
// prefix a spatially even sample.

import { randomOrder } from '../renderer/lod.js';

/**
 * A draw order with the placed points (missing[i] === 0) first. `previous`: the order of the
 * job's last frame (or null): its placed points keep their ranks, so the sample stays first and
 * points do not flicker between frames; the same array comes back when no point was placed
 * since (the plot then permutes nothing again). Returns { order, placed }.
 */
export function placedFirstOrder(missing, previous = null) {
  const n = missing.length;
  let placed = 0;
  for (let i = 0; i < n; i++) if (!missing[i]) placed++;
  const base = previous?.length === n ? previous : randomOrder(n);
  if (base === previous && prefixPlaced(previous, missing, placed)) return { order: previous, placed };
  const order = new Int32Array(n);
  let head = 0;
  let tail = placed;
  for (let r = 0; r < n; r++) {
    const i = base[r];
    if (missing[i]) order[tail++] = i;
    else order[head++] = i;
  }
  return { order, placed };
}

function prefixPlaced(order, missing, placed) {
  for (let r = 0; r < placed; r++) if (missing[order[r]]) return false;
  return true;
}
