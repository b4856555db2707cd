import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fetchFirstColumns } from '../js/columns.js';
import { Dataset } from '../js/dataset.js';

const TABLE = {
  id: ['1', '2', '3', '4'],
  label: ['cat', 'dog', 'cat', 'cow'],
  group: ['a', 'b', 'a', 'b'],
  note: ['x', 'y', 'z', 'w'],
};
const NAMES = Object.keys(TABLE);

function fetcher(log) {
  return async (name) => {
    log.push(name);
    return TABLE[name].slice();
  };
}

test('only the wanted columns and those up to the defaults are fetched first', async () => {
  const log = [];
  const meta = await fetchFirstColumns(fetcher(log), NAMES, 4, ['group', null, 'missing']);
  // group (wanted), then id (numeric: not a label) and label (text, 3 values): defaults known.
  assert.deepEqual(log, ['group', 'id', 'label']);
  assert.equal(meta.columns[NAMES.indexOf('note')], null);
  const ds = new Dataset({ source: 'server', run: 'r', name: 'e', n: 4, d: 2, metadata: meta });
  assert.equal(ds.defaultLabelColumn(), 'label');
  assert.equal(ds.defaultColorColumn(), 'id');
});

test('a column not fetched yet comes when asked for, as a new metadata object', async () => {
  const log = [];
  const meta = await fetchFirstColumns(fetcher(log), NAMES, 4, []);
  const ds = new Dataset({ source: 'server', run: 'r', name: 'e', n: 4, d: 2, metadata: meta });
  ds.fetchColumn = fetcher(log);
  const arrived = [];
  ds.onColumn = (name) => arrived.push(name);
  assert.equal(ds.values('note'), null);
  assert.equal(ds.values('note'), null); // asked twice, fetched once
  await ds.ensureColumns(['note']);
  assert.deepEqual(ds.values('note'), TABLE.note);
  assert.notEqual(ds.metadata, meta);
  assert.deepEqual(arrived, ['note']);
  assert.equal(log.filter((c) => c === 'note').length, 1);
  assert.equal(ds.values('nope'), null);
});
