import assert from 'node:assert/strict';
import test from 'node:test';

import { Dataset } from '../js/dataset.js';
import { tagProblem, tagRows } from '../js/metadata_edit.js';
import { superviseChoices, superviseColumn } from '../js/supervision.js';
import { formatMetadataTsv, parseMetadataTsv } from '../js/tsv.js';

const metadata = () => parseMetadataTsv('label\tparity\n0\teven\n1\todd\n2\teven\n');

test('tagging a new column fills the selected rows and leaves the rest missing', () => {
  const before = metadata();
  const after = tagRows(before, 3, 'checked', 'yes', [0, 2, 7, -1]);
  assert.deepEqual(after.names, ['label', 'parity', 'checked']);
  assert.deepEqual(after.columns[2], ['yes', '', 'yes']);
  assert.deepEqual(before.names, ['label', 'parity']); // the input is not changed
  assert.equal(after.columns[0], before.columns[0]); // untouched columns are shared
});

test('tagging an existing column overwrites only the selected rows', () => {
  const after = tagRows(metadata(), 3, 'parity', 'odd', [0]);
  assert.deepEqual(after.columns[1], ['odd', 'odd', 'even']);
});

test('a data set without metadata gets its first column, written without a header', () => {
  const ds = new Dataset({ source: 'server', run: 'r', name: 'e', n: 2, d: 4 });
  ds.tag('note', 'a', [1]);
  assert.deepEqual(ds.columns, ['note']);
  assert.equal(formatMetadataTsv(ds.metadata.names, ds.metadata.columns), '\na\n');
});

test('the edited data set downloads as TSV with the new column and reads back the same', () => {
  const ds = new Dataset({ source: 'server', run: 'r', name: 'e', n: 3, d: 4, metadata: metadata() });
  assert.deepEqual(Array.from(ds.numeric('label')), [0, 1, 2]);
  ds.tag('label', 'x', [1]);
  assert.equal(ds.numeric('label'), null); // the numeric cache follows the edit
  ds.tag('group', 'g1', [0, 1]);
  const text = formatMetadataTsv(ds.metadata.names, ds.metadata.columns);
  assert.equal(text, 'label\tparity\tgroup\n0\teven\tg1\nx\todd\tg1\n2\teven\t\n');
  assert.deepEqual(parseMetadataTsv(text).columns, ds.metadata.columns);
  assert.deepEqual([...ds.edited], ['label', 'group']);
});

test('tags that would break the TSV are refused with a reason', () => {
  assert.equal(tagProblem('group', 'a'), null);
  assert.equal(tagProblem('group', ''), null); // clears the cells
  assert.match(tagProblem(' ', 'a'), /Name the column/);
  assert.match(tagProblem('a\tb', 'x'), /Tabs/);
  assert.match(tagProblem('g', 'x\ny'), /line breaks/);
  assert.match(tagProblem('__next__', '1'), /reserved/);
});

test('supervision offers only the columns the server holds, and only with a weight', () => {
  const ds = new Dataset({ source: 'server', run: 'r', name: 'e', n: 3, d: 4, metadata: metadata() });
  ds.tag('group', 'g', [0]);
  assert.deepEqual(superviseChoices(ds), ['label', 'parity']);
  assert.equal(superviseColumn({ superviseColumn: 'parity', superviseWeight: 0.5 }, ds), 'parity');
  assert.equal(superviseColumn({ superviseColumn: 'parity', superviseWeight: 0 }, ds), null);
  assert.equal(superviseColumn({ superviseColumn: 'group', superviseWeight: 1 }, ds), null);
  const upload = new Dataset({ source: 'local', run: 'upload', name: 'x', n: 3, d: 4, metadata: metadata() });
  assert.deepEqual(superviseChoices(upload), []);
});

test('supervision fields in an untrusted state fall back to their defaults', async () => {
  const { sanitizeState } = await import('../js/state.js');
  // A weight of the wrong type falls back; one out of range is clamped by the parameter
  // table (limits.test.js).
  const bad = sanitizeState({ tsne: { superviseColumn: 5, superviseWeight: 'heavy' } }).tsne;
  assert.equal(bad.superviseColumn, null);
  assert.equal(bad.superviseWeight, null); // the parameter table's default (no table here)
  const good = sanitizeState({ tsne: { superviseColumn: 'label', superviseWeight: 0.25 } }).tsne;
  assert.equal(good.superviseColumn, 'label');
  assert.equal(good.superviseWeight, 0.25);
});
