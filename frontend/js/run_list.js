// Embeddings whose tensor the server is still reading (`status: "loading"` in /api/runs): the
// page waits for the one it is about to open, with a progress line, instead of finding nothing
// to show on a big LOGDIR. Other embeddings are listed as they are. The run list changes by the
// server's events (live_runs.js), progress included: nothing asks again.

const isLoading = (embedding) => embedding.status === 'loading';

/**
 * The embedding the page will open and must wait for, as { run, embedding }, or null when it
 * can open one now. The page opens the URL's embedding if listed, else the first usable one.
 */
export function pendingEmbedding(runs, fromUrl = null) {
  const all = runs.flatMap((r) => r.embeddings.map((embedding) => ({ run: r.name, embedding })));
  const wanted = fromUrl && all.find((c) => c.run === fromUrl.run && c.embedding.name === fromUrl.embedding);
  const target = wanted || all.find((c) => isLoading(c.embedding) || (c.embedding.status === 'ready' && c.embedding.shape));
  return target && isLoading(target.embedding) ? target : null;
}

/**
 * A run's name as the page shows it: "." (TensorBoard's name for the LOGDIR itself, kept in
 * the API, URLs and bookmarks) with the folder's name beside it, which says what it is.
 * @param {import('./store.js').Run[]} runs
 * @param {string} name
 */
export function runLabel(runs, name) {
  const folder = runs.find((r) => r.name === name)?.folder;
  return name === '.' && folder ? `. (${folder})` : name;
}

/** "Loading run/name: 42% (300 / 730 MiB)" from an embedding's progress. */
export function loadingLabel(run, embedding) {
  const p = embedding.progress;
  const where = run === '.' ? embedding.name : `${run}/${embedding.name}`;
  if (!p || !p.bytes_total) return `Loading ${where}…`;
  const mib = (bytes) => Math.round(bytes / 2 ** 20);
  return `Loading ${where}: ${Math.round(p.fraction * 100)}% (${mib(p.bytes_done)} / ${mib(p.bytes_total)} MiB)`;
}

/**
 * A progress line for the embedding the page waits for: `seen(runs)` with each new run list
 * answers whether it may open now (the line then goes).
 * @param {{ start: (label: string) => { update: (fraction: number | null, text?: string) => void, done: () => void } }} progress
 */
export function loadingLine(progress, fromUrl = null) {
  let task = null;
  return (runs) => {
    const pending = pendingEmbedding(runs, fromUrl);
    if (!pending) {
      task?.done();
      task = null;
      return true;
    }
    const label = loadingLabel(pending.run, pending.embedding);
    task ??= progress.start(label);
    task.update(pending.embedding.progress?.fraction ?? null, label);
    return false;
  };
}
