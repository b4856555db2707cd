// Long loops over millions of points in slices: between two slices the page answers input and
// draws (a main-thread task over ~50 ms is one the user can feel; ten million rows of even a
// trivial loop are hundreds of ms on a busy CPU).

/** Rows a slice takes: about 10-30 ms of a simple loop. */
export const SLICE_ROWS = 1 << 20;

/** Resolves in a later task, after input and rendering had their turn. */
export function nextTask() {
  if (globalThis.scheduler?.yield) return globalThis.scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Resolves in a later task that waits for the page's other tasks (background priority where
 * the browser has one): for work no picture waits on, such as a column's dictionary, which
 * then goes after the tasks that draw (a scheduler.yield() continuation goes ahead of them).
 */
export function laterTask() {
  if (globalThis.scheduler?.postTask) return globalThis.scheduler.postTask(() => {}, { priority: 'background' });
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Runs `body(start, end)` over [0, n) in slices of `rows`, yielding between them. */
export async function inSlices(n, body, rows = SLICE_ROWS) {
  for (let start = 0; start < n; start += rows) {
    if (start) await nextTask();
    body(start, Math.min(n, start + rows));
  }
}
