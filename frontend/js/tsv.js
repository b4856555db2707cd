// Parsing of the files a user uploads (tensor TSV, .npy, metadata TSV) and formatting of the
// files they download (coordinates, metadata). Pure functions: no DOM, unit-tested under node.

/** An input problem, with the file and line in the message like the server's DataError. */
export class ParseError extends Error {}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const SPECIAL = /^[+-]?(inf|infinity|nan)$/i;
// The spaces the server's number pattern allows around a number (RE2's \s): not the other
// Unicode spaces String.trim() removes, so " 5" is a number and "\u00a05" is text on both.
const SPACES = /^[ \t\n\f\r]+|[ \t\n\f\r]+$/g;
const RESERVED_COLUMNS = ['__index__'];

/** Parses one metadata cell as a number the way Python's float() would; NaN when it is not one. */
export function parseNumber(text) {
  return readNumber(text) ?? NaN;
}

/** A cell's number, or null when the cell is not one (a 'nan' cell is NaN, a number). */
function readNumber(text) {
  const s = spaced(text) ? text.replace(SPACES, '') : text;
  if (NUMBER.test(s)) return Number(s);
  if (SPECIAL.test(s)) {
    if (/nan/i.test(s)) return NaN;
    return s.startsWith('-') ? -Infinity : Infinity;
  }
  return null;
}

function isNumberText(text) {
  return readNumber(text) !== null;
}

/** Whether the text starts or ends with a space SPACES removes (most cells do not: no copy). */
function spaced(text) {
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  return first <= 32 || last <= 32;
}

/**
 * The text without a leading BOM and without the blank lines after its last non-blank
 * character (they are not rows); '' when the text is blank. The server's rule (_bounds).
 */
function content(text) {
  const body = text.startsWith('\ufeff') ? text.slice(1) : text;
  const last = body.search(/[ \t\r\n\v\f]*$/);
  if (last === 0) return '';
  const end = body.indexOf('\n', last);
  const cut = end < 0 ? body : body.slice(0, end);
  return cut.endsWith('\r') ? cut.slice(0, -1) : cut; // a CRLF's CR, or a last line's CR
}

/** Lines taken whole (a tab is part of the value), CRLF or LF ended. */
function wholeLines(text) {
  return text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

function checkNames(names, file) {
  const seen = new Set();
  for (const name of names) {
    if (seen.has(name)) throw new ParseError(`${file} line 1: duplicate column name "${name}"`);
    if (RESERVED_COLUMNS.includes(name)) {
      throw new ParseError(`${file} line 1: column name "${name}" is reserved by the projector; rename it`);
    }
    seen.add(name);
  }
}

/**
 * Metadata TSV -> { names, columns, nRows }, by the server's rules (tests/cases/metadata.json
 * pins both). `header: 'auto'` follows TensorBoard's rule (a first line with a tab is a header,
 * otherwise one unnamed column called "label" whose lines are taken whole); `header: true` is
 * for the server's /api/metadata, which always writes one. A blank line inside a multi-column
 * body is an error, and so is a row whose cell count is not the header's.
 */
/**
 * @param {string} text
 * @param {{ header?: boolean | 'auto', file?: string }} [options]
 */
export function parseMetadataTsv(text, { header = 'auto', file = 'metadata.tsv' } = {}) {
  const body = content(text);
  if (body === '') throw new ParseError(`${file}: the file is empty`);
  const firstEnd = body.indexOf('\n');
  const first = (firstEnd < 0 ? body : body.slice(0, firstEnd)).replace(/\r+$/, '');
  const hasHeader = header === true || (header === 'auto' && first.includes('\t'));
  if (!hasHeader) {
    const values = wholeLines(body);
    return { names: ['label'], columns: [values], nRows: values.length };
  }
  const names = first.split('\t');
  checkNames(names, file);
  const rest = firstEnd < 0 ? '' : body.slice(firstEnd + 1);
  if (names.length === 1) {
    const values = firstEnd < 0 ? [] : wholeLines(rest);
    return { names, columns: [values], nRows: values.length };
  }
  const lines = firstEnd < 0 ? [] : rest.split(/\r\n|\r|\n/);
  const columns = names.map(() => []);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === '') {
      throw new ParseError(`${file} line ${i + 2}: an empty line, but the header names ${names.length} columns`);
    }
    const cells = lines[i].split('\t');
    if (cells.length !== names.length) {
      throw new ParseError(
        `${file} line ${i + 2}: ${cells.length} cells but the header has ${names.length} columns`,
      );
    }
    for (let c = 0; c < names.length; c++) columns[c].push(cells[c]);
  }
  return { names, columns, nRows: lines.length };
}

/** Float64Array of a column's values (NaN where missing), or null when a value is not a number. */
export function numericColumn(values) {
  const out = new Float64Array(values.length);
  let present = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === '') {
      out[i] = NaN;
      continue;
    }
    const x = readNumber(v);
    if (x === null) return null;
    out[i] = x;
    present++;
  }
  return present > 0 ? out : null;
}

/**
 * Tensor TSV (one vector per line, tab-separated floats, no header) -> { data, n, d }, by the
 * server's rules (tests/cases/tensors.json): a BOM dropped, blank lines skipped wherever they
 * are (a line of spaces is not blank), every row as long as the first.
 */
export function parseTensorTsv(text, { file = 'tensor.tsv' } = {}) {
  const lines = (text.startsWith('\ufeff') ? text.slice(1) : text).split(/\r?\n/);
  const n = lines.reduce((count, line) => count + (line === '' ? 0 : 1), 0);
  if (n === 0) throw new ParseError(`${file}: the file is empty`);
  const d = lines.find((line) => line !== '').split('\t').length;
  const data = new Float32Array(n * d);
  let row = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === '') continue;
    const cells = lines[i].split('\t');
    if (cells.length !== d) {
      throw new ParseError(`${file} line ${i + 1}: ${cells.length} values, expected ${d}`);
    }
    for (let j = 0; j < d; j++) {
      const cell = cells[j];
      if (!isNumberText(cell)) {
        throw new ParseError(`${file} line ${i + 1}: "${cell.slice(0, 40)}" is not a number`);
      }
      data[row * d + j] = parseNumber(cell);
    }
    row++;
  }
  return { data, n, d };
}

/** An IEEE half-precision float from its 16 bits (DataView has no getFloat16 in every browser yet). */
function float16(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

const NPY_READERS = {
  f2: (view, offset, little) => float16(view.getUint16(offset, little)),
  f4: (view, offset, little) => view.getFloat32(offset, little),
  f8: (view, offset, little) => view.getFloat64(offset, little),
  i1: (view, offset) => view.getInt8(offset),
  u1: (view, offset) => view.getUint8(offset),
  i2: (view, offset, little) => view.getInt16(offset, little),
  u2: (view, offset, little) => view.getUint16(offset, little),
  i4: (view, offset, little) => view.getInt32(offset, little),
  u4: (view, offset, little) => view.getUint32(offset, little),
  i8: (view, offset, little) => Number(view.getBigInt64(offset, little)),
  u8: (view, offset, little) => Number(view.getBigUint64(offset, little)),
};

/**
 * A 1-D or 2-D numeric .npy file -> { data: Float32Array, n, d }, a 1-D array as one column
 * (N x 1), as the server reads it. Object arrays are refused: their payload is a pickle, and a
 * pickle is never loaded.
 */
export function parseNpy(buffer, { file = 'tensor.npy' } = {}) {
  const bytes = new Uint8Array(buffer);
  const magic = String.fromCharCode(...bytes.subarray(0, 6));
  if (magic !== '\x93NUMPY') throw new ParseError(`${file}: not a .npy file (bad magic)`);
  const view = new DataView(buffer);
  const major = bytes[6];
  const headerLen = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const headerStart = major === 1 ? 10 : 12;
  const header = new TextDecoder('latin1').decode(bytes.subarray(headerStart, headerStart + headerLen));
  const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || shapeText === undefined) throw new ParseError(`${file}: unreadable .npy header`);
  const shape = shapeText.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  if (shape.length === 1) shape.push(1);
  if (shape.length !== 2) {
    throw new ParseError(`${file}: a tensor must be 2-D (N x D), this one has shape (${shapeText})`);
  }
  const kind = descr.slice(1);
  const read = NPY_READERS[kind];
  if (!read) throw new ParseError(`${file}: unsupported dtype ${descr} (numbers only, no objects)`);
  const little = descr[0] !== '>';
  const size = Number(kind[1]);
  const [n, d] = shape;
  if (n === 0 || d === 0) throw new ParseError(`${file}: is empty (shape (${shapeText}))`);
  const offset = headerStart + headerLen;
  if (buffer.byteLength - offset < n * d * size) {
    throw new ParseError(`${file}: truncated, expected ${n * d * size} bytes of data`);
  }
  const data = new Float32Array(n * d);
  if (kind === 'f4' && little && !fortran && offset % 4 === 0) {
    data.set(new Float32Array(buffer, offset, n * d));
    return { data, n, d };
  }
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) {
      const k = fortran ? j * n + i : i * d + j;
      data[i * d + j] = read(view, offset + k * size, little);
    }
  }
  return { data, n, d };
}

function formatNumber(v) {
  return Number.isFinite(v) ? String(v) : '';
}

/**
 * Coordinates of the current projection as CSV or TSV text: a header "index,x,y[,z]" and one
 * row per point; missing (NaN) coordinates are empty cells.
 */
export function formatCoordinates(coords, n, dims, sep = ',') {
  const axes = ['x', 'y', 'z'].slice(0, dims);
  const parts = [['index', ...axes].join(sep)];
  for (let i = 0; i < n; i++) {
    let row = String(i);
    for (let j = 0; j < dims; j++) row += sep + formatNumber(coords[i * dims + j]);
    parts.push(row);
  }
  return parts.join('\n') + '\n';
}

/**
 * Metadata back to TSV, e.g. for an uploaded or edited data set, by TensorBoard's header
 * rule: a header line when there are several columns; a single column is written bare
 * (a header there would be read back as a first row).
 */
export function formatMetadataTsv(names, columns) {
  const n = columns.length ? columns[0].length : 0;
  const parts = names.length === 1 ? [] : [names.join('\t')];
  for (let i = 0; i < n; i++) parts.push(columns.map((col) => col[i]).join('\t'));
  return parts.join('\n') + '\n';
}
