// A training run's steps as the page sees them: the `TAG:STEP` embeddings of a run (PyTorch's
// and our writer's names, projector_core/data/steps.py), grouped by tag, ascending by step,
// read from the run list the server's events keep (live_runs.js). Only steps of the same
// points (as many rows) that can be shown are walked.

const STEP_NAME = /^(.*):(\d+)$/;

/** ['enc', 10] for 'enc:00010'; [name, null] for a name without a step. */
export function splitStep(name) {
  const match = STEP_NAME.exec(name);
  return match ? [match[1], Number(match[2])] : [name, null];
}

/**
 * @typedef {object} Timeline  the steps of the tag an embedding belongs to
 * @property {string} run
 * @property {string} tag
 * @property {Array<{ step: number, embedding: string }>} steps  ready ones of `n` rows, ascending
 */

/**
 * The timeline of `embedding` in `run`, or null when it is no training step.
 * @param {import('../store.js').Run[]} runs
 * @param {string} run
 * @param {string} embedding
 * @param {number} n  rows of the points shown: steps of other sizes are other points
 * @returns {Timeline | null}
 */
export function stepTimeline(runs, run, embedding, n) {
  const [tag, step] = splitStep(embedding);
  if (step === null) return null;
  const entries = runs.find((r) => r.name === run)?.embeddings ?? [];
  const steps = entries
    .map((e) => ({ entry: e, split: splitStep(e.name) }))
    .filter(({ entry, split }) => split[0] === tag && split[1] !== null && entry.status === 'ready' && entry.shape?.[0] === n)
    .map(({ entry, split }) => ({ step: split[1], embedding: entry.name }))
    .sort((a, b) => a.step - b.step);
  return { run, tag, steps };
}

/**
 * Whether a run is being written now: its newest step's files are younger than `seconds`
 * (the issue's minute: Follow is on by default then).
 * @param {Array<{ written?: number | null }>} steps  /api/steps' steps of the tag
 * @param {number} now  seconds since the epoch
 */
export function writtenRecently(steps, now, seconds = 60) {
  const newest = Math.max(...steps.map((s) => s.written ?? -Infinity));
  return Number.isFinite(newest) && now - newest < seconds;
}
