// The data set on screen: shape, metadata columns, sprite atlas, and (for uploads only)
// the vectors. Server data sets keep their vectors on the server: every computation on
// them is an API call, so a million-point tensor never crosses the wire.

import { fewDistinct } from './columns.js';
import { tagRows } from './metadata_edit.js';
import { numericColumn, ParseError, parseMetadataTsv, parseNpy, parseTensorTsv } from './tsv.js';

/** Largest file the browser reads for an upload. */
export const UPLOAD_LIMIT_BYTES = 512 * 2 ** 20;

/**
 * A data set's metadata: column names and their values (a large set's columns null until
 * fetched, columns.js).
 * @typedef {{ names: string[], columns: Array<any[] | null>, nRows: number }} Metadata
 */

export class Dataset {
  constructor({ source, run, name, n, d, metadata = null, sprite = null, vectors = null, info = null }) {
    this.source = source;
    this.run = run;
    this.name = name;
    this.n = n;
    this.d = d;
    this.metadata = metadata;
    this.sprite = sprite;
    this.vectors = vectors;
    this.info = info;
    /** @type {any} the parameter table for this data (its limits and defaults; /api/methods), null: none */
    this.methods = null;
    this.numericCache = new Map();
    // Columns the user tagged in this browser session: only here, never on the server.
    this.edited = new Set();
    this.edits = 0; // tags applied so far: views that cache what they drew compare it
    // Large server sets: (name) => Promise of a column's values, for columns not fetched yet
    // (metadata.columns[i] null); `onColumn(name)` once one arrives (a new metadata object).
    /** @type {((name: string) => Promise<any[]>) | null} */
    this.fetchColumn = null;
    /** @type {(name: string) => void} */
    this.onColumn = () => {};
    /** @type {(name: string, err: Error) => void} */
    this.onColumnError = () => {};
    this.pendingColumns = new Map();
    // Whether a column may be fetched whole now (not while a view from tiles is shown: at
    // 100M points one column is over a GB in the tab); `onColumnRefused(name)` when not.
    this.wholeColumns = () => true;
    /** @type {(name: string) => void} */
    this.onColumnRefused = () => {};
    // A tiled view's default colour column, found by the server's counts (tiles/delivery.js).
    /** @type {string | null | undefined} */
    this.tiledDefaultColor = undefined;
    /** @type {Map<string, { asked: Promise<any>, value: any }>} the server's counts of columns' values (tiles/delivery.js) */
    this.summaries = new Map();
    /** @type {Set<string>} columns refused whole while the points come as tiles (said once each) */
    this.refused = new Set();
  }

  get local() {
    return this.source === 'local';
  }

  /**
   * The same points at another training step (`name`, a `TAG:STEP` embedding of this run,
   * its /api/runs `info`): only the tensor behind them changes. Everything of the points
   * (metadata, tags made here, sprite, columns fetched) stays, and so does this object: what
   * the page holds of the data set holds on.
   */
  becomeStep(name, info) {
    this.name = name;
    this.info = info;
    this.d = info.shape[1];
  }

  get columns() {
    return this.metadata ? this.metadata.names : [];
  }

  /** A column's values; null for no such column, or one still being fetched (asked for now). */
  values(column) {
    const values = this.loaded(column);
    if (!values && this.columns.includes(column)) {
      if (this.wholeColumns()) this.ensureColumns([column]);
      else this.onColumnRefused(column);
    }
    return values;
  }

  /** A column's values if they are here, without fetching them. */
  loaded(column) {
    const i = this.columns.indexOf(column);
    return i < 0 ? null : this.metadata.columns[i];
  }

  /** Resolves once every named column is here (fetching those that are not). */
  ensureColumns(names) {
    // Metadata that came whole has no fetcher: a column it lacks (one just named by a label
    // kept on the server) arrives through the labelling panel, not from here.
    if (!this.fetchColumn) return Promise.resolve([]);
    const missing = names.filter((c) => this.columns.includes(c) && !this.loaded(c));
    if (!this.wholeColumns()) {
      missing.forEach((c) => this.onColumnRefused(c));
      return Promise.resolve([]);
    }
    return Promise.all(missing.map((c) => this._fetchColumn(c)));
  }

  _fetchColumn(column) {
    if (!this.pendingColumns.has(column)) {
      const pending = this.fetchColumn(column).then(
        (values) => {
          this.pendingColumns.delete(column);
          const i = this.columns.indexOf(column);
          if (i < 0 || this.metadata.columns[i]) return;
          const columns = this.metadata.columns.slice();
          columns[i] = values;
          this.metadata = { ...this.metadata, columns }; // a new object: panels that cache by it redraw
          this.numericCache.delete(column);
          this.onColumn(column);
        },
        (err) => this.onColumnError(column, err), // stays pending: not fetched again and again
      );
      this.pendingColumns.set(column, pending);
    }
    return this.pendingColumns.get(column);
  }

  /** Sets `column` (new or existing) to `value` at `indices`; the server's copy is untouched. */
  tag(column, value, indices) {
    this.metadata = tagRows(this.metadata, this.n, column, value, indices);
    this.numericCache.delete(column);
    this.edited.add(column);
    this.edits += 1;
  }

  /** The column as numbers (NaN for missing), or null when it is not numeric. Cached. */
  numeric(column) {
    const values = this.values(column);
    if (!values) return null;
    if (!this.numericCache.has(column)) this.numericCache.set(column, numericColumn(values));
    return this.numericCache.get(column);
  }

  /**
   * Whether a column is coloured by category unless the user says otherwise: text columns,
   * and numeric ones holding at most 20 distinct integers (class ids such as 0-9).
   */
  categoricalByDefault(column) {
    const numbers = this.numeric(column);
    if (!numbers) return true;
    const distinct = new Set();
    for (const v of numbers) {
      if (Number.isNaN(v)) continue;
      if (!Number.isInteger(v)) return false;
      distinct.add(v);
      if (distinct.size > 20) return false;
    }
    return true;
  }

  /**
   * The column that names points: the server's choice (`label_column`, one rule for the page,
   * the API and the MCP tools); for data without it, TensorBoard's first non-numeric column.
   */
  defaultLabelColumn() {
    const cols = this.columns;
    const chosen = this.info?.label_column;
    if (chosen && cols.includes(chosen)) return chosen;
    return cols.find((c) => this.loaded(c) && !this.numeric(c)) ?? cols[0] ?? null;
  }

  /**
   * A column worth colouring by at start: the first with 2..20 distinct values (of those
   * fetched: columns.fetchFirstColumns fetches up to it).
   */
  defaultColorColumn() {
    if (this.tiledDefaultColor !== undefined) return this.tiledDefaultColor;
    return this.columns.find((c) => this.loaded(c) && fewDistinct(this.loaded(c))) ?? null;
  }

  /** Text shown for point i: its value in the label column, else its index. */
  label(i, column) {
    const values = column ? this.values(column) : null;
    const v = values ? values[i] : undefined;
    return v === undefined || v === '' ? `#${i}` : v;
  }
}

/** Reads a File with progress (received, total) and the upload size limit. */
export async function readFile(file, onProgress) {
  if (file.size > UPLOAD_LIMIT_BYTES) {
    const mb = (file.size / 2 ** 20).toFixed(0);
    throw new ParseError(`${file.name}: ${mb} MB is over the ${UPLOAD_LIMIT_BYTES / 2 ** 20} MB upload limit; put large files in the LOGDIR instead`);
  }
  const out = new Uint8Array(file.size);
  const reader = file.stream().getReader();
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    out.set(value, received);
    received += value.length;
    onProgress(received, file.size);
  }
  return out.buffer;
}

/**
 * An uploaded data set from a tensor file (.tsv or .npy) and an optional metadata TSV,
 * checked the way the server checks LOGDIR files.
 */
export async function datasetFromFiles(tensorFile, metadataFile, onProgress) {
  const buffer = await readFile(tensorFile, onProgress);
  const isNpy = /\.npy$/i.test(tensorFile.name);
  const tensor = isNpy
    ? parseNpy(buffer, { file: tensorFile.name })
    : parseTensorTsv(new TextDecoder().decode(buffer), { file: tensorFile.name });
  let metadata = null;
  if (metadataFile) {
    const text = new TextDecoder().decode(await readFile(metadataFile, onProgress));
    metadata = parseMetadataTsv(text, { file: metadataFile.name });
    if (metadata.nRows === tensor.n + 1 && metadata.names.length === 1) {
      throw new ParseError(
        `${metadataFile.name}: ${metadata.nRows} rows for ${tensor.n} points; a single-column file has no header line, so remove it`,
      );
    }
    if (metadata.nRows !== tensor.n) { // as the server: one row per point, no more, no fewer
      throw new ParseError(`${metadataFile.name}: ${metadata.nRows} rows for ${tensor.n} points`);
    }
  }
  return new Dataset({
    source: 'local',
    run: 'upload',
    name: tensorFile.name,
    n: tensor.n,
    d: tensor.d,
    metadata,
    vectors: tensor.data,
  });
}
