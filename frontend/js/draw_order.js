// The whole set's arrays in draw order, made in slices before the plot takes them. Putting ten
// million points in the plot means an inverse of the draw order and the positions and colours
// rearranged into it: seconds of main-thread work on a busy CPU if done in one task (the
// page froze). Here they are made in slices that yield to input and drawing, and kept where
// the plot's synchronous path finds them (renderer/lod.js inverseOrder, renderer/points.js
// permuteRows), so setPositions then only uploads.

import { Fit } from './geometry.js';
import { inSlices } from './yielding.js';

/** Rows a slice of a gather takes: random reads cost several times a sequential pass. */
const GATHER_ROWS = 1 << 18;

/** Inverses computed ahead: order -> rank. */
const ranks = new WeakMap();
/** Rearrangements computed ahead: values -> { order, out }. */
const permuted = new WeakMap();

/** The rank (inverse) of `order` when computed ahead, else null. */
export function rankAhead(order) {
  return ranks.get(order) ?? null;
}

/** `values` rearranged into `order` when computed ahead, else null. */
export function permutedAhead(values, order) {
  const hit = permuted.get(values);
  return hit && hit.order === order ? hit.out : null;
}

/**
 * Computes in slices the inverse of `order` and `positions` (n x 3) and `colors` (RGBA bytes,
 * may be null) rearranged into it, for Plot.setPositions to find.
 */
export async function prepareDrawOrder(positions, order, colors = null) {
  const n = order.length;
  if (!ranks.has(order)) {
    const rank = new Int32Array(n);
    await inSlices(n, (start, end) => {
      for (let r = start; r < end; r++) rank[order[r]] = r;
    }, GATHER_ROWS);
    ranks.set(order, rank);
  }
  if (!permutedAhead(positions, order)) {
    const out = new Float32Array(n * 3);
    await inSlices(n, (start, end) => {
      for (let r = start; r < end; r++) {
        const i = order[r] * 3;
        out[r * 3] = positions[i];
        out[r * 3 + 1] = positions[i + 1];
        out[r * 3 + 2] = positions[i + 2];
      }
    }, GATHER_ROWS);
    permuted.set(positions, { order, out });
  }
  if (colors?.length === n * 4 && colors.byteOffset % 4 === 0 && !permutedAhead(colors, order)) {
    const words = new Uint32Array(colors.buffer, colors.byteOffset, n);
    const out = new Uint32Array(n);
    await inSlices(n, (start, end) => {
      for (let r = start; r < end; r++) out[r] = words[order[r]];
    }, GATHER_ROWS);
    permuted.set(colors, { order, out: new Uint8Array(out.buffer) });
  }
}

/** geometry.fitPositions in slices (same arithmetic, same result), yielding between them. */
export async function fitInSlices(coords, n, stride, columns, include = null) {
  const fit = new Fit(coords, n, stride, columns, include);
  await inSlices(n, (start, end) => fit.extent(start, end));
  fit.scale();
  await inSlices(n, (start, end) => fit.place(start, end));
  return { positions: fit.positions, missing: fit.missing, frame: fit.frame() };
}
