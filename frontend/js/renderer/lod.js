// Level of detail in the browser: the draw order's inverse, how large a sample's points are
// drawn, and an order for data sets the server gave none (uploads).

import { rankAhead } from '../draw_order.js';

/**
 * How much larger a point of a sample of `fraction` of the points is drawn: its disc covers
 * about what the points it stands for cover together, up to 2.5 times the size.
 */
export function sampleSize(fraction) {
  return fraction >= 1 ? 1 : Math.min(2.5, fraction ** -0.25);
}

/** The inverse of a permutation: rank[order[r]] = r (computed ahead when it was). */
export function inverseOrder(order) {
  const ahead = rankAhead(order);
  if (ahead) return ahead;
  const rank = new Int32Array(order.length);
  for (let r = 0; r < order.length; r++) rank[order[r]] = r;
  return rank;
}

/** A random permutation of 0..n-1: a draw order whose prefixes sample every region in proportion. */
export function randomOrder(n, seed = 1) {
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  let state = seed >>> 0 || 1;
  for (let i = n - 1; i > 0; i--) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const j = (state >>> 0) % (i + 1);
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  return order;
}
