// The whole array (a PointDelivery, point_source.js): a projection's N x k coordinates come to
// the page (one request, or a job's frames), are fitted into the plot and drawn from its own
// buffers (ArrayPoints); colours, search and labels read whole metadata columns (a large
// set's fetched when asked, columns.js).

import { fetchFirstColumns } from '../columns.js';
import { pointColoring } from '../colors.js';
import { display, refresh } from '../projection/display.js';
import { followFrames, waitWhole } from '../projection/running.js';

/** @type {import('./point_source.js').PointDelivery} */
export const ARRAY = {
  colorKeys: ['colorBy', 'categorical', 'colorByQuality'],
  wholeColumns: true,

  run(p, request, n, quick) {
    return quick ? waitWhole(p, request, n) : followFrames(p, request, n);
  },

  axes() {
    return null;
  },

  refresh(p, view) {
    refresh(p, view);
  },

  show(p, view, animate) {
    if (p.data) display(p, view, animate);
  },

  coloring(highlight) {
    const { state, dataset } = highlight.app;
    return { now: pointColoring(state, dataset, highlight.quality), later: null };
  },

  async search(highlight, column, query, regex) {
    const ds = highlight.app.dataset;
    return { indices: (await highlight.app.api.search(ds.run, ds.name, column, query, regex)).indices, scope: null };
  },

  labeler(highlight) {
    const { dataset, state } = highlight.app;
    return (i) => dataset.label(i, state.labelBy);
  },

  columnKind(highlight, column) {
    const ds = highlight.app.dataset;
    const numeric = Boolean(ds.numeric(column));
    return { numeric, categorical: numeric ? ds.categoricalByDefault(column) : true };
  },

  firstColumns(highlight, dataset, names, wanted, restored, onProgress) {
    return fetchFirstColumns(dataset.fetchColumn, names, dataset.n, wanted, onProgress);
  },
};
