import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Dataset } from '../js/dataset.js';
import { parseMetadataTsv } from '../js/tsv.js';

function dataset(text) {
  return new Dataset({ source: 'server', run: 'r', name: 'e', n: 3, d: 2, metadata: text ? parseMetadataTsv(text) : null });
}

test('defaults follow TensorBoard: label by the first text column, colour by a small category', () => {
  const ds = dataset('size\tword\tclass\n1.5\tcat\t0\n2\tdog\t1\n3\tcow\t0\n');
  assert.equal(ds.defaultLabelColumn(), 'word');
  assert.equal(ds.defaultColorColumn(), 'size');
  assert.equal(ds.label(1, 'word'), 'dog');
  assert.equal(ds.label(1, null), '#1');
});

test('small integer columns are categorical by default, real-valued ones numeric', () => {
  const ds = dataset('size\tclass\n1.5\t0\n2\t1\n3\t0\n');
  assert.equal(ds.categoricalByDefault('class'), true);
  assert.equal(ds.categoricalByDefault('size'), false);
});

test('asking for a column before the metadata arrives does not poison the cache', () => {
  const ds = dataset(null);
  assert.equal(ds.numeric('class'), null);
  ds.metadata = parseMetadataTsv('class\tx\n0\ta\n1\tb\n2\tc\n');
  assert.deepEqual(Array.from(ds.numeric('class')), [0, 1, 2]);
});

test('the label column is the server\'s choice when it names one (digits: label, not parity)', () => {
  const metadata = parseMetadataTsv('label\tparity\n0\teven\n1\todd\n2\teven\n');
  const ds = new Dataset({ source: 'server', run: 'r', name: 'e', n: 3, d: 2, metadata, info: { label_column: 'label' } });
  assert.equal(ds.defaultLabelColumn(), 'label');
  const gone = new Dataset({ source: 'server', run: 'r', name: 'e', n: 3, d: 2, metadata, info: { label_column: 'nope' } });
  assert.equal(gone.defaultLabelColumn(), 'parity', 'else TensorBoard\'s rule');
});
