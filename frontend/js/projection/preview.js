// A large server projection's level of detail (for Projection, projection.js): its first
// picture from its top LOD tile before its points arrive (whole or as tiles), a running
// layout's placed points from its early tile, and the server's LOD order the plot draws a
// large whole array in. `view` is the View (projection.js) it shows through.

import { prepareDrawOrder } from '../draw_order.js';
import { isQuick } from '../limits.js';
import { fetchLevel, fetchTile, fitSlice, PREVIEW_ABOVE } from '../tiles/fetch.js';
import { display } from './display.js';

/** @typedef {import('./projection.js').Projection} Projection */
/** @typedef {import('./projection.js').View} View */

/** A running layout shown from tiles asks for its placed points again after p much progress. */
const EARLY_STEP = 0.02;

/**
 * While a t-SNE/UMAP shown from tiles runs, a picture of the points it has placed so far:
 * its early root tile (the server's random sample of its latest frame, tiles.py), asked
 * again each time its progress moves by EARLY_STEP, one request at a time; its tiles
 * replace it once it is done.
 * @param {Projection} p
 * @param {View} view
 */
export function earlyPicture(p, view) {
  if (p.earlyLoad || (p.earlyProgress !== null && p.progress - p.earlyProgress < EARLY_STEP)) return;
  const progress = p.progress;
  p.earlyLoad = fetchTile(p.api, p.jobId, p.sourceAxes, 0, 0, 0, true)
    .then((slice) => {
      if (p !== view.shown || !p.running || slice.total !== view.dataset.n) return;
      p.earlyProgress = progress;
      if (!slice.indices.length) return;
      view.plot.clearPoints(); // another projection's picture
      view.plot.setPreview(fitSlice(slice), slice.indices, slice.total);
    })
    .catch(() => {}) // the next progress asks again; the tiles show once it is done
    .finally(() => {
      p.earlyLoad = null;
    });
}

/**
 * A first picture of a large server projection before its points arrive: its top
 * level-of-detail tiles (the server waits for the job; `projector serve` has them ready for
 * the default view); `withOrder` (a whole array to come): then the order itself is fetched
 * beside the result, so the whole set is put in the plot once, in that order.
 * @param {Projection} p
 * @param {View} view
 * @param {{ withOrder: boolean }} options
 */
export function preview(p, view, { withOrder }) {
  const ds = view.dataset;
  if (p.previewLoad || ds.local || ds.n <= PREVIEW_ABOVE || view.state.isolated) return;
  if (p.running && !isQuick(ds, p.method)) return; // a followed job: its frames are its picture
  p.previewLoad = loadPreview(p, view, ds, withOrder);
}

async function loadPreview(p, view, ds, withOrder) {
  const axes = p.axes(view.state, p.dims);
  const shows = () => p === view.shown && !p.displayedOnce && view.dataset === ds;
  const show = (slice) => {
    if (!shows() || slice.total !== ds.n) return false;
    view.plot.setPreview(fitSlice(slice), slice.indices, slice.total);
    // Tiles of the order: the whole set waits for the rest of it (one permutation); random
    // samples (the tiles still being computed): the whole set shows when it comes.
    p.previewInOrder = slice.order === 'lod';
    return true;
  };
  let root;
  try {
    // One tile: more points than the picture draws (renderer/preview.js PREVIEW_POINTS).
    root = await fetchLevel(p.api, p.jobId, axes, 0);
  } catch {
    return; // the whole result shows when it comes, as without a preview
  }
  if (show(root) && withOrder) lodOrder(p, view, root.axes, true);
}

/**
 * The server's level-of-detail order of a done projection over `axes`, when a frame cannot
 * draw every point of its whole array: null until it arrives (the plot samples at random
 * meanwhile), then the plot takes it.
 * @param {Projection} p
 * @param {View} view
 * @param {number[]} axes
 * @returns {Int32Array | null}
 */
export function lodOrder(p, view, axes, done = p.status === 'done') {
  const ds = view.dataset;
  if (ds.local || ds.n <= view.plot.frames.budget || !done || !p.jobId) return null;
  const key = `${p.jobId}:${axes.join(',')}`;
  if (p.lod?.key === key) return p.lod.order;
  if (p.lodPending === key) return null;
  p.lodPending = key;
  p.api
    .lod(p.jobId, axes)
    .then((order) => {
      p.lod = { key, order };
      const shows = () => !p.heldForOrder && p === view.shown && p.displayedData === p.data && p.axes(view.state).join(',') === axes.join(',');
      if (!shows()) return null;
      const positions = view.plot.positions;
      // The arrays in the new order are made in slices first (draw_order.js).
      return prepareDrawOrder(positions, order, view.plot.points.colors).then(() => {
        if (shows() && view.plot.positions === positions) view.plot.setPositions(positions, { order });
      });
    })
    .catch((err) => {
      view.plot.preview.clear(); // nothing to wait for: the whole set shows in a random order
      view.setMessage(`Level of detail: ${err.message}`, true);
    })
    .finally(() => {
      if (p.lodPending === key) p.lodPending = null;
      if (!p.heldForOrder) return;
      p.heldForOrder = false;
      if (p === view.shown && p.data) display(p, view, false);
    });
  return null;
}
