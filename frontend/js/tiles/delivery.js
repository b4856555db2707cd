// Highlighting of a projection shown from tiles (tiled_projection.js) at any N: colours come
// with the tiles as dictionary codes of the colour-by column, coloured by the server's counts
// of its values (tile_coloring.js); flags are rules over each tile's points (tile_paint.js):
// a box or lasso selection is its region, a search its matching codes, the focus and its
// neighbours a few rows. No array the size of the data set is made, and no metadata column
// is fetched whole (other panels say so when they ask: Dataset.values).

import { neighborShade } from '../colors.js';
import { FLAG_FOCUS, FLAG_NEIGHBOR, FLAG_SELECTED, SHADE_SHIFT } from '../renderer/points.js';
import { categoricalByDefault, tileColoring, uniformTileColoring } from './coloring.js';
import { numericColumn } from '../tsv.js';

/** Rows a tiled search lists at most (the API's maximum: the rest are highlighted by code). */
const SEARCH_LIMIT = 1000000;
/** Distinct values a column may have to be coloured from tiles (a colour word per value). */
const VALUES_LIMIT = 100000;

export class TileHighlighting {
  /** Whether the shown projection is drawn from tiles (colours and flags are rules). */
  _tiledView() {
    return Boolean(this.shown?.tileAxes);
  }

  /**
   * A column's dictionary and how many rows hold each value, from the server (cached on the
   * data set): { column, values, dictionary, counts }, dictionary null past `limit` values.
   */
  _columnSummary(column, limit = VALUES_LIMIT) {
    const ds = this.dataset;
    ds.summaries ??= new Map();
    const key = `${column}:${limit}`;
    if (!ds.summaries.has(key)) {
      const asked = this.api.getJson('metadata/column/counts', { run: ds.run, embedding: ds.name, column, limit });
      ds.summaries.set(key, asked);
      asked.then((summary) => { asked.value = summary; }, () => ds.summaries.delete(key));
    }
    return ds.summaries.get(key);
  }

  /**
   * The colour column a fresh tiled view starts with, as Dataset.defaultColorColumn picks it
   * over whole columns: the first with 2..20 distinct values (asked of the server in order).
   */
  async _tileDefaultColor(names) {
    for (const column of names) {
      const summary = await this._columnSummary(column, 20).catch(() => null);
      if (summary && summary.values >= 2 && summary.values <= 20) return column;
    }
    return null;
  }

  /**
   * The metadata of a data set opened in a tiled view: its column names only (Dataset.values
   * fetches a column when a whole-set view needs it), and the default colour column as the
   * whole table would give it unless `restored`.
   */
  async _tiledMetadata(dataset, names, restored) {
    if (!restored) dataset.tiledDefaultColor = await this._tileDefaultColor(names);
    return { names: names.slice(), columns: names.map(() => null), nRows: dataset.n };
  }

  /** A panel asked for a whole column in a tiled view: said once per column and data set. */
  _columnRefused(dataset, column) {
    dataset.refused ??= new Set();
    if (this.dataset !== dataset || dataset.refused.has(column)) return;
    dataset.refused.add(column);
    this.setMessage(`Shown from tiles: "${column}" stays on the server (no chart, inspector row or export of it here)`);
  }

  /** Colours the tiles by the state's colour-by column (or its label column's codes only). */
  async _recolorTiles() {
    const ds = this.dataset;
    const { colorBy, labelBy } = this.state;
    const token = ++this.colorToken;
    // The tiles carry the colour column's codes, else the label column's (labels, search).
    const carried = [colorBy, labelBy].find((c) => c && ds.columns.includes(c) && !ds.edited.has(c)) ?? null;
    const plain = uniformTileColoring();
    plain.tile.column = carried;
    this.coloring = plain;
    this.plot.setTileColoring(plain.tile, { plain: true });
    const wanted = carried ? [...new Set([colorBy, labelBy].filter((c) => c === carried))] : [];
    const summaries = await Promise.all(wanted.map((c) => this._columnSummary(c).catch((err) => {
      this.setMessage(`Metadata column ${c}: ${err.message}`, true);
      return null;
    })));
    if (token !== this.colorToken || this.dataset !== ds) return;
    const summary = colorBy === carried ? summaries[0] : null;
    if (summary?.dictionary) {
      this.coloring = tileColoring(summary, this.state.categorical);
      this.plot.setTileColoring(this.coloring.tile, { plain: false });
    } else if (summary) {
      this.setMessage(`Colour by ${colorBy}: ${summary.values.toLocaleString('en-US')} distinct values are more than a tiled view colours (${VALUES_LIMIT.toLocaleString('en-US')})`, true);
    }
    this._updateLabels();
    this.render();
  }

  /**
   * { numeric, categorical (by default) } of a column in a tiled view, from the server's
   * counts of its values once they are here; else null.
   */
  tileColumnKind(column) {
    const summary = column ? this.dataset?.summaries?.get(`${column}:${VALUES_LIMIT}`)?.value : null;
    if (!summary?.dictionary) return null;
    return { numeric: numericColumn(summary.dictionary) !== null, categorical: categoricalByDefault(summary) };
  }

  /** The page's flags as rules over the tiles (tile_paint.js TileMarks). */
  _updateTileMarks() {
    const { selection, focus, isolated } = this.state;
    let scope = this._selectionScope();
    if (scope?.kind === 'search' && scope.column !== this.coloring?.tile?.column) scope = null; // by its rows
    const rows = new Map();
    const mark = (row, flags) => rows.set(row, (rows.get(row) ?? 0) | flags);
    if (!scope) for (const i of selection) mark(i, FLAG_SELECTED);
    const nb = this.neighbors;
    nb.forEach(({ index }, rank) => mark(index, FLAG_NEIGHBOR | (neighborShade(rank, nb.length) << SHADE_SHIFT)));
    if (focus !== null) mark(focus, FLAG_FOCUS | FLAG_SELECTED);
    this.plot.setTileMarks({
      rows,
      region: scope?.kind === 'region' ? scope : null,
      match: scope?.kind === 'search' ? scope : null,
      keep: isolated ? new Set(isolated) : null,
    }, selection.length > 0 || nb.length > 0);
  }

  /**
   * What the state's selection is, when a region or a search made it in a tiled view: { kind:
   * 'region', polygon, axes, count } or { kind: 'search', column, codes: Set, count }; null
   * when it is only its list of rows (a click, a link, an added region).
   */
  _selectionScope() {
    const scope = this.selectionScope;
    return scope && scope.selection === this.state.selection ? scope : null;
  }

  /** How many points are selected (a region's or a search's count may pass its rows listed). */
  selectedCount() {
    return this._selectionScope()?.count ?? this.state.selection.length;
  }

  /** A box or lasso's rows in a tiled view, kept with the region that made them. */
  _tileRegionSelected(indices, additive) {
    const region = this.plot.tiles?.lastRegion;
    if (additive || !region || region.rows !== indices) return;
    this.selectionScope = { kind: 'region', polygon: region.polygon, axes: region.axes, count: region.count, selection: indices };
  }

  /**
   * A search over every point of a tiled projection (`GET /api/jobs/ID/search`): its first
   * rows, and, when the tiles carry the column, its matching codes that highlight them all.
   */
  async _searchTiles(column, query, regex) {
    const p = this.shown;
    await p.finished;
    const answer = await this.api.getJson(`jobs/${encodeURIComponent(p.jobId)}/search`, { column, query, regex, limit: SEARCH_LIMIT });
    const codes = answer.codes ? { kind: 'search', column, codes: new Set(answer.codes), count: answer.count } : null;
    return { indices: answer.rows, codes };
  }

  /**
   * Label texts of `indices` in a tiled view: from the codes of the resident tiles when they
   * carry the label column (one pass over them), else the row number.
   */
  _tileLabeler(indices) {
    const column = this.state.labelBy;
    const dictionary = column ? this.dataset.summaries?.get(`${column}:${VALUES_LIMIT}`)?.value?.dictionary : null;
    const codes = dictionary && this.plot.tiles ? this.plot.tiles.codesOf(indices, column) : new Map();
    return (i) => {
      const v = dictionary?.[codes.get(i)];
      return v === undefined || v === '' ? `#${i}` : v;
    };
  }
}
