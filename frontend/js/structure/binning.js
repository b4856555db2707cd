// Metadata columns binned once into typed arrays (a bin number per row), so that charts of a
// million rows are counts over the bins: all rows once per data set, the selected rows on
// every selection change (one pass over the selection), rows of a brushed range one pass
// over the bin numbers. Pure: no DOM.

import { codeCounts, encodingOf } from '../columns.js';

export const MISSING = 0xffff;
export const HISTOGRAM_BINS = 30;
export const TOP_VALUES = 12;
export const UNIQUE_SHARE = 0.9; // this share of distinct values among the present ones: a summary
export const EXAMPLES = 5;

/** A numeric column: `bins` equal-width bins over [lo, hi]; NaN is missing. */
export function numericBinning(numbers, bins = HISTOGRAM_BINS) {
  const n = numbers.length;
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = numbers[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (!(hi >= lo)) {
    lo = 0;
    hi = 1;
  }
  const width = hi > lo ? (hi - lo) / bins : 1;
  const index = new Uint16Array(n);
  const counts = new Uint32Array(bins);
  let missing = 0;
  for (let i = 0; i < n; i++) {
    const v = numbers[i];
    if (Number.isNaN(v)) {
      index[i] = MISSING;
      missing++;
      continue;
    }
    const b = Math.min(bins - 1, Math.floor((v - lo) / width));
    index[i] = b;
    counts[b]++;
  }
  const edges = Array.from({ length: bins + 1 }, (_, b) => lo + b * width);
  return { kind: 'numeric', index, counts, missing, edges, labels: null };
}

/**
 * A categorical column: its `top` most frequent values, the rest in one "other" bin (never an
 * "other" of one value: it is shown itself). With `numbers` (the column read as numbers, a
 * class id such as 0-9), the values shown are in value order, not count order. A column
 * whose values are nearly all different has no useful bars: it becomes a summary, kind
 * "unique", with its count of distinct values and a few examples.
 */
export function categoryBinning(values, top = TOP_VALUES, numbers = null) {
  const encoded = encodingOf(values);
  const n = values.length;
  const unique = encoded ? codedUnique(encoded, top, n) : null;
  if (unique) return unique;
  const { ranked, present } = encoded ? codedFrequencies(encoded) : frequencies(values);
  if (ranked.length > top && ranked.length >= UNIQUE_SHARE * present) {
    return uniqueSummary(ranked.length, n - present, ranked.slice(0, EXAMPLES).map(([v]) => v));
  }
  ranked.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const keep = ranked.length === top + 1 ? top + 1 : top;
  const kept = ranked.slice(0, keep).map(([v]) => v);
  if (numbers) kept.sort((a, b) => Number(a) - Number(b));
  const others = ranked.length - kept.length;
  const code = new Map(kept.map((v, i) => [v, i]));
  const labels = others ? [...kept, `(${others} other values)`] : kept;
  const binOf = (v) => (v === '' ? MISSING : code.get(v) ?? kept.length);
  const index = encoded ? codedIndex(encoded, binOf) : Uint16Array.from(values, binOf);
  const counts = new Uint32Array(labels.length);
  for (let i = 0; i < n; i++) if (index[i] !== MISSING) counts[index[i]]++;
  return { kind: 'categorical', index, counts, missing: n - present, edges: null, labels };
}

/** The summary of a column of nearly all different values (kind "unique"). */
function uniqueSummary(distinct, missing, examples) {
  return { kind: 'unique', index: null, counts: new Uint32Array(0), missing, edges: null, labels: [], distinct, examples };
}

/** A dictionary-coded column's "unique" summary, told from its code counts alone (an id or
 * free-text column of millions of values: no [value, count] pair made per value), or null. */
function codedUnique(encoded, top, n) {
  const { dictionary } = encoded;
  if (dictionary.length <= top) return null;
  const perCode = codeCounts(encoded);
  let distinct = 0;
  let present = 0;
  const examples = [];
  for (let c = 0; c < dictionary.length; c++) {
    if (!perCode[c] || dictionary[c] === '') continue;
    distinct++;
    present += perCode[c];
    if (examples.length < EXAMPLES) examples.push(dictionary[c]);
  }
  return distinct > top && distinct >= UNIQUE_SHARE * present ? uniqueSummary(distinct, n - present, examples) : null;
}

/** [value, count] of each present value, in first-seen order, and how many rows have one. */
function frequencies(values) {
  const frequency = new Map();
  let present = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === '') continue;
    present++;
    frequency.set(v, (frequency.get(v) ?? 0) + 1);
  }
  return { ranked: [...frequency.entries()], present };
}

/** frequencies() of a column decoded from a dictionary (columns.js), through its int32 codes:
 * ten million rows without a string hashed per row. */
function codedFrequencies({ dictionary, codes }) {
  const perCode = codeCounts({ dictionary, codes });
  const ranked = [];
  let present = 0;
  dictionary.forEach((v, c) => {
    if (v === '' || !perCode[c]) return;
    ranked.push([v, perCode[c]]);
    present += perCode[c];
  });
  return { ranked, present };
}

/** Each row's bin through its code: the value's bin looked up once per dictionary entry. */
function codedIndex({ dictionary, codes }, binOf) {
  const perCode = Uint16Array.from(dictionary, binOf);
  const index = new Uint16Array(codes.length);
  for (let i = 0; i < codes.length; i++) index[i] = perCode[codes[i]];
  return index;
}


/** Counts per bin of the rows in `selection` (an array of row indices). */
export function selectedCounts(binning, selection) {
  const counts = new Uint32Array(binning.counts.length);
  const { index } = binning;
  if (!index) return counts;
  for (const i of selection) {
    const b = index[i];
    if (b !== MISSING && b !== undefined) counts[b]++;
  }
  return counts;
}

/** Row indices whose bin is in [first, last]. */
export function rowsInBins(binning, first, last) {
  const { index } = binning;
  const n = index.length;
  let count = 0;
  for (let b = first; b <= last; b++) count += binning.counts[b] ?? 0;
  const out = new Array(count);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const b = index[i];
    if (b >= first && b <= last && b !== MISSING) out[k++] = i;
  }
  return out;
}

/** One CSV line; cells quoted when they hold a comma, quote or line break. */
export function csvLine(cells) {
  return cells.map((c) => (/[",\r\n]/.test(c) ? `"${String(c).replace(/"/g, '""')}"` : String(c))).join(',');
}
