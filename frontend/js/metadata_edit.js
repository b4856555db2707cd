// Metadata editing, TensorBoard's "edit label": the selected points get a value in a new or
// existing column, kept in this browser session (the data set's metadata), shown at once by
// colour, labels and search, and downloadable as metadata.tsv. The user's files are never
// written: the server keeps serving the original metadata.

import { $ } from './dom.js';

/** Longest column name and value accepted (a TSV cell, not a document). */
export const MAX_NAME_LENGTH = 256;
export const MAX_VALUE_LENGTH = 1024;

/** Why a tag cannot be written into a TSV cell, or null when it can. */
export function tagProblem(column, value) {
  if (!column.trim()) return 'Name the column to tag.';
  if (column.length > MAX_NAME_LENGTH) return `Column names are at most ${MAX_NAME_LENGTH} characters.`;
  if (value.length > MAX_VALUE_LENGTH) return `Values are at most ${MAX_VALUE_LENGTH} characters.`;
  if (/[\t\r\n]/.test(column + value)) return 'Tabs and line breaks cannot go into a TSV cell.';
  if (column.startsWith('__')) return 'Names starting with "__" are reserved (e.g. __next__).';
  return null;
}

/**
 * Metadata ({ names, columns, nRows }) with `column` set to `value` at `indices`: a new
 * column starts empty ("" = missing). The column is copied, the others shared; the input is
 * left as it was.
 */
export function tagRows(metadata, n, column, value, indices) {
  const names = metadata ? metadata.names.slice() : [];
  const columns = metadata ? metadata.columns.slice() : [];
  let at = names.indexOf(column);
  if (at < 0) {
    names.push(column);
    columns.push(new Array(n).fill(''));
    at = names.length - 1;
  }
  const values = columns[at].slice();
  for (const i of indices) if (Number.isInteger(i) && i >= 0 && i < n) values[i] = value;
  columns[at] = values;
  return { names, columns, nRows: n };
}

/**
 * Wires the inspector's "Edit metadata" section and adds it to the app's panels.
 * @param {import('./app.js').App} app
 */
export function installMetadataEdit(app) {
  const columnInput = $('edit-column');
  const valueInput = $('edit-value');
  const names = $('#edit-column-names');
  const tagButton = $('tag-selection');
  const note = $('edit-status');

  const say = (text, isError = false) => {
    note.textContent = text;
    note.classList.toggle('error-text', isError);
  };

  tagButton.addEventListener('click', async () => {
    const ds = app.dataset;
    const selection = app.state.selection;
    const column = columnInput.value.trim();
    const value = valueInput.value;
    const problem = tagProblem(column, value);
    if (!ds || problem) {
      say(problem ?? 'No data set open.', true);
      return;
    }
    await ds.ensureColumns([column]); // an existing column of a large set may still be on the server
    if (ds !== app.dataset) return;
    ds.tag(column, value, selection);
    const { colorBy, labelBy, search } = app.state;
    if (colorBy === column) app.highlight.recolor();
    if (labelBy === column) app.highlight.updateLabels();
    if (search.column === column && search.query) app.highlight.runSearch({ select: false });
    say(`Tagged ${selection.length} point${selection.length === 1 ? '' : 's'}: ${column} = "${value}"`);
    app.render();
  });

  app.panels.push({
    render() {
      const columns = app.dataset ? app.dataset.columns : [];
      if (names.children.length !== columns.length || [...names.children].some((o, i) => o.value !== columns[i])) {
        names.replaceChildren(...columns.map((c) => Object.assign(document.createElement('option'), { value: c })));
      }
      tagButton.disabled = !app.dataset || app.state.selection.length === 0;
    },
  });
}
