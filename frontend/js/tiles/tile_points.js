// A 2-D server projection's points from its level-of-detail tiles (docs/ARCHITECTURE.md
// "Tiles"), as a PointSource (points/point_source.js): the tile index, which tiles the view
// needs at the density its zoom needs, fetching them side by side, a bounded set of resident
// tiles (off-screen ones evicted past a points budget), each tile's own small GPU buffers,
// drawn by frames.js through its layer (layer.js), its colours and flags from the page's
// rules (paint.js: nothing in the tab is the size of the data set), and the answers to hover,
// click and lasso (answers.js): over the resident points when every point is resident, else
// from the server (`/pick`, `/select`), so they stay exact however few points are in the tab.

import { placeIn } from '../geometry.js';
import { FLAG_SELECTED, PointLayer } from '../renderer/points.js';
import { pickTiles, regionOfTiles } from './answers.js';
import { uniformTileColoring } from './coloring.js';
import { cellsOf, fitOf, pointsMeeting, wantedCells } from './cells.js';
import { fetchTile } from './fetch.js';
import { drawTiles } from './frames.js';
import { TileLayer } from './layer.js';
import { forInside, NO_MARKS, tileColors, tileFlags } from './paint.js';

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
 * @property {Float32Array} [screen]  its points in CSS pixels under the last view picked (answers.js)
 * @property {string} [screenKey]  that view
 */

/**
 * @typedef {object} TilePointsShape  the fields of a TilePoints
 * @property {import('../api.js').Api} api
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
 * @property {import('../points/point_source.js').TileColors} coloring  how tiles are coloured
 * @property {import('./paint.js').TileMarks} marks  the page's flags as rules
 * @property {string|null} refusedColumn  a column the tiles do not carry (drawn without codes)
 * @property {{ rows: number[], polygon: number[][], axes: number[], count: number }|null} lastRegion
 *   the last box or lasso answered, in the projection's units (a selection kept as a region)
 * @property {() => void} onChange  a tile arrived or left: redraw
 */

/** @typedef {import('../points/point_source.js').PointSource} PointSource */

/**
 * @implements {TilePointsShape}
 * @implements {PointSource}
 */
export class TilePoints {
  /**
   * The tile index of a job over `axes` (the server waits for the job, and builds the tiles
   * if need be), with the result's `columns` and `info` (headers X-Columns, X-Info).
   */
  static async open(api, jobId, axes) {
    const response = await api._fetch(`jobs/${encodeURIComponent(jobId)}/tiles`, { params: { axes: axes.join(',') } });
    const manifest = await response.json();
    manifest.columns = Number(response.headers.get('X-Columns')) || manifest.axes.length;
    manifest.info = JSON.parse(response.headers.get('X-Info') || 'null');
    return new TilePoints(api, jobId, manifest);
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
    /** @type {import('../plot.js').Plot | null} the plot showing it */
    this.plot = null;
    /** Draws its tiles in the plot's passes (a plot layer while it is shown). */
    this.layer = new TileLayer(this);
    /** The still frame's slices: points a slice draws, its GPU fence, frames spent waiting (frames.js). */
    this.slicing = { step: 0, fence: null, waits: 0 };
    /** @type {{ candidates: object[], version: number, at: Map<number, number[]> } | null} */
    this.placed = null;
    /** Every tile's cell in the plot's unit square. */
    this.cells = cellsOf(manifest, this.fit);
  }

  /**
   * Drawn by `plot` from now on: its layer joins the plot's, the plot's colours and marks
   * paint its tiles, a tile's arrival redraws (the first picture stays until one comes).
   * @param {import('../plot.js').Plot} plot
   */
  attach(plot) {
    if (this.plot === plot) return;
    this.plot = plot;
    this.gl = plot.gl;
    this.onChange = () => plot.restartStill();
    this.closed = false;
    plot.loadPositions(new Float32Array(0), { keepPreview: true }); // no whole array
    plot.addLayer(this.layer, { moving: false }); // the camera stays: straight to the still frame
    this.setColoring(plot.coloring);
    this.setMarks(plot.marks);
  }

  /** Another source is shown: its tiles are freed (attach takes it up again). */
  detach() {
    this.plot?.removeLayer(this.layer);
    this.plot = null;
    this.close();
  }

  /**
   * A point in projection units (every column) in the plot's square, as its tiles are fitted.
   * @param {ArrayLike<number>} coords
   */
  place(coords) {
    return placeIn({ columns: this.axes, mid: this.fit.mid, factor: this.fit.scale }, coords);
  }

  /**
   * @param {import('../plot.js').Plot} plot
   * @param {any} view
   * @param {boolean} moving
   * @param {number} start
   */
  drawFrame(plot, view, moving, start) {
    drawTiles(this, plot, view, moving, start);
  }

  /**
   * The row under CSS pixel (x, y), or -1; a Promise when the server answers.
   * @param {import('../plot.js').Plot} plot
   * @param {number} x
   * @param {number} y
   * @param {number} radius
   */
  pick(plot, x, y, radius) {
    return pickTiles(this, plot.matrix(), plot.canvas.clientWidth, plot.canvas.clientHeight, x, y, radius);
  }

  /**
   * Rows inside a region (CSS pixels); a Promise when the server answers.
   * @param {import('../plot.js').Plot} plot
   * @param {import('../points/point_source.js').Region} region
   */
  region(plot, region) {
    return regionOfTiles(this, plot.matrix(), plot.canvas.clientWidth, plot.canvas.clientHeight, region);
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
    const wanted = wantedCells(this.cells, matrix, this.budgets.display);
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
    return pointsMeeting(this.cells, matrix);
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
   * Colours the tiles by the coloring's rule per code (a whole array's colours have none:
   * the tiles keep theirs); tiles carrying another column's codes are fetched again.
   * @param {import('../points/point_source.js').Coloring} coloring
   */
  setColoring(coloring) {
    const rule = coloring.tile;
    if (!rule) return;
    const refetch = rule.column !== this.coloring.column;
    this.coloring = rule;
    if (refetch) {
      for (const tile of [...this.resident.values()]) this._drop(tile);
      this.onChange();
      return;
    }
    for (const tile of this.resident.values()) this._paint(tile, { flags: false });
  }

  /**
   * The codes of `column` changed on the server (an annotation edit): the resident tiles
   * carrying it take this page's `edit` (its value's code on its rows, or inside its region:
   * the server's rule, so the map is coloured at once) or, for any other change, are
   * fetched again as the view wants them.
   * @param {string} column
   * @param {import('../labelling/columns.js').LocalEdit | null} edit
   */
  recode(column, edit) {
    const carrying = [...this.resident.values()].filter((t) => t.column === column && t.codes);
    if (!carrying.length) return;
    if (!edit || (!edit.rows && !edit.region)) {
      for (const tile of carrying) this._drop(tile);
    } else {
      const rows = edit.rows ? new Set(edit.rows) : null;
      for (const tile of carrying) {
        const codes = tile.codes.slice();
        if (rows) {
          for (let r = 0; r < tile.count; r++) if (rows.has(tile.rows[r])) codes[r] = edit.code;
        } else {
          forInside(tile, edit.region, this.axes, (r) => { codes[r] = edit.code; });
        }
        tile.codes = codes;
        this._paint(tile, { flags: false });
      }
    }
    this.onChange();
  }

  /**
   * The page's marks as rules over the tiles' points: a region, or a search's codes of the
   * column the tiles carry, stands for the selection's rows; else they are marked one by one.
   * @param {import('../points/point_source.js').Marks} marks
   */
  setMarks(marks) {
    const match = marks.match?.column === this.coloring.column ? marks.match : null;
    const rows = new Map();
    const mark = (row, flags) => rows.set(row, (rows.get(row) ?? 0) | flags);
    if (!marks.region && !match) for (const i of marks.selected) mark(i, FLAG_SELECTED);
    for (const [row, flags] of marks.rows) mark(row, flags);
    this.marks = { rows, region: marks.region, match, keep: marks.keep };
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
   * The resident points among `candidates` (the labels of hovered and selected points) with
   * their plot positions; kept while neither the candidates nor the tiles change.
   * @param {import('../points/point_source.js').LabelCandidate[]} candidates
   */
  labelPositions(candidates) {
    if (this.placed?.candidates !== candidates || this.placed.version !== this.version) {
      const wanted = new Set(candidates.map((c) => c.index));
      const at = new Map();
      if (wanted.size) {
        for (const tile of this.resident.values()) {
          for (let r = 0; r < tile.count; r++) {
            const row = tile.rows[r];
            if (wanted.has(row)) at.set(row, [tile.positions[r * 3], tile.positions[r * 3 + 1], 0]);
          }
        }
      }
      this.placed = { candidates, version: this.version, at };
    }
    const at = this.placed.at;
    return candidates.filter((c) => at.has(c.index)).map((c) => ({ ...c, at: at.get(c.index) }));
  }
}
