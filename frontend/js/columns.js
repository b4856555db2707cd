// Metadata of a large server data set, column by column as typed arrays (a dictionary and
// int32 codes) instead of one TSV to download and split in the browser: at 10M rows the
// text alone is hundreds of MB. Each column becomes an array of shared dictionary strings,
// the shape the rest of the front end reads. Only the columns the first picture needs (colour,
// labels, search) are fetched before it is coloured; the others when a panel asks for them
// (Dataset.values), so opening a wide table costs one column, not all of them.

import { numericColumn } from './tsv.js';
import { inSlices } from './yielding.js';

/** Above this many points metadata comes as columns. */
export const COLUMNS_ABOVE = 100000;

/** The dictionary and codes a decoded column came from (values -> { dictionary, codes }). */
const encodings = new WeakMap();

/**
 * { dictionary, codes } of a column decoded from them, else null: loops over millions of rows
 * (colours, distinct counts) read small integers instead of hashing strings.
 */
export function encodingOf(values) {
  return encodings.get(values) ?? null;
}

/** Counts per code, by codes array: colours, the legend and the charts ask for the same. */
const counted = new WeakMap();

/**
 * How many rows hold each dictionary entry of a decoded column: one pass over the codes,
 * made once per column (10M codes: tens of ms, asked three times as a data set opens).
 * Read-only: the array is shared.
 */
export function codeCounts({ dictionary, codes }) {
  const known = counted.get(codes);
  if (known?.length === dictionary.length) return known;
  const perCode = new Uint32Array(dictionary.length);
  for (let i = 0; i < codes.length; i++) perCode[codes[i]]++;
  counted.set(codes, perCode);
  return perCode;
}

/**
 * An array of n strings from a dictionary and n codes into it, made in slices (ten million
 * rows at 10M points), yielding between them.
 */
export async function decodeColumn(dictionary, codes) {
  const values = new Array(codes.length);
  await inSlices(codes.length, (start, end) => {
    for (let i = start; i < end; i++) values[i] = dictionary[codes[i]];
  });
  encodings.set(values, { dictionary, codes });
  return values;
}

/** Whether a column has 2..20 distinct values (one worth colouring by at start). */
export function fewDistinct(values) {
  const known = encodings.get(values)?.dictionary.length; // its distinct values
  if (known !== undefined) return known >= 2 && known <= 20;
  const distinct = new Set();
  for (const v of values) {
    distinct.add(v);
    if (distinct.size > 20) return false;
  }
  return distinct.size >= 2;
}

/** A function fetching one column's values (an array of n strings) from the server. */
export function columnFetcher(api, run, embedding, n) {
  return async (name) => {
    const { dictionary, codes } = await api.metadataColumn(run, embedding, name, 'categorical');
    if (codes.length !== n) throw new Error(`metadata column ${name}: ${codes.length} rows for ${n} points`);
    return decodeColumn(dictionary, codes);
  };
}

/**
 * { names, columns, nRows } (as parseMetadataTsv returns) where only some columns are fetched
 * (the others null until Dataset.values asks for them): `wanted` (the state's colour, label and
 * search columns) first, then columns in order until the default label column (the first text
 * one) and colour column (the first with 2..20 values) are known, so the defaults are those of
 * the whole table.
 */
/**
 * @param {(name: string) => Promise<any[]>} fetchColumn
 * @param {string[]} names
 * @param {number} n
 * @param {Array<string | null>} wanted
 * @param {(fraction: number) => void} [onProgress]
 */
export async function fetchFirstColumns(fetchColumn, names, n, wanted, onProgress = (_fraction) => {}) {
  const columns = names.map(() => null);
  const load = async (name) => {
    const i = names.indexOf(name);
    if (i < 0 || columns[i]) return;
    columns[i] = await fetchColumn(name);
    onProgress(columns.filter(Boolean).length / names.length);
  };
  for (const name of wanted) await load(name);
  let label = false;
  let color = false;
  for (const name of names) {
    if (label && color) break;
    await load(name);
    const values = columns[names.indexOf(name)];
    label ||= !numericColumn(values);
    color ||= fewDistinct(values);
  }
  return { names: names.slice(), columns, nRows: n };
}
