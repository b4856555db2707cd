// What the points look like beyond their place: colour by a column, marks (selected,
// neighbour, hidden), labels; and the interactions that change them (hover, click, box and
// lasso, neighbours of the focus, search). One part of the App (app.js) whichever way the
// points came: the marks and colours are one description the plot's PointSource paints, and
// what depends on the way (colours counted by the server or from whole columns, the search,
// label texts) is asked of the shown projection's delivery (points/point_source.js).

import { shareInView } from '../camera.js';
import { neighborShade } from '../colors.js';
import { debounce } from '../dom.js';
import { nearestNeighbors, neighborLimit, search as localSearch } from '../kernels.js';
import { clampToLimit, limitFor, withinLimit } from '../limits.js';
import { ARRAY } from '../points/array_delivery.js';
import { FLAG_FOCUS, FLAG_NEIGHBOR, FLAG_SELECTED, SHADE_SHIFT } from '../renderer/points.js';
import { MARKED_THUMBNAILS } from '../renderer/sprites.js';

const LABEL_LIMIT = 10000;
/** Below this share of a search's matches on screen, the view zooms out to the whole cloud. */
const MATCHES_IN_VIEW = 0.5;

export class Highlighting {
  /** @param {import('../app.js').App} app */
  constructor(app) {
    this.app = app;
    /** @type {import('../store.js').Neighbor[]} the focus's neighbours, nearest first */
    this.neighbors = [];
    /** @type {{ indices: number[], error: string | null }} the state's search, answered */
    this.searchResult = { indices: [], error: null };
    /** @type {import('../points/point_source.js').Coloring | null} the points' colours by the state's colour rule */
    this.coloring = null;
    /** @type {Array<number | null> | null} per-point quality of the shown projection, once measured (structure panel) */
    this.quality = null;
    /** @type {number} the point under the pointer, or -1 */
    this.hover = -1;
    /** @type {import('../store.js').SelectionScope | null} what made the selection (tiles), while it is its list */
    this.selectionScope = null;
    /** @type {import('../points/point_source.js').Coloring | null} colours a feature lays over the state's
     * rule while it is set (training steps: each point's change since the step before) */
    this.overlay = null;
    /** @type {import('../points/point_source.js').PointDelivery | null} the delivery the colours were made for */
    this.coloredBy = null;
    /** The latest neighbour request: an older answer is dropped. */
    this.neighborToken = 0;
    /** The same for searches. */
    this.searchToken = 0;
    /** The same for colours the server counts (tiles). */
    this.colorToken = 0;
    this.searchSoon = debounce(() => this.runSearch({ select: true }), 250);
    this.neighborsSoon = debounce(() => this.loadNeighbors(), 150);
    Object.seal(this);
  }

  /** How the shown projection's points reach the page (the whole array when none is shown). */
  delivery() {
    return this.app.shown?.delivery ?? ARRAY;
  }

  /** The delivery the colours, labels and searches are made for now (the shown one's once its points are in). */
  way() {
    return this.coloredBy ?? ARRAY;
  }

  /** A data set opens: nothing of the last one's stays. */
  reset() {
    this.neighbors = [];
    this.searchResult = { indices: [], error: null };
    this.hover = -1;
    this.overlay = null;
  }

  // ---- colours ------------------------------------------------------------------------------

  /** Colours the points by the state's colour rule, as the shown projection's delivery makes it. */
  recolor() {
    const ds = this.app.dataset;
    if (!ds) return;
    const delivery = this.delivery();
    this.coloredBy = delivery;
    const token = ++this.colorToken;
    // An overlay is per point: over tiles (no per-point colours) the state's rule shows.
    const overlay = this.overlay?.colors?.length === ds.n * 4 && delivery === ARRAY ? this.overlay : null;
    const { now, later } = overlay ? { now: overlay, later: null } : delivery.coloring(this);
    this.coloring = now;
    this.app.plot.setColoring(now);
    later?.then((coloring) => {
      if (token !== this.colorToken || this.app.dataset !== ds) return;
      if (coloring) {
        this.coloring = coloring;
        this.app.plot.setColoring(coloring);
      }
      this.updateLabels(); // label texts from the counted dictionary
      this.app.render();
    });
  }

  /**
   * Colours over the state's rule (RGBA per point, a Coloring of kind 'change'), until
   * called with null: the state's colour choice stays and comes back then.
   * @param {import('../points/point_source.js').Coloring | null} coloring
   */
  colorWith(coloring) {
    if (coloring === this.overlay) return;
    this.overlay = coloring;
    this.recolor();
    this.app.render();
  }

  /** Whether a change of `key` in the state changes the colours. */
  colorsFollow(key) {
    return this.way().colorKeys.includes(key);
  }

  /**
   * Per-point projection quality of the shown projection (null: none measured), which
   * colours the points while `state.colorByQuality` is on. Set by whoever measures it.
   */
  setQuality(values) {
    if (values === this.quality) return;
    this.quality = values;
    if (!this.app.state.colorByQuality) return;
    this.recolor();
    this.app.render();
  }

  /** What the colour panel shows of a column (numeric, categorical by default), or null: not known yet. */
  columnKind(column) {
    return this.app.dataset && column ? this.way().columnKind(this, column) : null;
  }

  // ---- marks and labels ------------------------------------------------------------------------

  /** The shown projection's points are in the plot: colours for their delivery, marks, labels. */
  pointsShown() {
    this.updateFlags();
  }

  /** The page's marks (selection, neighbours, focus, isolated rows) into the plot. */
  updateFlags() {
    const app = this.app;
    if (!app.dataset) return;
    if (this.coloredBy !== this.delivery()) this.recolor(); // the whole array <-> tiles
    const { selection, focus, isolated } = app.state;
    const scope = this.scope();
    const rows = new Map();
    const mark = (row, flags) => rows.set(row, (rows.get(row) ?? 0) | flags);
    const nb = this.neighbors;
    nb.forEach(({ index }, rank) => mark(index, FLAG_NEIGHBOR | (neighborShade(rank, nb.length) << SHADE_SHIFT)));
    if (focus !== null) mark(focus, FLAG_FOCUS | FLAG_SELECTED);
    app.plot.setMarks({
      selected: selection,
      rows,
      region: scope?.kind === 'region' ? { polygon: scope.polygon, axes: scope.axes } : null,
      match: scope?.kind === 'search' ? { column: scope.column, codes: scope.codes } : null,
      keep: isolated ? new Set(isolated) : null,
    }, selection.length > 0 || nb.length > 0);
    this.updateLabels();
  }

  /**
   * What the state's selection is, when a region or a search made it over tiles; null when
   * it is only its list of rows (a click, a link, an added region).
   */
  scope() {
    const scope = this.selectionScope;
    return scope && scope.selection === this.app.state.selection ? scope : null;
  }

  /** How many points are selected (a region's or a search's count may pass its rows listed). */
  selectedCount() {
    return this.scope()?.count ?? this.app.state.selection.length;
  }

  labelOf(i) {
    if (!this.app.dataset) return '';
    return this.way().labeler(this, [i])(i);
  }

  updateLabels() {
    const { state } = this.app;
    const candidates = [];
    const add = (index, priority, strong) => {
      if (candidates.length < LABEL_LIMIT) candidates.push({ index, text: '', priority, strong });
    };
    if (this.hover >= 0) add(this.hover, 0, true);
    if (state.focus !== null) add(state.focus, 1, true);
    this.neighbors.forEach((nb, rank) => add(nb.index, 2 + rank / 1e5, false));
    // Thumbnails show the points themselves: a chip for each of hundreds would bury them.
    const thumbnails = state.sprites && Boolean(this.app.dataset?.sprite);
    const limit = thumbnails && state.selection.length > MARKED_THUMBNAILS ? 0 : LABEL_LIMIT;
    for (const i of state.selection) {
      if (candidates.length >= limit) break;
      if (i !== state.focus) add(i, 3, false);
    }
    if (this.app.dataset) {
      const text = this.way().labeler(this, candidates.map((c) => c.index));
      for (const c of candidates) c.text = text(c.index);
    }
    this.app.plot.setLabels(candidates);
  }

  // ---- selection, neighbours, search ------------------------------------------------------

  /** The plot's pointer is over point `i` (or -1). */
  hovered(i) {
    this.hover = i;
    this.updateLabels();
    this.app.status.renderStatus();
    for (const panel of this.app.panels) panel.hovered?.(i);
  }

  /** Hovers point `i` from elsewhere than the plot (a panel's row). */
  hoverPoint(i) {
    this.hover = i;
    this.app.plot.setHover(i);
    this.updateLabels();
    this.app.status.renderStatus();
  }

  /** A click on point `i` (or -1: on nothing). */
  clicked(i, event) {
    const additive = event.shiftKey || event.ctrlKey || event.metaKey;
    if (i < 0) {
      if (!additive) this.clearSelection();
      return;
    }
    if (additive) {
      const set = new Set(this.app.state.selection);
      if (set.has(i)) set.delete(i);
      else set.add(i);
      this.app.update({ selection: [...set] });
    } else {
      this.selectPoint(i);
    }
  }

  selectPoint(i) {
    this.app.update({ selection: [i], focus: i });
  }

  /** A box or lasso answered `indices`; a region that stands for more rows is kept with them. */
  regionSelected(indices, event) {
    const { plot, state } = this.app;
    const additive = event.ctrlKey || event.metaKey || (event.shiftKey && plot.tool !== 'navigate');
    const selection = additive ? [...new Set([...state.selection, ...indices])] : indices;
    const region = plot.source.lastRegion;
    if (!additive && region && region.rows === indices) {
      this.selectionScope = { kind: 'region', polygon: region.polygon, axes: region.axes, count: region.count, selection: indices };
    }
    this.app.update({ selection, focus: selection.length === 1 ? selection[0] : null }); // the bar counts it
  }

  clearSelection() {
    this.neighbors = [];
    this.app.update({ selection: [], focus: null });
  }

  isolateSelection() {
    const ids = new Set([...this.app.state.selection, ...this.neighbors.map((n) => n.index)]);
    if (ids.size) this.app.update({ isolated: [...ids].sort((a, b) => a - b) });
  }

  /** The focus changed or the data: its neighbours go (they are asked again). */
  dropNeighbors() {
    this.neighbors = [];
  }

  async loadNeighbors() {
    const { dataset: ds, state, api } = this.app;
    const focus = state.focus;
    const token = ++this.neighborToken;
    if (focus === null || !ds) return;
    const { metric } = state.neighbors;
    // k >= N is refused: by the API for server data, by the browser's kernel for local data.
    const limit = ds.local ? neighborLimit(ds.n) : limitFor(ds, 'neighbors', 'k');
    const k = clampToLimit(state.neighbors.k, limit);
    if (k < 1 || !withinLimit(k, limit)) return;
    try {
      let list;
      if (ds.local) list = nearestNeighbors(ds.vectors, ds.n, ds.d, focus, k, metric);
      else list = (await api.neighbors(ds.run, ds.name, focus, k, metric)).neighbors;
      if (token !== this.neighborToken || this.app.state.focus !== focus) return;
      this.neighbors = list;
    } catch (err) {
      if (token !== this.neighborToken) return;
      this.neighbors = [];
      this.app.setMessage(`Neighbours: ${err.message}`, true);
    }
    this.updateFlags();
    this.app.render();
  }

  /**
   * A search's matches mostly off screen (the view zoomed in elsewhere): the whole cloud comes
   * back into view, instead of a screen of dimmed points. Without the points' positions in the
   * page (tiles), a zoomed-in view is reset.
   * @param {number[]} rows
   */
  _bringIntoView(rows) {
    const { plot } = this.app;
    if (!rows.length) return;
    const known = plot.positions.length === plot.n * 3 && plot.n > 0 && rows.every((i) => i < plot.n);
    const share = known ? shareInView(plot.matrix(), plot.positions, rows) : null;
    if (share === null ? plot.camera.zoom > 1 : share < MATCHES_IN_VIEW) plot.resetView();
  }

  async runSearch({ select }) {
    const ds = this.app.dataset;
    const { column, query, regex } = this.app.state.search;
    const token = ++this.searchToken;
    if (!ds || !query || !column) {
      this.searchResult = { indices: [], error: null };
      this.app.render();
      return;
    }
    let result;
    let scope = null;
    try {
      let indices;
      if (ds.local || ds.edited.has(column)) indices = localSearch(ds.values(column), query, regex); // a tagged column is only here
      else ({ indices, scope } = await this.way().search(this, column, query, regex));
      result = { indices, error: null };
    } catch (err) {
      result = { indices: [], error: err.message };
    }
    if (token !== this.searchToken) return;
    this.searchResult = result;
    if (select) {
      if (scope) this.selectionScope = { ...scope, selection: result.indices };
      // A query that fails (a bad regex) matches nothing: the last query's matches go too.
      const focus = result.indices.length === 1 ? result.indices[0] : null;
      this.app.update({ selection: result.indices, focus });
      this._bringIntoView(result.indices);
    } else {
      this.app.render();
    }
  }
}
