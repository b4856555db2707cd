// What the points look like beyond their place: colour by a column, state flags (selected,
// neighbour, hidden), labels; and the interactions that change them (hover, click, box and
// lasso, neighbours of the focus, search).

import { neighborShade, pointColoring } from '../colors.js';
import { nearestNeighbors, neighborLimit, search as localSearch } from '../kernels.js';
import { clampToLimit, limitFor, withinLimit } from '../limits.js';
import { FLAG_FOCUS, FLAG_HIDDEN, FLAG_NEIGHBOR, FLAG_SELECTED, SHADE_SHIFT } from '../renderer/points.js';

const LABEL_LIMIT = 10000;

export class Highlighting {
  /** Colours the points by the state's colour rule (colors.js pointColoring). */
  _recolor() {
    const ds = this.dataset;
    if (!ds) return;
    this.coloredTiled = this._tiledView();
    if (this.coloredTiled) {
      this._recolorTiles(); // tile_highlighting.js: no per-point array
      return;
    }
    this.coloring = pointColoring(this.state, ds, this.quality);
    this.plot.setColors(this.coloring.colors, { plain: this.coloring.kind === 'none' });
  }

  /**
   * Per-point projection quality of the shown projection (null: none measured), which
   * colours the points while `state.colorByQuality` is on. Set by whoever measures it.
   */
  setQuality(values) {
    if (values === this.quality) return;
    this.quality = values;
    if (!this.state.colorByQuality) return;
    this._recolor();
    this.render();
  }

  _updateFlags() {
    const ds = this.dataset;
    if (!ds) return;
    if (this.coloredTiled !== this._tiledView()) this._recolor(); // tiles <-> the whole set
    if (this.coloredTiled) {
      this._updateTileMarks();
      this._updateLabels();
      return;
    }
    const flags = new Uint8Array(ds.n);
    if (this.missing) for (let i = 0; i < ds.n; i++) if (this.missing[i]) flags[i] = FLAG_HIDDEN;
    if (this.state.isolated) {
      const keep = new Uint8Array(ds.n);
      for (const i of this.state.isolated) if (i < ds.n) keep[i] = 1;
      for (let i = 0; i < ds.n; i++) if (!keep[i]) flags[i] |= FLAG_HIDDEN;
    }
    const nb = this.neighbors;
    nb.forEach(({ index }, rank) => {
      if (index < ds.n) flags[index] |= FLAG_NEIGHBOR | (neighborShade(rank, nb.length) << SHADE_SHIFT);
    });
    for (const i of this.state.selection) if (i < ds.n) flags[i] |= FLAG_SELECTED;
    if (this.state.focus !== null && this.state.focus < ds.n) flags[this.state.focus] |= FLAG_FOCUS | FLAG_SELECTED;
    this.plot.setFlags(flags, this.state.selection.length > 0 || nb.length > 0);
    this._updateLabels();
  }

  labelOf(i) {
    if (!this.dataset) return '';
    if (this.coloredTiled) return this._tileLabeler([i])(i);
    return this.dataset.label(i, this.state.labelBy);
  }

  _updateLabels() {
    const candidates = [];
    const add = (index, priority, strong) => {
      if (candidates.length < LABEL_LIMIT) candidates.push({ index, text: '', priority, strong });
    };
    if (this.hover >= 0) add(this.hover, 0, true);
    if (this.state.focus !== null) add(this.state.focus, 1, true);
    this.neighbors.forEach((nb, rank) => add(nb.index, 2 + rank / 1e5, false));
    for (const i of this.state.selection) {
      if (candidates.length >= LABEL_LIMIT) break;
      if (i !== this.state.focus) add(i, 3, false);
    }
    const text = this.coloredTiled ? this._tileLabeler(candidates.map((c) => c.index)) : (i) => this.labelOf(i);
    for (const c of candidates) c.text = text(c.index);
    this.plot.setLabels(candidates);
  }

  // ---- selection, neighbours, search ------------------------------------------------------

  _hovered(i) {
    this.hover = i;
    this._updateLabels();
    this._renderStatus();
    for (const panel of this.panels) panel.hovered?.(i);
  }

  hoverPoint(i) {
    this.hover = i;
    this.plot.setHover(i);
    this._updateLabels();
    this._renderStatus();
  }

  _clicked(i, event) {
    const additive = event.shiftKey || event.ctrlKey || event.metaKey;
    if (i < 0) {
      if (!additive) this.clearSelection();
      return;
    }
    if (additive) {
      const set = new Set(this.state.selection);
      if (set.has(i)) set.delete(i);
      else set.add(i);
      this.update({ selection: [...set] });
    } else {
      this.selectPoint(i);
    }
  }

  selectPoint(i) {
    this.update({ selection: [i], focus: i });
  }

  _regionSelected(indices, event) {
    const additive = event.ctrlKey || event.metaKey || (event.shiftKey && this.plot.tool !== 'navigate');
    const selection = additive ? [...new Set([...this.state.selection, ...indices])] : indices;
    if (this.coloredTiled) this._tileRegionSelected(indices, additive);
    this.update({ selection, focus: selection.length === 1 ? selection[0] : null }); // the bar counts it
  }

  clearSelection() {
    this.neighbors = [];
    this.update({ selection: [], focus: null });
  }

  isolateSelection() {
    const ids = new Set([...this.state.selection, ...this.neighbors.map((n) => n.index)]);
    if (ids.size) this.update({ isolated: [...ids].sort((a, b) => a - b) });
  }

  async _loadNeighbors() {
    const ds = this.dataset;
    const focus = this.state.focus;
    const token = ++this.neighborToken;
    if (focus === null || !ds) return;
    const { metric } = this.state.neighbors;
    // k >= N is refused: by the API for server data, by the browser's kernel for local data.
    const limit = ds.local ? neighborLimit(ds.n) : limitFor(ds, 'neighbors', 'k');
    const k = clampToLimit(this.state.neighbors.k, limit);
    if (k < 1 || !withinLimit(k, limit)) return;
    try {
      let list;
      if (ds.local) list = nearestNeighbors(ds.vectors, ds.n, ds.d, focus, k, metric);
      else list = (await this.api.neighbors(ds.run, ds.name, focus, k, metric)).neighbors;
      if (token !== this.neighborToken || this.state.focus !== focus) return;
      this.neighbors = list;
    } catch (err) {
      if (token !== this.neighborToken) return;
      this.neighbors = [];
      this.setMessage(`Neighbours: ${err.message}`, true);
    }
    this._updateFlags();
    this.render();
  }

  async runSearch({ select }) {
    const ds = this.dataset;
    const { column, query, regex } = this.state.search;
    const token = ++this.searchToken;
    if (!ds || !query || !column) {
      this.searchResult = { indices: [], error: null };
      this.render();
      return;
    }
    let result;
    let scope = null;
    try {
      let indices;
      if (ds.local || ds.edited.has(column)) indices = localSearch(ds.values(column), query, regex); // a tagged column is only here
      else if (this.coloredTiled) ({ indices, codes: scope } = await this._searchTiles(column, query, regex));
      else indices = (await this.api.search(ds.run, ds.name, column, query, regex)).indices;
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
      this.update({ selection: result.indices, focus });
    } else {
      this.render();
    }
  }
}
