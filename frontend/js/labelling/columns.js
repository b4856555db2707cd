// Annotation columns in the page: metadata columns like the others (Color by, Label by,
// search, Charts, the inspector card, Export selection), kept up to date with the server's
// store. An edit this page committed is applied at once from its answer (the value's code on
// the rows it set, or inside the region it was drawn over); any other change (an undo, an
// edit in another tab or by another user) reads the column again. Over the whole array a
// column is its dictionary and int32 codes, decoded into the strings the page reads; over
// tiles (nothing of the data set's size in the tab) the server's counts are asked again and
// the tiles carrying the column recoded or fetched again.

import { decodeColumn, encodingOf } from '../columns.js';

/**
 * What an edit this page made changed, to apply without reading the column again.
 * @typedef {object} LocalEdit
 * @property {number[] | null} rows  the rows it set (null: a region)
 * @property {{ polygon: number[][], axes: number[] } | null} region  the region it set (tiles)
 * @property {number} code  its value's code in the column
 * @property {string} value  the value as stored ('' clears)
 * @property {number} values  the column's dictionary's length after it
 */

/**
 * The column brought up to date in the page: from `edit` (this page's, committed) when it
 * can be applied to what the page holds, else read from the server again.
 * @param {import('../app.js').App} app
 * @param {string} column
 * @param {LocalEdit | null} edit
 */
export async function refreshColumn(app, column, edit = null) {
  const ds = app.dataset;
  if (!ds || ds.local) return;
  if (!ds.columns.includes(column)) addName(ds, column);
  const tiled = !app.highlight.way().wholeColumns;
  // A set whose metadata came whole (no column fetched on demand) keeps every column whole.
  if (!tiled || !ds.fetchColumn) await refreshWhole(app, ds, column, tiled ? null : edit);
  if (tiled) refreshTiled(app, ds, column, edit);
  if (app.dataset !== ds) return;
  ds.numericCache.delete(column);
  ds.edits += 1; // the inspector's card and other views that cache by it redraw
  const { colorBy, labelBy, search } = app.state;
  if (colorBy === column || labelBy === column) app.highlight.recolor();
  if (labelBy === column) app.highlight.updateLabels();
  if (search.column === column && search.query) app.highlight.runSearch({ select: false });
  app.render();
}

/** A column new to the page joins the metadata's names (its values come when asked). */
function addName(ds, column) {
  const metadata = ds.metadata ?? { names: [], columns: [], nRows: ds.n };
  ds.metadata = { ...metadata, names: [...metadata.names, column], columns: [...metadata.columns, null] };
}

/**
 * The whole column: this page's edit applied to its codes (when the page holds them and the
 * edit added at most its own value), else the server's dictionary and codes.
 */
async function refreshWhole(app, ds, column, edit) {
  const held = ds.loaded(column);
  const encoding = held ? encodingOf(held) : null;
  let next = null;
  if (edit?.rows && encoding && edit.values <= encoding.dictionary.length + 1) {
    const dictionary = edit.code < encoding.dictionary.length ? encoding.dictionary : [...encoding.dictionary, edit.value];
    if (dictionary[edit.code] === edit.value) {
      const codes = encoding.codes.slice();
      for (const row of edit.rows) codes[row] = edit.code;
      next = { dictionary, codes };
    }
  }
  if (!next) {
    const answer = await app.api.metadataColumn(ds.run, ds.name, column, 'categorical');
    next = { dictionary: answer.dictionary, codes: answer.codes };
  }
  const values = await decodeColumn(next.dictionary, next.codes);
  if (app.dataset !== ds) return;
  const i = ds.columns.indexOf(column);
  const columns = ds.metadata.columns.slice();
  columns[i] = values;
  ds.metadata = { ...ds.metadata, columns }; // a new object: the charts rebuild
}

/**
 * Over tiles: the server's counts of the column asked again (colours, legend), and the
 * resident tiles carrying it recoded from this page's edit, or fetched again.
 */
function refreshTiled(app, ds, column, edit) {
  for (const key of [...ds.summaries.keys()]) {
    if (key.slice(0, key.lastIndexOf(':')) === column) ds.summaries.delete(key); // `${column}:${limit}`
  }
  const source = app.plot.source;
  if (source && typeof source.recode === 'function') source.recode(column, edit);
}
