// The colour rule of a projection shown from tiles: the same colours pointColoring
// (colors.js) gives the whole set, as one colour word per dictionary code of the colour-by
// column instead of one per point. The tiles carry each point's code (`column=`), the server
// counts the rows of each value (`GET /api/metadata/column/counts`), so nothing the size of
// the data set is made in the tab.

import {
  categoricalCodes,
  categoricalResult,
  colorWord,
  DEFAULT_COLOR,
  gradientColor,
  MISSING_COLOR,
} from '../colors.js';
import { numericColumn } from '../tsv.js';

/**
 * @typedef {object} TileColors  what each tile's points are painted with
 * @property {string|null} column  the column whose codes the tiles carry (null: none)
 * @property {Uint32Array|null} words  colour word (RGBA, little-endian) per code
 * @property {number} word          the colour of a point without a code
 */

/** Every point in the default colour: the tiles need no codes. */
export function uniformTileColoring() {
  return { kind: 'none', colors: null, legend: null, tile: { column: null, words: null, word: colorWord(DEFAULT_COLOR) } };
}

/**
 * Whether a column is coloured by category unless the user says otherwise, from its
 * dictionary and counts (Dataset.categoricalByDefault's rule over the rows): text columns,
 * and numeric ones holding at most 20 distinct integers.
 */
export function categoricalByDefault({ dictionary, counts }) {
  const numbers = numericColumn(dictionary);
  if (!numbers) return true;
  let distinct = 0;
  for (let c = 0; c < numbers.length; c++) {
    if (!counts[c] || Number.isNaN(numbers[c])) continue;
    if (!Number.isInteger(numbers[c])) return false;
    distinct++;
  }
  return distinct <= 20;
}

/**
 * The colouring of a tiled projection by `summary` ({ column, dictionary, counts }: the
 * server's counts of the colour-by column), categorical as `categorical` says (else as the
 * column suggests): { kind, colors: null, legend (as the whole set's), tile: TileColors }.
 */
export function tileColoring(summary, categorical = null) {
  const { column, dictionary, counts } = summary;
  const numbers = (categorical ?? categoricalByDefault(summary)) ? null : numericColumn(dictionary);
  if (!numbers) {
    const { wordOf, order, colorOf, missing } = categoricalCodes(dictionary, counts);
    const result = categoricalResult(null, order, colorOf, missing);
    return { ...result, tile: { column, words: wordOf, word: colorWord(MISSING_COLOR) } };
  }
  let min = Infinity;
  let max = -Infinity;
  let missing = 0;
  numbers.forEach((v, c) => {
    if (!counts[c]) return;
    if (!Number.isFinite(v)) missing += counts[c];
    else {
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
  });
  const span = max > min ? max - min : 1;
  const words = Uint32Array.from(numbers, (v) => colorWord(Number.isFinite(v) ? gradientColor((v - min) / span) : MISSING_COLOR));
  const legend = { min: Number.isFinite(min) ? min : null, max: Number.isFinite(max) ? max : null, missing };
  return { kind: 'numeric', colors: null, legend, tile: { column, words, word: colorWord(MISSING_COLOR) } };
}
