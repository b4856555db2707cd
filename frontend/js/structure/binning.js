// Metadata columns binned once into typed arrays (a bin number per row), so that charts of a
// million rows are counts over the bins: all rows once per data set, the selected rows on
// every selection change (one pass over the selection), rows of a brushed range one pass
// over the bin numbers. Pure: no DOM.

import { encodingOf } from '../columns.js';

export const MISSING = 0xffff;
export const HISTOGRAM_BINS = 30;
export const TOP_VALUES = 12;

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

/** A categorical column: its `top` most frequent values, the rest in one "other" bin. */
export function categoryBinning(values, top = TOP_VALUES) {
  const encoded = encodingOf(values);
  if (encoded) return codedBinning(encoded, top);
  const n = values.length;
  const frequency = new Map();
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== '') frequency.set(v, (frequency.get(v) ?? 0) + 1);
  }
  const ranked = [...frequency.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const kept = ranked.slice(0, top).map(([v]) => v);
  const other = ranked.length > top;
  const code = new Map(kept.map((v, i) => [v, i]));
  const labels = other ? [...kept, `(${ranked.length - top} other values)`] : kept;
  const index = new Uint16Array(n);
  const counts = new Uint32Array(labels.length);
  let missing = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === '') {
      index[i] = MISSING;
      missing++;
      continue;
    }
    const b = code.get(v) ?? top;
    index[i] = b;
    counts[b]++;
  }
  return { kind: 'categorical', index, counts, missing, edges: null, labels };
}

/**
 * categoryBinning of a column decoded from a dictionary (columns.js), through its int32 codes:
 * ten million rows without a string hashed per row.
 */
function codedBinning({ dictionary, codes }, top) {
  const perCode = new Uint32Array(dictionary.length);
  for (let i = 0; i < codes.length; i++) perCode[codes[i]]++;
  const ranked = [];
  dictionary.forEach((v, code) => {
    if (v !== '' && perCode[code]) ranked.push([v, perCode[code], code]);
  });
  ranked.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const other = ranked.length > top;
  const labels = other ? [...ranked.slice(0, top).map(([v]) => v), `(${ranked.length - top} other values)`] : ranked.map(([v]) => v);
  const binOf = new Uint16Array(dictionary.length).fill(MISSING);
  ranked.forEach(([, , code], i) => {
    binOf[code] = Math.min(i, top);
  });
  const index = new Uint16Array(codes.length);
  const counts = new Uint32Array(labels.length);
  for (let i = 0; i < codes.length; i++) {
    const b = binOf[codes[i]];
    index[i] = b;
    if (b !== MISSING) counts[b]++;
  }
  const missing = codes.length - counts.reduce((sum, c) => sum + c, 0);
  return { kind: 'categorical', index, counts, missing, edges: null, labels };
}

/** Counts per bin of the rows in `selection` (an array of row indices). */
export function selectedCounts(binning, selection) {
  const counts = new Uint32Array(binning.counts.length);
  const { index } = binning;
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
