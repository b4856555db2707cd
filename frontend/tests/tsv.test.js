import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  formatCoordinates,
  formatMetadataTsv,
  numericColumn,
  ParseError,
  parseMetadataTsv,
  parseNpy,
  parseTensorTsv,
} from '../js/tsv.js';

test('a first line with a tab is a header', () => {
  const m = parseMetadataTsv('word\tcount\ncat\t3\ndog\t\n');
  assert.deepEqual(m.names, ['word', 'count']);
  assert.deepEqual(m.columns, [['cat', 'dog'], ['3', '']]);
  assert.equal(m.nRows, 2);
});

test('a single column without a tab has no header and is called label', () => {
  const m = parseMetadataTsv('猫\nкошка\n🐱\n');
  assert.deepEqual(m.names, ['label']);
  assert.deepEqual(m.columns[0], ['猫', 'кошка', '🐱']);
});

test('the server metadata always has a header, even with one column', () => {
  const m = parseMetadataTsv('label\na\nb\n', { header: true });
  assert.deepEqual(m.names, ['label']);
  assert.deepEqual(m.columns[0], ['a', 'b']);
});

test('windows line endings are accepted; a short row names its line, as on the server', () => {
  const m = parseMetadataTsv('a\tb\r\n1\t\r\n2\t3\r\n');
  assert.deepEqual(m.columns, [['1', '2'], ['', '3']]);
  assert.throws(() => parseMetadataTsv('a\tb\r\n1\r\n2\t3\r\n', { file: 'm.tsv' }), /m\.tsv line 2: 1 cells/);
});

test('a row longer than the header names its line', () => {
  assert.throws(() => parseMetadataTsv('a\tb\n1\t2\t3\n', { file: 'm.tsv' }), /m\.tsv line 2: 3 cells/);
});

test('duplicate column names are refused', () => {
  assert.throws(() => parseMetadataTsv('a\ta\n1\t2\n'), ParseError);
});

test('numeric columns parse like Python floats and keep missing values as NaN', () => {
  const v = numericColumn(['1', '-2.5e3', '', 'inf', 'nan', '.5']);
  assert.deepEqual(Array.from(v.slice(0, 2)), [1, -2500]);
  assert.ok(Number.isNaN(v[2]));
  assert.equal(v[3], Infinity);
  assert.ok(Number.isNaN(v[4]));
  assert.equal(v[5], 0.5);
  assert.equal(numericColumn(['1', 'two']), null);
  assert.equal(numericColumn(['0x10']), null);
  assert.equal(numericColumn(['', '']), null);
  // Spaces the server's pattern allows around a number, and only those.
  assert.deepEqual(Array.from(numericColumn([' 5', '6\t', '\r7\n'])), [5, 6, 7]);
  assert.equal(numericColumn(['\u00a05']), null);
  assert.equal(numericColumn(['\v5']), null);
});

test('tensor TSV rows become a row-major Float32Array', () => {
  const t = parseTensorTsv('1\t2\t3\n4\t5\t6\n');
  assert.equal(t.n, 2);
  assert.equal(t.d, 3);
  assert.deepEqual(Array.from(t.data), [1, 2, 3, 4, 5, 6]);
});

test('a ragged or non-numeric tensor TSV names the line', () => {
  assert.throws(() => parseTensorTsv('1\t2\n3\n', { file: 't.tsv' }), /t\.tsv line 2: 1 values, expected 2/);
  assert.throws(() => parseTensorTsv('1\tx\n'), /line 1: "x" is not a number/);
});

function npy(descr, shape, values, { fortran = false, ArrayType = Float32Array } = {}) {
  const dict = `{'descr': '${descr}', 'fortran_order': ${fortran ? 'True' : 'False'}, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  let header = dict;
  while ((10 + header.length + 1) % 64 !== 0) header += ' ';
  header += '\n';
  const body = new ArrayType(values);
  const buf = new Uint8Array(10 + header.length + body.byteLength);
  buf.set([0x93, ...Buffer.from('NUMPY'), 1, 0]);
  new DataView(buf.buffer).setUint16(8, header.length, true);
  buf.set(Buffer.from(header, 'latin1'), 10);
  buf.set(new Uint8Array(body.buffer), 10 + header.length);
  return buf.buffer;
}

test('npy float32, float64 and fortran order are read', () => {
  assert.deepEqual(Array.from(parseNpy(npy('<f4', [2, 2], [1, 2, 3, 4])).data), [1, 2, 3, 4]);
  assert.deepEqual(Array.from(parseNpy(npy('<f8', [2, 2], [1, 2, 3, 4], { ArrayType: Float64Array })).data), [1, 2, 3, 4]);
  const f = parseNpy(npy('<f4', [2, 3], [1, 4, 2, 5, 3, 6], { fortran: true }));
  assert.deepEqual(Array.from(f.data), [1, 2, 3, 4, 5, 6]);
});

test('npy object arrays are refused; a 1-D array is one column, as on the server', () => {
  assert.throws(() => parseNpy(npy('|O', [2, 2], [0, 0, 0, 0])), /unsupported dtype/);
  const column = parseNpy(npy('<f4', [4], [1, 2, 3, 4]));
  assert.deepEqual([column.n, column.d, Array.from(column.data)], [4, 1, [1, 2, 3, 4]]);
  assert.throws(() => parseNpy(npy('<f4', [1, 2, 2], [1, 2, 3, 4])), /must be 2-D/);
  assert.throws(() => parseNpy(new ArrayBuffer(16)), /not a \.npy file/);
});

test('coordinates download as CSV/TSV with an index column and empty NaN cells', () => {
  const csv = formatCoordinates(new Float32Array([1, 2, NaN, 4]), 2, 2, ',');
  assert.equal(csv, 'index,x,y\n0,1,2\n1,,4\n');
  const tsv = formatCoordinates(new Float32Array([1, 2, 3]), 1, 3, '\t');
  assert.equal(tsv, 'index\tx\ty\tz\n0\t1\t2\t3\n');
});

test('metadata formats back to the TSV it came from', () => {
  const text = 'a\tb\n1\tx\n2\ty\n';
  const m = parseMetadataTsv(text);
  assert.equal(formatMetadataTsv(m.names, m.columns), text);
});
