// How a projection's points reach the page: the whole array, or tiles (docs/ARCHITECTURE.md
// "Tiles"). Two contracts, one choice:
//   PointDelivery  how a projection of a method is run and its points coloured, searched and
//                  labelled: ARRAY (points/array_delivery.js) or TILES (tiles/delivery.js),
//                  chosen once here, from /api/runs, by deliveryFor(); nothing else asks.
//   PointSource    what the plot draws, picks and paints: ArrayPoints (points/array_points.js)
//                  or TilePoints (tiles/tile_points.js); a Projection hands one to the Plot.
// The page's highlights (Marks) and colours (Coloring) are one description for both; each
// source turns them into what it draws (per-point arrays, or per-tile rules).

import { ARRAY } from './array_delivery.js';
import { TILES } from '../tiles/delivery.js';

/**
 * @typedef {object} Marks  the page's highlights, whichever way the points came
 * @property {Iterable<number>} selected  rows selected one by one (the state's selection,
 *   unless a region or search below stands for it)
 * @property {Map<number, number>} rows  row -> flags of a few rows (focus, neighbours with
 *   their shade)
 * @property {{ polygon: number[][], axes: number[] } | null} region  points inside it are
 *   selected (a box or lasso, in projection units over `axes`)
 * @property {{ column: string, codes: Set<number> } | null} match  points whose code of
 *   `column` is one of `codes` are selected (a search over tiles carrying that column)
 * @property {Set<number> | null} keep  isolated rows: the others are hidden
 */

/**
 * @typedef {object} TileColors  a colour rule over dictionary codes (tiles carry codes)
 * @property {string | null} column  the column whose codes the tiles carry (null: none)
 * @property {Uint32Array | null} words  colour word (RGBA, little-endian) per code
 * @property {number} word  the colour of a point without a code
 */

/**
 * @typedef {object} Coloring  the points' colours by the state's colour rule
 * @property {string} kind  'none' | 'categorical' | 'numeric' | 'quality' | 'change'
 * @property {Uint8Array | null} colors  RGBA per row (the whole array; null over tiles)
 * @property {any} legend  colors.js's legend of the rule (null: none)
 * @property {TileColors | null} [tile]  the rule per code (tiles; absent for the whole array)
 */

/** @typedef {{ index: number, text: string, priority: number, strong: boolean }} LabelCandidate */

/**
 * @typedef {object} Region  a box or lasso on the plot
 * @property {'box' | 'lasso'} kind
 * @property {number[][]} points  CSS pixels
 */

/**
 * What a region answered, kept when its listed rows may be fewer than the points in it: the
 * selection it made is then marked as the region (Marks.region), not row by row.
 * @typedef {{ rows: number[], polygon: number[][], axes: number[], count: number }} RegionScope
 */

/**
 * What the plot draws, picks and paints. `plot` is the Plot showing it (plot.js).
 * @typedef {object} PointSource
 * @property {(plot: import('../plot.js').Plot, options?: { animate?: boolean, order?: Int32Array | null }) => void} attach
 *   the plot shows it from now on (`animate`, `order`: a whole array's)
 * @property {() => void} detach  another source replaces it
 * @property {(plot: import('../plot.js').Plot, view: any, moving: boolean, start: number) => void} drawFrame
 *   one frame (a sample while the view moves, full detail once it is still)
 * @property {(plot: import('../plot.js').Plot, x: number, y: number, radius: number) => number | Promise<number>} pick
 *   the row nearest CSS pixel (x, y) within `radius`, or -1 (a Promise when the server answers)
 * @property {(plot: import('../plot.js').Plot, region: Region) => number[] | Promise<number[]>} region
 *   the rows inside a box or lasso, in row order
 * @property {RegionScope | null} lastRegion  the last region answered, when it stands for its rows
 * @property {(coloring: Coloring) => void} setColoring
 * @property {(marks: Marks) => void} setMarks
 * @property {(candidates: LabelCandidate[], t: number) => Array<LabelCandidate & { at: number[] }>} labelPositions
 *   the candidates it holds, with their place in the plot's cube (x, y, z), hidden ones left out
 * @property {(indices: number[], column: string) => Map<number, number>} codesOf
 *   dictionary codes of `column` of the rows among `indices` it holds (none for a whole array)
 * @property {(coords: ArrayLike<number>) => number[] | null} place
 *   a point in projection units (every column of the result: a phrase's marker) in the plot's
 *   cube, fitted as its own points are; null when it cannot be placed
 */

/**
 * @typedef {object} ColumnKind  what the colour panel shows of a column
 * @property {boolean} numeric
 * @property {boolean} categorical  coloured by category unless the user says otherwise
 */

/**
 * @typedef {object} PointDelivery  how a projection's points reach the page
 * @property {string[]} colorKeys  state keys its colours follow
 * @property {boolean} wholeColumns  a metadata column may be fetched whole
 * @property {(p: import('../projection/projection.js').Projection, request: object, n: number, quick: boolean) => () => Promise<void>} run
 *   the work of a server projection of `n` points: its request, its job followed (unless
 *   `quick`: one request), its points in hand
 * @property {(p: import('../projection/projection.js').Projection, view: import('../projection/projection.js').View) => void} refresh
 *   puts what the projection has new in the plot, it being shown: its points, or a first picture
 * @property {(p: import('../projection/projection.js').Projection, view: import('../projection/projection.js').View, animate: boolean) => void} show
 *   puts its points in the plot (again), if it has them
 * @property {(method: string, state: import('../store.js').State) => number[] | null} axes
 *   the axes its points come over (tiles: the two shown; null: all, the whole array)
 * @property {(highlight: import('../controller/highlighting.js').Highlighting) => { now: Coloring, later: Promise<Coloring | null> | null }} coloring
 *   the state's colours: at once, and (tiles) once the server counted the column's values
 * @property {(highlight: import('../controller/highlighting.js').Highlighting, column: string, query: string, regex: boolean) => Promise<{ indices: number[], scope: object | null }>} search
 * @property {(highlight: import('../controller/highlighting.js').Highlighting, indices: number[]) => (i: number) => string} labeler
 * @property {(highlight: import('../controller/highlighting.js').Highlighting, column: string) => ColumnKind | null} columnKind
 * @property {(highlight: import('../controller/highlighting.js').Highlighting, dataset: import('../dataset.js').Dataset, names: string[], wanted: Array<string | null>, restored: boolean, onProgress: (f: number) => void) => Promise<any>} firstColumns
 *   the metadata a large set opens with (columns fetched on demand: the first wanted ones, or none)
 */

/** The server's word per method on what comes as tiles (`/api/runs`, projection/default_view.py). */
const TILES_FIELD = { pca: 'tiles', custom: 'tiles', tsne: 'tsne_umap_tiles', umap: 'tsne_umap_tiles' };

/**
 * How a projection of `method` reaches the page under `state`: `?tiles=always|never` in the
 * page's address, else tiles for a 2-D view of server data the server says comes as tiles
 * for its method (`/api/runs`: `tiles` for PCA and custom, `tsne_umap_tiles` for t-SNE and
 * UMAP, decided by the set's size in projection/default_view.py); the whole array otherwise.
 * The one place that asks.
 * @param {{ local: boolean, info?: any }} dataset
 * @param {string} method
 * @param {boolean} threeD
 * @returns {PointDelivery}
 */
export function deliveryFor(dataset, method, threeD) {
  const field = TILES_FIELD[method];
  if (dataset.local || threeD || !field) return ARRAY;
  const setting = new URLSearchParams(globalThis.location?.search ?? '').get('tiles');
  if (setting === 'always' || setting === 'never') return setting === 'always' ? TILES : ARRAY;
  return dataset.info?.[field] ? TILES : ARRAY;
}

/** Whether a data set opens in 2-D: its PCA comes as tiles (a quadtree over two axes). */
export function opensIn2d(dataset) {
  return Boolean(dataset.info?.tiles);
}
