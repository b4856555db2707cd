// The parameter table (GET /api/projections/methods, made by projector_core.projection.methods
// from the request models): every parameter's type, default and bounds, each method's
// capabilities, and for a server embedding its data's limits (perplexity at most (N - 1) / 3,
// UMAP's n_neighbors below N, k at most the other points) and defaults (perplexity for its N).
// The page validates, clamps, fills its panels and picks how to run a method from it, and
// never works these numbers out itself. A dataset holds its table in `methods`; a shared
// static site has none and falls back on the `limits` its manifest lists.

/** The page's state fields of each method and the API parameter each one is. */
export const STATE_PARAMS = {
  pca: { spherize: 'spherize' },
  tsne: { perplexity: 'perplexity', learningRate: 'learning_rate', nIter: 'n_iter', superviseWeight: 'supervise_weight' },
  umap: { nNeighbors: 'n_neighbors', minDist: 'min_dist' },
};

/** The table entry of `method` (capabilities and `params`), or null without a table. */
export function methodInfo(dataset, method) {
  return dataset?.methods?.methods?.[method] ?? null;
}

/**
 * The request a fresh view of `method` makes for this data (the table's `default_request`:
 * its dims and the parameters a view sets, at this data's defaults), or null without a table.
 * The server prepares its default view and exports with the same entry, so they share jobs.
 * @returns {{ dims: number, params: Record<string, any> } | null}
 */
export function defaultRequest(dataset, method) {
  return methodInfo(dataset, method)?.default_request ?? null;
}

/** The table's description of parameter `param` of `method`, or null. */
export function paramInfo(dataset, method, param) {
  return methodInfo(dataset, method)?.params?.[param] ?? null;
}

/** Whether `method` is answered by one blocking request (PCA, custom) rather than followed. */
export function isQuick(dataset, method) {
  return methodInfo(dataset, method)?.quick ?? false;
}

/** Whether `method` starts from another job's layout (`init_from_job`) or is turned onto it. */
export function startsFromLayout(table, method) {
  return table?.methods?.[method]?.starts_from_layout ?? false;
}

/** The limit on `param` of `group` ('tsne', 'umap', ... or 'neighbors'), or null. */
export function limitFor(dataset, group, param) {
  const table = dataset?.methods;
  if (table) {
    const entry = group === 'neighbors' ? table.neighbors?.[param] : paramInfo(dataset, group, param) ?? table.methods?.[group]?.limits?.[param];
    return entry ? { minimum: entry.minimum ?? null, maximum: entry.maximum ?? null } : null;
  }
  const limits = dataset?.info?.limits;
  if (!limits) return null;
  const found = group === 'neighbors' ? limits.neighbors : limits.projections?.[group];
  return found?.[param] ?? null;
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

/** The table's defaults as state fields: { tsne: { perplexity, nIter, ... }, umap: ..., pca: ... }. */
export function tableDefaults(table) {
  const out = {};
  for (const [method, fields] of Object.entries(STATE_PARAMS)) {
    const params = table?.methods?.[method]?.params;
    if (!params) continue;
    out[method] = {};
    for (const [field, name] of Object.entries(fields)) {
      const value = params[name]?.default;
      if (value === undefined || value === null) continue; // the data decides: no table for data
      out[method][field] = params[name].choices?.includes(value) ? null : value; // "auto": null
    }
  }
  return out;
}

const format = (v) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));

/**
 * A parameter's value inside the table's range: integers rounded, an excluded minimum
 * (learning rate's 0) giving way to the parameter's choice (null: "auto"). Null or a
 * non-number is left as it is.
 */
function clampParam(value, param) {
  if (typeof value !== 'number' || !param || !['number', 'integer'].includes(param.type)) return value;
  let out = param.type === 'integer' ? Math.round(value) : value;
  if (param.exclusive_minimum && param.minimum != null && out <= param.minimum) return param.choices?.length ? null : value;
  out = clampToLimit(out, param);
  return out;
}

/**
 * `state` with every projection parameter and the neighbour count inside the table's range
 * (the data's limits included), and a note for each value moved, so that a bookmark or a URL
 * with a value out of range opens clamped and says so instead of failing at the server.
 * Without a table (local data) the state is returned as it is.
 */
export function clampState(state, table) {
  const notes = [];
  if (!table?.methods) return { state, notes };
  const out = { ...state };
  for (const [method, fields] of Object.entries(STATE_PARAMS)) {
    const entry = table.methods[method];
    if (!entry || !state[method]) continue;
    out[method] = { ...state[method] };
    for (const [field, name] of Object.entries(fields)) {
      const value = state[method][field];
      const clamped = clampParam(value, entry.params[name]);
      if (clamped === value) continue;
      out[method][field] = clamped;
      const shown = clamped === null ? entry.params[name].choices[0] : format(clamped);
      notes.push(`${entry.title} ${name} ${format(value)} is out of range, using ${shown}`);
    }
  }
  const k = table.neighbors?.k;
  if (k && typeof state.neighbors?.k === 'number') {
    const clamped = Math.round(clampToLimit(state.neighbors.k, k));
    if (clamped !== state.neighbors.k) {
      out.neighbors = { ...state.neighbors, k: clamped };
      notes.push(`neighbours k ${format(state.neighbors.k)} is out of range, using ${clamped}`);
    }
  }
  return { state: out, notes };
}

/** The status line that tells the user what was clamped (empty when nothing was). */
export function clampNote(notes, what = 'The view') {
  return notes.length ? `${what} asked for values this data does not allow: ${notes.join('; ')}` : '';
}
