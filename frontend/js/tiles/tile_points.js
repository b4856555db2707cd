// A 2-D server projection shown from its level-of-detail tiles (docs/ARCHITECTURE.md "Tiles"):
// this module owns the projection's life once its job is done: the tile index, which tiles
// the view needs at the density its zoom needs, fetching them side by side, a bounded set
// of resident tiles (off-screen ones evicted past a points budget), each tile's own small
// GPU buffers, its colours and flags from the page's rules (tile_paint.js: nothing in the
// tab is the size of the data set), and the answers to hover, click and
// lasso (tile_answers.js): over the resident points when every point is resident, else from
// the server (`/pick`, `/select`), so they stay exact however few points are in the tab.

import { fetchTile } from './fetch.js';
import { mixin } from '../mixin.js';
import { PointLayer } from '../renderer/points.js';
import { TileAnswers } from './answers.js';
import { uniformTileColoring } from './coloring.js';
import { NO_MARKS, tileColors, tileFlags } from './paint.js';

/** Points a still frame shows at most: the deepest levels on screen that fit. */
export const DISPLAY_POINTS = 2000000;
/** Points the tab keeps at most (evicting off-screen tiles): what 100M never exceeds. */
export const RESIDENT_POINTS = 4000000;
/** Tile requests in flight at once. */
const PARALLEL = 6;
/** A tile that failed is asked again after this long (ms). */
const RETRY_MS = 5000;

/**
 * The points budgets, DISPLAY_POINTS and RESIDENT_POINTS unless `?tilePoints=N` in the
 * page's address keeps fewer in the tab (a small device; beyond it the server answers).
 */
function budgets() {
  const asked = Number(new URLSearchParams(globalThis.location?.search ?? '').get('tilePoints'));
  const resident = asked > 0 ? Math.min(asked, RESIDENT_POINTS) : RESIDENT_POINTS;
  return { display: Math.min(DISPLAY_POINTS, resident / 2), resident };
}

/** The server's word per method on what comes as tiles (`/api/runs`, projection/default_view.py). */
const TILES_FIELD = { pca: 'tiles', custom: 'tiles', tsne: 'tsne_umap_tiles', umap: 'tsne_umap_tiles' };

/**
 * Whether a projection is shown from tiles: `?tiles=always|never` in the page's address,
 * else a 2-D view of server data the server says comes as tiles for its method (`/api/runs`:
 * `tiles` for PCA and custom, `tsne_umap_tiles` for t-SNE and UMAP, decided by the set's
 * size in projection/default_view.py).
 */
export function showsTiles(dataset, method, threeD) {
  const field = TILES_FIELD[method];
  if (dataset.local || threeD || !field) return false;
  const setting = new URLSearchParams(location.search).get('tiles');
  if (setting === 'always' || setting === 'never') return setting === 'always';
  return Boolean(dataset.info?.[field]);
}

/**
 * @typedef {object} Tile  one resident tile
 * @property {string} key           'z/x/y'
 * @property {number} z
 * @property {number} count
 * @property {Int32Array} rows      row ids, level-of-detail order
 * @property {Float32Array} positions  count x 3, fitted as the whole set would be
 * @property {Float32Array} coords  count x k, the projection's own units
 * @property {Int32Array|null} codes  dictionary codes of `column` (the colour-by column)
 * @property {string|null} column
 * @property {PointLayer} layer     its GPU buffers (position, colour, flags, row id)
 * @property {number} used          the view count when it was last wanted (eviction)
 */

/**
 * @typedef {object} TiledProjectionShape  the fields of a TiledProjection
 * @property {object} api           api.js
 * @property {string} jobId
 * @property {number[]} axes        coordinate columns shown (x, y)
 * @property {number} total         points of the projection
 * @property {{budget: number, total: number, box: {lo: number[], hi: number[]},
 *   bounds: {lo: number[], hi: number[]}, tiles: number[][]}} manifest  the tile index
 * @property {{mid: number[], scale: number}} fit  projection units -> the plot's unit square
 * @property {Map<string, Tile>} resident  tiles in the tab, with their GPU buffers
 * @property {Set<string>} loading  tiles requested
 * @property {Map<string, number>} failed  when each failed tile last failed (retried later)
 * @property {string[]} wanted      what the view needs, coarse levels first (keys)
 * @property {object[]} wantedCells  the same cells (requested as earlier ones arrive)
 * @property {number} version       counts tiles coming and going (caches of positions)
 * @property {number} residentPoints
 * @property {import('./coloring.js').TileColors} coloring  how tiles are coloured
 * @property {import('./paint.js').TileMarks} marks  the page's flags as rules
 * @property {string|null} refusedColumn  a column the tiles do not carry (drawn without codes)
 * @property {{ rows: number[], polygon: number[][], axes: number[], count: number }|null} lastRegion
 *   the last box or lasso answered, in the projection's units (a selection kept as a region)
 * @property {() => void} onChange  a tile arrived or left: redraw
 */

/** @implements {TiledProjectionShape} */
export class TiledProjection {
  /**
   * The tile index of a job over `axes` (the server waits for the job, and builds the tiles
   * if need be), with the result's `columns` and `info` (headers X-Columns, X-Info).
   */
  static async open(api, jobId, axes) {
    const response = await api._fetch(`jobs/${encodeURIComponent(jobId)}/tiles`, { params: { axes: axes.join(',') } });
    const manifest = await response.json();
    manifest.columns = Number(response.headers.get('X-Columns')) || manifest.axes.length;
    manifest.info = JSON.parse(response.headers.get('X-Info') || 'null');
    return new TiledProjection(api, jobId, manifest);
  }

  constructor(api, jobId, manifest) {
    this.api = api;
    this.jobId = jobId;
    this.manifest = manifest;
    this.axes = manifest.axes;
    this.total = manifest.total;
    this.gl = null;
    this.onChange = () => {};
    this.fit = fitOf(manifest.bounds);
    this.resident = new Map();
    this.loading = new Set();
    this.wanted = [];
    this.wantedCells = [];
    this.failed = new Map();
    this.version = 0;
    this.residentPoints = 0;
    this.coloring = uniformTileColoring().tile;
    this.marks = NO_MARKS;
    this.lastRegion = null;
    this.refusedColumn = null;
    this.views = 0;
    this.closed = false;
    this.budgets = budgets();
    const { lo, hi } = manifest.box;
    // Every tile's cell in the plot's unit square (x along axis 0, y along axis 1).
    this.cells = manifest.tiles.map(([z, x, y, count]) => {
      const side = 2 ** z;
      const corner = (a, i) => ((lo[a] + ((hi[a] - lo[a]) * i) / side) - this.fit.mid[a]) * this.fit.scale;
      return { key: `${z}/${x}/${y}`, z, x, y, count, x0: corner(0, x), x1: corner(0, x + 1), y0: corner(1, y), y1: corner(1, y + 1) };
    });
  }

  /** Drawn by a plot from now on: `onChange` when a tile arrives (see Plot.setTiles). */
  attach(gl, onChange) {
    this.gl = gl;
    this.onChange = onChange;
    this.closed = false;
  }

  /** Whether every point of the projection is in the tab (answers need no server). */
  get everyResident() {
    return this.residentPoints >= this.total;
  }

  /**
   * The tiles meeting the view `matrix` at the density it needs: whole levels, coarse first,
   * as deep as fit DISPLAY_POINTS (zoomed in, deeper levels fit: level of detail by zoom).
   * Requests what is missing; returns the resident ones to draw, coarse first.
   */
  view(matrix) {
    this.views++;
    const visible = this.cells.filter((c) => meets(matrix, c));
    const wanted = [];
    let taken = 0;
    for (let z = 0; ; z++) {
      const level = visible.filter((c) => c.z === z);
      if (!level.length) {
        if (visible.some((c) => c.z > z)) continue;
        break;
      }
      const points = level.reduce((sum, c) => sum + c.count, 0);
      if (z > 0 && taken + points > this.budgets.display) break;
      taken += points;
      wanted.push(...level);
    }
    this.wanted = wanted.map((c) => c.key);
    this.wantedCells = wanted;
    for (const c of wanted) {
      const tile = this.resident.get(c.key);
      if (tile) tile.used = this.views;
    }
    this._request(wanted);
    return wanted.map((c) => this.resident.get(c.key)).filter(Boolean);
  }

  /** Points of the view's cells at every level: what a drawn sample stands for. */
  pointsMeeting(matrix) {
    return this.cells.reduce((sum, c) => sum + (meets(matrix, c) ? c.count : 0), 0);
  }

  _request(cells) {
    if (this.closed || !this.gl) return;
    for (const c of cells) {
      if (this.loading.size >= PARALLEL) return;
      if (this.resident.has(c.key) || this.loading.has(c.key)) continue;
      if (performance.now() - (this.failed.get(c.key) ?? -Infinity) < RETRY_MS) continue;
      this.loading.add(c.key);
      const column = this._column();
      fetchTile(this.api, this.jobId, this.axes, c.z, c.x, c.y, false, column)
        .then((slice) => (column === this._column() ? this._arrived(c, slice, column) : null))
        .catch((err) => {
          // Tiles that do not carry the column (a store written without it): drawn without.
          if (column !== null && err.status === 422) this.refusedColumn = column;
          else this.failed.set(c.key, performance.now()); // asked again after RETRY_MS
        })
        .finally(() => {
          this.loading.delete(c.key);
          if (this.closed) return;
          this._request(this.wantedCells); // the next at once, not at the next frame
          this.onChange();
        });
    }
  }

  /** The column whose codes tiles are fetched with (null: none, or not carried). */
  _column() {
    return this.coloring.column === this.refusedColumn ? null : this.coloring.column;
  }

  _arrived(cell, slice, column) {
    if (this.closed) return;
    const count = slice.indices.length;
    const positions = new Float32Array(count * 3);
    const { mid, scale } = this.fit;
    const k = slice.k;
    for (let r = 0; r < count; r++) {
      positions[r * 3] = (slice.coords[r * k] - mid[0]) * scale;
      positions[r * 3 + 1] = (slice.coords[r * k + 1] - mid[1]) * scale;
    }
    const layer = new PointLayer();
    layer.setScene({ gl: this.gl });
    layer.setPoints(positions, slice.indices);
    const tile = { key: cell.key, z: cell.z, count, rows: slice.indices, positions, coords: slice.coords, codes: slice.codes, column, layer, used: this.views };
    this.resident.set(cell.key, tile);
    this.residentPoints += count;
    this.version++;
    this._paint(tile);
    this._evict();
  }

  /** Off-screen tiles leave, least recently wanted first, while the tab holds too many points. */
  _evict() {
    if (this.residentPoints <= this.budgets.resident) return;
    const wanted = new Set(this.wanted);
    const spare = [...this.resident.values()].filter((t) => !wanted.has(t.key)).sort((a, b) => a.used - b.used);
    for (const tile of spare) {
      if (this.residentPoints <= this.budgets.resident) break;
      this._drop(tile);
    }
  }

  _drop(tile) {
    tile.layer.dispose();
    this.resident.delete(tile.key);
    this.residentPoints -= tile.count;
    this.version++;
  }

  /** Frees every tile (another projection is shown; attach takes it up again). */
  close() {
    this.closed = true;
    for (const tile of [...this.resident.values()]) this._drop(tile);
  }

  // ---- colours and flags: the page's rules, applied to each tile ------------------------

  /**
   * Colours the tiles by `coloring` (tile_coloring.js TileColors); tiles carrying another
   * column's codes are fetched again with this one's.
   */
  setColoring(coloring) {
    const refetch = coloring.column !== this.coloring.column;
    this.coloring = coloring;
    if (refetch) {
      for (const tile of [...this.resident.values()]) this._drop(tile);
      this.onChange();
      return;
    }
    for (const tile of this.resident.values()) this._paint(tile, { flags: false });
  }

  /** The page's flags as rules over the tiles' points (tile_paint.js TileMarks). */
  setMarks(marks) {
    this.marks = marks ?? NO_MARKS;
    for (const tile of this.resident.values()) this._paint(tile, { colors: false });
  }

  _paint(tile, { colors = true, flags = true } = {}) {
    if (colors) tile.layer.setColors(tileColors(tile, this.coloring));
    if (flags) tile.layer.setFlags(tileFlags(tile, this.marks, this.axes));
  }

  /** Bytes the tab holds for the resident tiles (their arrays; GPU buffers mirror them). */
  get residentBytes() {
    let bytes = 0;
    for (const t of this.resident.values()) {
      bytes += t.rows.byteLength + t.coords.byteLength + t.positions.byteLength + (t.codes?.byteLength ?? 0);
      bytes += (t.layer.colors?.byteLength ?? 0) + (t.layer.flags?.byteLength ?? 0) + (t.screen?.byteLength ?? 0);
    }
    return bytes;
  }

  /**
   * Dictionary codes of `column` of the resident rows among `indices` (one pass over the
   * resident tiles): a Map row -> code; empty when the tiles carry another column.
   */
  codesOf(indices, column) {
    const found = new Map();
    if (column !== this.coloring.column || !indices.length) return found;
    if (indices.length === 1) { // hover: a native search, no Set
      for (const tile of this.resident.values()) {
        const rank = tile.codes && tile.column === column ? tile.rows.indexOf(indices[0]) : -1;
        if (rank >= 0) return found.set(indices[0], tile.codes[rank]);
      }
      return found;
    }
    const wanted = new Set(indices);
    for (const tile of this.resident.values()) {
      if (!tile.codes || tile.column !== column) continue;
      for (let r = 0; r < tile.count; r++) if (wanted.has(tile.rows[r])) found.set(tile.rows[r], tile.codes[r]);
    }
    return found;
  }

  /**
   * Plot positions (x, y) of the resident points among `candidates` ([{ index }], the labels
   * of hovered and selected points) as a Map row -> [x, y]; kept while neither the
   * candidates nor the tiles change.
   */
  positionsOf(candidates) {
    if (this.placed?.candidates === candidates && this.placed.version === this.version) return this.placed.at;
    const wanted = new Set(candidates.map((c) => c.index));
    const at = new Map();
    if (wanted.size) {
      for (const tile of this.resident.values()) {
        for (let r = 0; r < tile.count; r++) {
          const row = tile.rows[r];
          if (wanted.has(row)) at.set(row, [tile.positions[r * 3], tile.positions[r * 3 + 1]]);
        }
      }
    }
    this.placed = { candidates, version: this.version, at };
    return at;
  }
}

mixin(TiledProjection, TileAnswers);

/** Centre and scale of `bounds` into the unit square, as geometry.fitPositions fits the whole set. */
function fitOf(bounds) {
  let half = 0;
  const mid = [0, 0];
  for (let a = 0; a < 2; a++) {
    if (!(bounds.hi[a] >= bounds.lo[a])) continue;
    mid[a] = (bounds.lo[a] + bounds.hi[a]) / 2;
    half = Math.max(half, (bounds.hi[a] - bounds.lo[a]) / 2);
  }
  return { mid, scale: half > 0 ? 1 / half : 1 };
}

/** Whether a cell (unit-square corners) meets the clip square under `m`. */
function meets(m, c) {
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (const [x, y] of [[c.x0, c.y0], [c.x1, c.y0], [c.x0, c.y1], [c.x1, c.y1]]) {
    const w = m[3] * x + m[7] * y + m[15];
    const cx = (m[0] * x + m[4] * y + m[12]) / w;
    const cy = (m[1] * x + m[5] * y + m[13]) / w;
    x0 = Math.min(x0, cx);
    x1 = Math.max(x1, cx);
    y0 = Math.min(y0, cy);
    y1 = Math.max(y1, cy);
  }
  return x1 >= -1 && x0 <= 1 && y1 >= -1 && y0 <= 1;
}
