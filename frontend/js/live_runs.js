// The run list as the server's events change it (events.js, GET /api/events): what /api/runs
// answered, then every `run` and `embedding` event applied in order, so the page's run and
// tensor pickers follow a LOGDIR as it fills without asking again. Events carry whole states
// (an `embedding` event the listing's entry of it, `entry`), so replaying them over a listing
// made after they were sent leaves each thing as its latest event says (each state change is
// an event: a thing no later event speaks of is as the listing has it).

/** @typedef {import('./store.js').Run} Run */
/** @typedef {import('./store.js').EmbeddingEntry} EmbeddingEntry */

/**
 * The runs after one event: a new array, the unchanged runs and entries kept as they were.
 * @param {Run[]} runs
 * @param {string} kind  'run' | 'embedding' (others leave the list as it is)
 * @param {any} data  the event's data
 * @returns {Run[]}
 */
export function withEvent(runs, kind, data) {
  if (kind === 'run') return withRun(runs, data);
  if (kind === 'embedding') return withEmbedding(runs, data);
  return runs;
}

/** @param {Run[]} runs */
function withRun(runs, data) {
  const { run: name, action } = data;
  if (action === 'removed') return runs.filter((r) => r.name !== name);
  const old = runs.find((r) => r.name === name);
  const known = new Map((old?.embeddings ?? []).map((e) => [e.name, e]));
  // In the run's order; an entry not heard of yet is listed as loading until its event comes.
  const embeddings = (data.embeddings ?? []).map((e) => known.get(e) ?? { name: e, status: 'loading', shape: null });
  const run = { ...old, name, error: data.error ?? undefined, warnings: data.warnings ?? [], embeddings };
  return old ? runs.map((r) => (r === old ? run : r)) : [...runs, run];
}

/** @param {Run[]} runs */
function withEmbedding(runs, data) {
  const { run: runName, embedding: name, action } = data;
  const old = runs.find((r) => r.name === runName);
  if (action === 'removed') {
    if (!old) return runs;
    return runs.map((r) => (r === old ? { ...r, embeddings: r.embeddings.filter((e) => e.name !== name) } : r));
  }
  /** @type {EmbeddingEntry | undefined} */
  const entry = data.entry;
  if (!entry) return runs; // gone by the time it was sent: its removal follows
  if (!old) return [...runs, { name: runName, embeddings: [entry] }];
  const at = old.embeddings.findIndex((e) => e.name === name);
  const embeddings = at < 0 ? [...old.embeddings, entry] : old.embeddings.map((e, i) => (i === at ? entry : e));
  return runs.map((r) => (r === old ? { ...r, embeddings } : r));
}
