// Colour scales: a categorical palette with a legend of counts, a perceptual numeric
// gradient with a min/max legend, and the fixed highlight colours. Pure: no DOM.

import { codeCounts, encodingOf } from './columns.js';

/** Point colour when nothing colours the points (TensorBoard's #7575d9). */
export const DEFAULT_COLOR = [117, 117, 217];
/** Colour of a point whose colour-by value is missing. */
export const MISSING_COLOR = [150, 150, 150];

/**
 * 20 categorical colours, ordered so that the first ten are far apart (Tableau 10 with
 * stronger contrast) and the next ten are their light partners.
 */
export const PALETTE = [
  '#4e79a7', '#f28e2b', '#e15759', '#59a14f', '#b07aa1',
  '#edc948', '#76b7b2', '#ff9da7', '#9c755f', '#6b6ecf',
  '#a0cbe8', '#ffbe7d', '#8cd17d', '#d4a6c8', '#86bcb6',
  '#f1ce63', '#d37295', '#b6992d', '#499894', '#bab0ac',
].map(hexToRgb);

/** Viridis at 9 stops: perceptually uniform, readable by colour-blind people, prints in grey. */
const GRADIENT_STOPS = [
  '#440154', '#472d7b', '#3b528b', '#2c728e', '#21918c',
  '#28ae80', '#5ec962', '#addc30', '#fde725',
].map(hexToRgb);

/** Most categories a legend lists by name; the rest are counted together. */
export const LEGEND_LIMIT = 20;

export function hexToRgb(hex) {
  const h = hex.replace('#', '');
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16));
}

/** @param {ArrayLike<number> & Iterable<number>} rgb */
export function rgbToCss([r, g, b]) {
  return `rgb(${r}, ${g}, ${b})`;
}

/** Colour of t in [0, 1] on the numeric gradient. */
export function gradientColor(t) {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (GRADIENT_STOPS.length - 1);
  const i = Math.min(GRADIENT_STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const a = GRADIENT_STOPS[i];
  const b = GRADIENT_STOPS[i + 1];
  return [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * f));
}

/** CSS linear-gradient() text of the numeric scale, for its legend bar. */
export function gradientCss() {
  const stops = GRADIENT_STOPS.map((c, i) => `${rgbToCss(c)} ${(i / (GRADIENT_STOPS.length - 1)) * 100}%`);
  return `linear-gradient(to right, ${stops.join(', ')})`;
}

function fill(colors, i, rgb) {
  colors[i * 4] = rgb[0];
  colors[i * 4 + 1] = rgb[1];
  colors[i * 4 + 2] = rgb[2];
  colors[i * 4 + 3] = 255;
}

/** Every point in the default colour: the colouring when "colour by" is off. */
export function uniformColoring(n) {
  const colors = new Uint8Array(n * 4);
  for (let i = 0; i < n; i++) fill(colors, i, DEFAULT_COLOR);
  return { kind: 'none', colors, legend: null };
}

/**
 * The order categories take palette colours and legend rows in, from [value, count] pairs:
 * the LEGEND_LIMIT most frequent (ties by value) by value, so a legend reads 0, 1, 2, ... and
 * a label keeps its colour when the counts change (a subset, another training step); then
 * the rest by count, their colours repeating. export/coloring.py keeps the same rule.
 * @param {Array<[string, number]>} counted
 */
export function colourOrder(counted) {
  const byCount = [...counted].sort((a, b) => b[1] - a[1] || compareValues(a[0], b[0]));
  const named = byCount.slice(0, LEGEND_LIMIT).sort((a, b) => compareValues(a[0], b[0]));
  return [...named, ...byCount.slice(LEGEND_LIMIT)];
}

/**
 * Categorical colouring: categories in colourOrder, palette colours in that order, cycling
 * beyond 20. Legend: the LEGEND_LIMIT most frequent categories, by value, with counts, how
 * many points the rest hold, and how many values are missing.
 */
export function categoricalColoring(values) {
  const encoded = encodingOf(values);
  if (encoded) return codedColoring(encoded);
  const counts = new Map();
  for (const v of values) if (v !== '') counts.set(v, (counts.get(v) || 0) + 1);
  const order = colourOrder([...counts.entries()]);
  const colorOf = new Map(order.map(([value], i) => [value, PALETTE[i % PALETTE.length]]));
  const colors = new Uint8Array(values.length * 4);
  let missing = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === '') missing++;
    fill(colors, i, v === '' ? MISSING_COLOR : colorOf.get(v));
  }
  return categoricalResult(colors, order, colorOf, missing);
}

/**
 * categoricalColoring of a column decoded from a dictionary (columns.js): counted and filled
 * through its int32 codes, one 32-bit colour word a point, no string hashed per point (ten
 * million points: tens of ms instead of a second).
 */
function codedColoring({ dictionary, codes }) {
  const { wordOf, order, colorOf, missing } = categoricalCodes(dictionary, codeCounts({ dictionary, codes }));
  const words = new Uint32Array(codes.length); // little-endian RGBA, as fill() writes it
  for (let i = 0; i < codes.length; i++) words[i] = wordOf[codes[i]];
  return categoricalResult(new Uint8Array(words.buffer), order, colorOf, missing);
}

/** One point's colour as a little-endian RGBA word (what fill() writes as four bytes). */
export function colorWord(rgb) {
  return (rgb[0] | (rgb[1] << 8) | (rgb[2] << 16) | (255 << 24)) >>> 0;
}

/**
 * The categorical rule over a dictionary from how many rows hold each value (`perCode`):
 * categories in colourOrder, palette colours in that order; the colour word of every code
 * (`wordOf`), the order, and the rows missing a value. The whole set's codes and a tiled
 * projection's (tiles/coloring.js) are coloured by this one rule.
 */
export function categoricalCodes(dictionary, perCode) {
  const counted = [];
  let missing = 0;
  dictionary.forEach((value, code) => {
    if (value === '') missing += perCode[code];
    else if (perCode[code]) counted.push([value, perCode[code]]);
  });
  const order = colourOrder(counted);
  const colorOf = new Map(order.map(([value], i) => [value, PALETTE[i % PALETTE.length]]));
  const wordOf = Uint32Array.from(dictionary, (v) => colorWord(v === '' ? MISSING_COLOR : colorOf.get(v) ?? MISSING_COLOR));
  return { wordOf, order, colorOf, missing };
}

export function categoricalResult(colors, order, colorOf, missing) {
  const items = order.slice(0, LEGEND_LIMIT).map(([value, count]) => ({
    value,
    count,
    color: colorOf.get(value),
  }));
  const otherCount = order.slice(LEGEND_LIMIT).reduce((sum, [, count]) => sum + count, 0);
  return {
    kind: 'categorical',
    colors,
    legend: { items, categories: order.length, otherCount, missing },
  };
}

function compareValues(a, b) {
  const na = Number(a);
  const nb = Number(b);
  if (a !== '' && b !== '' && Number.isFinite(na) && Number.isFinite(nb)) return na - nb;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Numeric colouring on the gradient between the column's finite min and max. */
export function numericColoring(numbers) {
  let min = Infinity;
  let max = -Infinity;
  for (const v of numbers) {
    if (Number.isFinite(v)) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  const span = max > min ? max - min : 1;
  const colors = new Uint8Array(numbers.length * 4);
  let missing = 0;
  for (let i = 0; i < numbers.length; i++) {
    const v = numbers[i];
    if (!Number.isFinite(v)) missing++;
    fill(colors, i, Number.isFinite(v) ? gradientColor((v - min) / span) : MISSING_COLOR);
  }
  return {
    kind: 'numeric',
    colors,
    legend: { min: Number.isFinite(min) ? min : null, max: Number.isFinite(max) ? max : null, missing },
  };
}

/**
 * The colouring for a metadata column: numeric columns get the gradient unless the user
 * forces categorical colouring; everything else is categorical.
 */
export function columnColoring(values, numbers, { categorical = false } = {}) {
  if (numbers && !categorical) return numericColoring(numbers);
  return categoricalColoring(values);
}

/** Colour of neighbour k (0 = nearest) of `count`: strong near the query, lighter further out. */
export function neighborShade(rank, count) {
  return count <= 1 ? 0 : Math.min(15, Math.round((rank / (count - 1)) * 15));
}

/**
 * Projection quality per point (a share in [0, 1], null where not measured) on the numeric
 * gradient, grey where not measured. Its legend is the structure panel's, not a column's.
 */
export function qualityColoring(values) {
  const colors = new Uint8Array(values.length * 4);
  for (let i = 0; i < values.length; i++) fill(colors, i, values[i] === null ? MISSING_COLOR : gradientColor(values[i]));
  return { kind: 'quality', colors, legend: null };
}

/**
 * The one colour rule of the points, from the state: projection quality when
 * `state.colorByQuality` and `quality` (per-point values of the shown projection, one per
 * point of `dataset`) is at hand; else the "colour by" column (categorical as the state
 * forces it, or as the data set suggests); else the default colour.
 */
export function pointColoring(state, dataset, quality = null) {
  if (state.colorByQuality && quality && quality.length === dataset.n) return qualityColoring(quality);
  const column = state.colorBy;
  const values = column ? dataset.values(column) : null;
  if (!values) return uniformColoring(dataset.n);
  const categorical = state.categorical ?? dataset.categoricalByDefault(column);
  return columnColoring(values, dataset.numeric(column), { categorical });
}
