// A projection's whole array in the plot (for ARRAY, points/array_delivery.js): fitted into
// the unit cube (in slices for a large set, placed points first while a sampled job streams)
// and handed to the plot as an ArrayPoints, with its rows missing coordinates and the
// coordinates themselves (what a region in projection units is tested against). `view` is
// the View (projection.js) it shows through.

import { fitInSlices, prepareDrawOrder } from '../draw_order.js';
import { fitPositions } from '../geometry.js';
import { ArrayPoints } from '../points/array_points.js';
import { randomOrder } from '../renderer/lod.js';
import { is3d } from '../state.js';
import { lodOrder, preview } from './preview.js';
import { placedFirstOrder } from './stream_order.js';

/** Data sets from this size on are put in the plot in slices (displayInSlices). */
const SLICED_ABOVE = 500000;

/** @typedef {import('./projection.js').Projection} Projection */
/** @typedef {import('./projection.js').View} View */

/**
 * Puts what it has new in the plot, it being shown: a frame or its result, else a first
 * picture of a large set.
 * @param {Projection} p
 * @param {View} view
 */
export function refresh(p, view) {
  if (p.data && p.displayedData !== p.data) {
    const first = !p.displayedOnce;
    view.plot.setMode(is3d(view.state) && (p.method !== 'pca' || p.cols >= 3));
    display(p, view, first);
  } else if (!p.data && p.jobId) {
    preview(p, view, { withOrder: true });
  }
}

/**
 * The whole array in the plot now (or in slices, for a large set).
 * @param {Projection} p
 * @param {View} view
 * @param {boolean} animate
 */
export function display(p, view, animate) {
  const { plot, dataset, state } = view;
  const isolated = state.isolated ? new Set(state.isolated) : null;
  const axes = p.axes(state);
  let order = lodOrder(p, view, axes);
  // Over a first picture, the whole set waits for its order: one permutation, not two.
  if (!order && p.lodPending && p.previewInOrder && plot.preview.count) {
    p.heldForOrder = true;
    return;
  }
  if (dataset.n >= SLICED_ABOVE && !p.running) {
    displayInSlices(p, view, animate, axes, order, isolated);
    return;
  }
  const { positions, missing, frame } = fitPositions(p.data, dataset.n, p.cols, axes, isolated);
  // A streaming job: the placed points first, so a moving frame draws no hidden point.
  if (!order && p.running && dataset.n > plot.frames.budget) {
    order = placedFirstOrder(missing, p.streamOrder ?? null).order;
    p.streamOrder = order;
  }
  shown(p, view, new ArrayPoints(positions, { missing, coords: { data: p.data, cols: p.cols }, frame }), { animate, order });
}

/**
 * display() for a large set: the fit and the draw order's arrays made in slices that yield
 * to input (draw_order.js), then handed to the plot at once; the current picture (a first
 * one from the tiles, or the last projection) stays meanwhile. A newer call supersedes it.
 * @param {Projection} p
 * @param {View} view
 * @param {boolean} animate
 * @param {number[]} axes
 * @param {Int32Array | null} order
 * @param {Set<number> | null} isolated
 */
async function displayInSlices(p, view, animate, axes, order, isolated) {
  if (!order && p.lodPending) {
    p.heldForOrder = true; // the order is on its way: one permutation, not a random one first
    return;
  }
  const { plot, dataset, state } = view;
  const data = p.data;
  const key = [data, axes.join(','), order, isolated ? state.isolated.join(',') : ''];
  const running = p.slicing;
  if (running && running.every((v, i) => v === key[i])) return;
  p.slicing = key;
  const current = () => p.slicing === key && p === view.shown && p.data === data;
  const { positions, missing, frame } = await fitInSlices(data, dataset.n, p.cols, axes, isolated);
  if (!current()) return;
  const drawOrder = order ?? (dataset.n > plot.frames.budget ? randomOrder(dataset.n) : null);
  if (drawOrder) await prepareDrawOrder(positions, drawOrder, plot.points.colors);
  if (!current()) return;
  p.slicing = null;
  shown(p, view, new ArrayPoints(positions, { missing, coords: { data, cols: p.cols }, frame }), { animate, order: drawOrder });
}

/**
 * Hands the plot its points and says so.
 * @param {Projection} p
 * @param {View} view
 * @param {ArrayPoints} source
 * @param {{ animate: boolean, order: Int32Array | null }} options
 */
function shown(p, view, source, options) {
  p.source = source;
  view.plot.setSource(source, options);
  p.displayedData = source.coords.data;
  p.displayedOnce = true;
  view.pointsShown();
}
