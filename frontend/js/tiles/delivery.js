// Tiles (a PointDelivery, points/point_source.js), at any N: the projection never comes to
// the page whole; its job is followed for status and its tile index opened once it is done
// (TilePoints fetches the tiles a view needs). Colours come with the tiles as dictionary
// codes of the colour-by column, coloured by the server's counts of its values
// (coloring.js); a search is the server's over every point of the job, its matching codes
// highlighting them all; labels come from the resident tiles' codes. No array the size of
// the data set is made, and no metadata column is fetched whole (other panels say so when
// they ask: Dataset.values).

import { earlyPicture, preview } from '../projection/preview.js';
import { ended, followStatus, startJob } from '../projection/running.js';
import { numericColumn } from '../tsv.js';
import { categoricalByDefault, tileColoring, uniformTileColoring } from './coloring.js';
import { TilePoints } from './tile_points.js';
import { isQuick } from '../limits.js';

/** Rows a tiled search lists at most (the API's maximum: the rest are highlighted by code). */
const SEARCH_LIMIT = 1000000;
/** Distinct values a column may have to be coloured from tiles (a colour word per value). */
const VALUES_LIMIT = 100000;

/**
 * A column's dictionary and how many rows hold each value, from the server (cached on the
 * data set): { column, values, dictionary, counts }, dictionary null past `limit` values.
 * @param {import('../api.js').Api} api
 * @param {import('../dataset.js').Dataset} ds
 * @param {string} column
 */
function columnSummary(api, ds, column, limit = VALUES_LIMIT) {
  const key = `${column}:${limit}`;
  if (!ds.summaries.has(key)) {
    const asked = api.getJson('metadata/column/counts', { run: ds.run, embedding: ds.name, column, limit });
    const entry = { asked, value: null };
    ds.summaries.set(key, entry);
    asked.then((summary) => { entry.value = summary; }, () => ds.summaries.delete(key));
  }
  return ds.summaries.get(key);
}

/** The server's counts of a column's values once they are here, else null. */
function summaryHere(ds, column) {
  return column ? ds?.summaries.get(`${column}:${VALUES_LIMIT}`)?.value ?? null : null;
}

/**
 * The colour column a fresh tiled view starts with, as Dataset.defaultColorColumn picks it
 * over whole columns: the first with 2..20 distinct values (asked of the server in order).
 */
async function defaultColor(api, ds, names) {
  for (const column of names) {
    const summary = await columnSummary(api, ds, column, 20).asked.catch(() => null);
    if (summary && summary.values >= 2 && summary.values <= 20) return column;
  }
  return null;
}

/**
 * Opens the tiles of the projection's job over `axes` (the server waits for the job, and
 * builds the tiles if need be), with the result's columns and info.
 * @param {import('../projection/projection.js').Projection} p
 * @param {number[]} axes
 */
async function openTiles(p, axes) {
  const tiles = await TilePoints.open(p.api, p.jobId, axes);
  p.source = tiles;
  p.cols = tiles.manifest.columns;
  p.info = tiles.manifest.info ?? p.info;
}

/**
 * Shows its tiles (the plot draws them, TilePoints fetches what the view needs); other axes
 * than the tiles' open the tiles over those first.
 * @param {import('../projection/projection.js').Projection} p
 * @param {import('../projection/projection.js').View} view
 */
async function showTiles(p, view) {
  const axes = p.axes(view.state).join(',');
  const tiles = /** @type {TilePoints} */ (p.source);
  if (tiles.axes.join(',') !== axes) {
    if (p.tilesFor === axes) return;
    p.tilesFor = axes;
    const opened = await openTiles(p, axes.split(',').map(Number)).then(() => true, (err) => {
      view.setMessage(`Tiles: ${err.message}`, true);
      return false;
    });
    if (!opened || p.tilesFor !== axes) return;
    p.tilesFor = null;
  }
  if (p !== view.shown) return;
  view.plot.setSource(p.source);
  p.displayedOnce = true;
  view.pointsShown();
}

/** @type {import('../points/point_source.js').PointDelivery} */
export const TILES = {
  // The tiles carry the colour column's codes, else the label column's (labels, search).
  colorKeys: ['colorBy', 'categorical', 'colorByQuality', 'labelBy'],
  wholeColumns: false,

  run(p, request, n, quick) {
    return async () => {
      await startJob(p, request, { followed: !quick });
      // A t-SNE/UMAP too large to come whole (`tsne_umap_tiles` in /api/runs): followed for
      // status alone (progress, phase, pause; the server sends no frame). PCA and custom:
      // the tile index, which the server answers once the job is done.
      const status = quick ? { status: 'done' } : await followStatus(p);
      if (status.status === 'done') await openTiles(p, p.sourceAxes);
      ended(p, status);
    };
  },

  axes(method, state) {
    return method === 'pca' ? [state.pca.x, state.pca.y] : [0, 1];
  },

  refresh(p, view) {
    if (p.source && p.status === 'done') {
      view.plot.setMode(false);
      showTiles(p, view);
    } else if (p.running && p.jobId && !isQuick(view.dataset, p.method)) {
      earlyPicture(p, view); // a running t-SNE/UMAP: the points it has placed so far
    } else if (p.jobId) {
      preview(p, view, { withOrder: false });
    }
  },

  show(p, view) {
    if (p.source) showTiles(p, view);
  },

  coloring(highlight) {
    const { dataset: ds, state, api } = highlight.app;
    const { colorBy, labelBy } = state;
    const carried = [colorBy, labelBy].find((c) => c && ds.columns.includes(c) && !ds.edited.has(c)) ?? null;
    const now = uniformTileColoring();
    now.tile.column = carried;
    if (!carried) return { now, later: null };
    const later = (async () => {
      const summaries = await Promise.all([...new Set([colorBy, labelBy].filter((c) => c === carried))].map((c) => columnSummary(api, ds, c).asked.catch((err) => {
        highlight.app.setMessage(`Metadata column ${c}: ${err.message}`, true);
        return null;
      })));
      const summary = colorBy === carried ? summaries[0] : null;
      if (summary?.dictionary) return tileColoring(summary, state.categorical);
      if (summary) highlight.app.setMessage(`Colour by ${colorBy}: ${summary.values.toLocaleString('en-US')} distinct values are more than a tiled view colours (${VALUES_LIMIT.toLocaleString('en-US')})`, true);
      return null;
    })();
    return { now, later };
  },

  /**
   * A search over every point of the projection (`GET /api/jobs/ID/search`): its first rows,
   * and, when the tiles carry the column, its matching codes that highlight them all.
   */
  async search(highlight, column, query, regex) {
    const p = highlight.app.shown;
    await p.finished;
    const answer = await highlight.app.api.getJson(`jobs/${encodeURIComponent(p.jobId)}/search`, { column, query, regex, limit: SEARCH_LIMIT });
    const scope = answer.codes ? { kind: 'search', column, codes: new Set(answer.codes), count: answer.count } : null;
    return { indices: answer.rows, scope };
  },

  /**
   * Label texts of `indices`: from the codes of the resident tiles when they carry the label
   * column (one pass over them), else the row number.
   */
  labeler(highlight, indices) {
    const { dataset, state, plot } = highlight.app;
    const column = state.labelBy;
    const dictionary = summaryHere(dataset, column)?.dictionary;
    const codes = dictionary ? plot.source.codesOf(indices, column) : new Map();
    return (i) => {
      const v = dictionary?.[codes.get(i)];
      return v === undefined || v === '' ? `#${i}` : v;
    };
  },

  /** From the server's counts of the column's values once they are here; else null. */
  columnKind(highlight, column) {
    const summary = summaryHere(highlight.app.dataset, column);
    if (!summary?.dictionary) return null;
    return { numeric: numericColumn(summary.dictionary) !== null, categorical: categoricalByDefault(summary) };
  },

  /**
   * Column names only (Dataset.values fetches a column when a whole-array view needs it), and
   * the default colour column as the whole table would give it unless `restored`.
   */
  async firstColumns(highlight, dataset, names, wanted, restored) {
    if (!restored) dataset.tiledDefaultColor = await defaultColor(highlight.app.api, dataset, names);
    return { names: names.slice(), columns: names.map(() => null), nRows: dataset.n };
  },
};
