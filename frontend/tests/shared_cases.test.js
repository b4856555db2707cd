// The browser's half of the shared table of cases (tests/cases/*.json): what the browser
// computes locally must give what the server's kernels give (tests/test_shared_cases.py
// reads the same files), so the two cannot drift apart.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

import { categoricalColoring, PALETTE } from '../js/colors.js';
import { customProjection, nearestNeighbors, pca, search } from '../js/kernels.js';
import { parseSequence } from '../js/sequences.js';
import { numericColumn, parseMetadataTsv, parseNpy, parseTensorTsv } from '../js/tsv.js';

const CASES = new URL('../../tests/cases/', import.meta.url);
const table = (name) => JSON.parse(readFileSync(new URL(`${name}.json`, CASES), 'utf8'));
const TOLERANCE = 1e-4;

/** A JSON cell as a float: 'nan', 'inf', '-inf' stand for those, null for a missing number. */
function float(cell) {
  if (cell === null || cell === 'nan') return NaN;
  if (cell === 'inf') return Infinity;
  if (cell === '-inf') return -Infinity;
  return cell;
}

function matrix(rows) {
  const d = rows[0].length;
  return { data: Float32Array.from(rows.flat(), float), n: rows.length, d };
}

function assertClose(actual, expected, where, eps = TOLERANCE) {
  const want = float(expected);
  if (Number.isNaN(want)) assert.ok(Number.isNaN(actual), `${where}: ${actual} is not NaN`);
  else if (!Number.isFinite(want)) assert.equal(actual, want, where);
  else assert.ok(Math.abs(actual - want) <= eps, `${where}: ${actual} != ${want}`);
}

test('every file of the table is read by this test', () => {
  const files = readdirSync(CASES).filter((f) => f.endsWith('.json')).sort();
  assert.deepEqual(files, [
    'colours.json', 'custom.json', 'metadata.json', 'neighbors.json', 'npy.json', 'pca.json', 'search.json', 'sequences.json',
    'tensors.json',
  ]);
});

for (const c of table('search').cases) {
  test(`search: ${c.name}`, () => {
    const { values } = table('search');
    if (c.error) assert.throws(() => search(values, c.query, c.regex), SyntaxError);
    else assert.deepEqual(search(values, c.query, c.regex), c.expected);
  });
}

for (const c of table('neighbors').cases) {
  test(`neighbours: ${c.name}`, () => {
    const { data, n, d } = matrix(c.data);
    const run = () => nearestNeighbors(data, n, d, c.index, c.k, c.metric);
    if (c.error) {
      assert.throws(run, (err) => err.message.includes(c.error));
      return;
    }
    const found = run();
    assert.deepEqual(found.map((x) => x.index), c.expected.map((x) => x.index));
    found.forEach((x, i) => {
      assert.ok(x.distance >= 0, `distance ${x.distance} below 0`);
      assertClose(x.distance, c.expected[i].distance, `distance ${i}`, 1e-6);
    });
  });
}

for (const c of table('pca').cases) {
  test(`PCA: ${c.name}`, () => {
    const { data, n, d } = matrix(c.data);
    const run = () => pca(data, n, d, { k: c.k, spherize: c.spherize });
    if (c.error) {
      assert.throws(run, (err) => err.message.includes(c.error));
      return;
    }
    const result = run();
    const k = c.ratios.length;
    assert.equal(result.k, k);
    c.ratios.forEach((r, j) => assertClose(result.varianceRatio[j], r, `ratio ${j}`));
    c.coords.forEach((row, i) => row.forEach((v, j) => assertClose(result.coords[i * k + j], v, `row ${i} component ${j}`)));
  });
}

for (const c of table('custom').cases) {
  test(`custom projection: ${c.name}`, { todo: c.browser_differs }, () => {
    const { data, n, d } = matrix(c.data);
    const { left, right, up, down, regex, seed } = c;
    const run = () => customProjection(data, n, d, c.values, { left, right, up, down, regex, seed });
    if (c.error) {
      assert.throws(run, (err) => err.message.includes(c.error));
      return;
    }
    const { coords, matches } = run();
    assert.deepEqual(matches, c.matches);
    c.coords.forEach((row, i) => row.forEach((v, a) => assertClose(coords[i * 2 + a], v, `row ${i} axis ${a}`)));
  });
}

function assertMetadata(parsed, c) {
  assert.deepEqual(parsed.names, c.names);
  assert.deepEqual(parsed.columns, c.columns);
  assert.equal(parsed.nRows, c.columns[0].length);
  c.names.forEach((name, j) => {
    const numbers = numericColumn(parsed.columns[j]);
    const want = c.numeric[name];
    if (want === null) {
      assert.equal(numbers, null, `column ${name} should be text`);
      return;
    }
    assert.ok(numbers, `column ${name} should be numeric`);
    want.forEach((v, i) => assertClose(numbers[i], v, `${name}[${i}]`, 0));
  });
}

for (const c of table('metadata').cases) {
  // A case the maintainers have yet to settle shows as TODO here, never as a pass.
  test(`metadata: ${c.name}`, { todo: c.browser_differs }, () => {
    const run = () => parseMetadataTsv(c.text, { file: 'm.tsv' });
    if (c.error) {
      assert.throws(run, (err) => err.message.includes(c.error));
      return;
    }
    assertMetadata(run(), c);
    if (c.served !== undefined) assertMetadata(parseMetadataTsv(c.served, { header: true }), c);
  });
}

test('metadata: single number cells', () => {
  for (const [cell, value] of table('metadata').cells) {
    const numbers = numericColumn([cell]);
    if (value === null) assert.equal(numbers, null, JSON.stringify(cell));
    else assertClose(numbers?.[0], value, JSON.stringify(cell), 0);
  }
});

for (const c of table('sequences').cases) {
  test(`sequences: ${c.name}`, () => {
    const parsed = parseSequence(c.cells, c.cells.length);
    assert.deepEqual(Array.from(parsed.pairs), c.pairs.flat());
    assert.equal(parsed.bad, c.bad);
    assert.equal(parsed.firstBad?.row ?? null, c.first_bad_row);
  });
}

for (const c of table('tensors').cases) {
  test(`tensor TSV: ${c.name}`, () => {
    const run = () => parseTensorTsv(c.text, { file: 't.tsv' });
    if (c.error) {
      assert.throws(run, (err) => err.message.includes(c.error));
      return;
    }
    const { data, n, d } = run();
    assert.deepEqual([n, d], [c.rows.length, c.rows[0].length]);
    c.rows.flat().forEach((v, i) => assertClose(data[i], v, `value ${i}`, 0));
  });
}

for (const c of table('npy').cases) {
  test(`.npy: ${c.name}`, { todo: c.browser_differs }, () => {
    const bytes = Buffer.from(c.npy, 'base64');
    const run = () => parseNpy(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), { file: 't.npy' });
    if (c.error) {
      assert.throws(run, (err) => err.message.toLowerCase().includes(c.error.toLowerCase()));
      return;
    }
    const { data, n, d } = run();
    assert.deepEqual([n, d], [c.rows.length, c.rows[0].length]);
    c.rows.flat().forEach((v, i) => assertClose(data[i], v, `value ${i}`, 0));
  });
}

for (const c of table('colours').cases) {
  test(`colours: ${c.name}`, () => {
    const coloring = categoricalColoring(c.values);
    assert.deepEqual(coloring.legend.items.map((i) => i.value), c.order.slice(0, 20));
    c.values.forEach((value, i) => {
      if (!value) return;
      const want = PALETTE[c.order.indexOf(value) % PALETTE.length];
      assert.deepEqual([...coloring.colors.subarray(i * 4, i * 4 + 3)], want, `row ${i} (${value})`);
    });
  });
}
