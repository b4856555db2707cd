// t-SNE supervision (TensorBoard's "supervise with" and slider): which metadata column the
// server may fit with. Only columns the server holds (annotation columns included: a label
// fixed a moment ago supervises the next fit): a column tagged in this browser session
// (metadata_edit.js) exists only here, so it is not offered.

/** Columns a t-SNE request may name in `supervise_column`. */
export function superviseChoices(dataset) {
  if (!dataset || dataset.local) return [];
  return dataset.columns.filter((c) => !dataset.edited.has(c));
}

/** The column to send with the request, or null when the state does not supervise. */
export function superviseColumn(tsneState, dataset) {
  const { superviseColumn: column, superviseWeight: weight } = tsneState;
  if (!column || !(weight > 0)) return null;
  return superviseChoices(dataset).includes(column) ? column : null;
}
