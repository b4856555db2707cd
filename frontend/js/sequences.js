// Sequences, as TensorBoard's demo data has them: a metadata column (`__next__`, or
// `__seq_next__`) whose cell holds the index of the next point of the chain, empty for none.
// Parsed once per data set into segment pairs for the polyline layer. Pure: no DOM.

/** Column names that link a point to the next one, in the order they are looked for. */
export const SEQUENCE_COLUMNS = ['__next__', '__seq_next__'];

/** The data set's sequence column, or null when it has none. */
export function sequenceColumn(columns) {
  return SEQUENCE_COLUMNS.find((name) => columns.includes(name)) ?? null;
}

/**
 * Segments of the chains in `cells` (one string per point, n points): { pairs, bad,
 * firstBad } where `pairs` is a Uint32Array [from, to, from, to, ...], `bad` how many
 * non-empty cells were skipped (not a whole number, out of range, or the point itself) and
 * `firstBad` the first such { row, value } to tell the user about, or null.
 */
export function parseSequence(cells, n) {
  const pairs = new Uint32Array(2 * n);
  let count = 0;
  let bad = 0;
  let firstBad = null;
  const rows = Math.min(n, cells.length);
  for (let i = 0; i < rows; i++) {
    const raw = cells[i];
    const text = raw === null || raw === undefined ? '' : String(raw).trim();
    if (text === '') continue;
    const next = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(next) || next >= n || next === i) {
      bad += 1;
      if (!firstBad) firstBad = { row: i, value: text };
      continue;
    }
    pairs[count * 2] = i;
    pairs[count * 2 + 1] = next;
    count += 1;
  }
  return { pairs: pairs.slice(0, count * 2), bad, firstBad };
}

/** The message for skipped cells, naming the column and the first bad cell. */
export function sequenceWarning(column, { bad, firstBad }) {
  if (!bad) return '';
  const shown = firstBad.value.length > 40 ? `${firstBad.value.slice(0, 40)}…` : firstBad.value;
  return `Sequence column ${column}: ${bad} cell${bad === 1 ? '' : 's'} skipped (not the index of another point; first at point ${firstBad.row}: "${shown}")`;
}
