// Session tags, TensorBoard's "edit label", where nothing keeps labels (an upload, a shared
// site, a read-only server): the selected points get a value in a new or existing column of
// the page's metadata, shown at once by colour, labels and search, downloadable as
// metadata.tsv, gone with the page. Elsewhere labels are kept by the server
// (labelling/install.js), which checks names and values with the same rules.

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
