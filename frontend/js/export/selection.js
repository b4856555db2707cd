// The selected rows as a table to take elsewhere: row index, every metadata column, and the
// shown projection's coordinates on the axes on screen. A plain table, header first, that
// pandas.read_csv, Excel and R read as they are (the view's URL is the "Copy link" button's,
// export/install.js, not a comment line they would take for a column). CSV fields are quoted
// as RFC 4180 asks; TSV fields lose tabs and line breaks (TSV has no quoting).

const AXIS_NAMES = ['x', 'y', 'z'];

function csvField(value) {
  const text = String(value ?? '');
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function tsvField(value) {
  return String(value ?? '').replace(/[\t\r\n]+/g, ' ');
}

/**
 * The table text for `rows` of the app's data set, `sep` ',' or '\t'.
 * @param {import('../app.js').App} app
 */
export function selectionTable(app, rows, sep) {
  const ds = app.dataset;
  const field = sep === ',' ? csvField : tsvField;
  const p = app.shown;
  const axes = p?.data ? p.axes(app.state) : [];
  const columns = ds.columns.filter((c) => c !== 'index');
  const values = columns.map((c) => ds.values(c) ?? []);
  const header = ['index', ...columns, ...axes.map((a, i) => `${p.method}_${AXIS_NAMES[i]}`)];
  const lines = [header.map(field).join(sep)];
  for (const i of rows) {
    const coords = axes.map((a) => {
      const v = p.data[i * p.cols + a];
      return Number.isFinite(v) ? String(v) : '';
    });
    lines.push([i, ...values.map((v) => v[i] ?? ''), ...coords].map(field).join(sep));
  }
  return `${lines.join('\n')}\n`;
}
