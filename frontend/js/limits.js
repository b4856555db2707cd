// The limits the data puts on request parameters (perplexity at most (N - 1) / 3, UMAP's
// n_neighbors below N, k at most the other points), as the server declares them: each
// embedding's `limits` in /api/runs, made by projector_core.projection.methods. The front end clamps
// to these numbers and never works them out itself. Local data sets have none.

/** The limit on `param` of `group` ('tsne', 'umap', ... or 'neighbors'), or null. */
export function limitFor(dataset, group, param) {
  const limits = dataset?.info?.limits;
  if (!limits) return null;
  const table = group === 'neighbors' ? limits.neighbors : limits.projections?.[group];
  return table?.[param] ?? null;
}

/** `value` moved into the limit's range; the minimum wins when the data allows nothing. */
export function clampToLimit(value, limit) {
  let out = value;
  if (limit?.maximum != null) out = Math.min(out, limit.maximum);
  if (limit?.minimum != null) out = Math.max(out, limit.minimum);
  return out;
}

/** Whether `value` is inside the limit (always, without one). */
export function withinLimit(value, limit) {
  return (limit?.minimum == null || value >= limit.minimum) && (limit?.maximum == null || value <= limit.maximum);
}
