import assert from 'node:assert/strict';
import { test } from 'node:test';

import { neighborsFromChunk, parseColumnFile } from '../js/static_mode.js';
import { selectionTable } from '../js/export/selection.js';
import { Projection } from '../js/projection/projection.js';

test('a column file decodes as the metadata/column route answers it', () => {
  const head = new TextEncoder().encode(JSON.stringify(['a', 'b']) + '   '); // padded to 12 bytes
  const buffer = new ArrayBuffer(4 + head.length + 3 * 4);
  new DataView(buffer).setUint32(0, head.length, true);
  new Uint8Array(buffer, 4, head.length).set(head);
  new Int32Array(buffer, 4 + head.length, 3).set([1, 0, 1]);
  const column = parseColumnFile(buffer);
  assert.deepEqual(column.dictionary, ['a', 'b']);
  assert.deepEqual([...column.codes], [1, 0, 1]);
});

test('a chunk lists a row\'s neighbours, nearest first, up to k and before the -1 padding', () => {
  const rows = 2;
  const k = 3;
  const buffer = new ArrayBuffer(rows * k * 8);
  new Int32Array(buffer, 0, rows * k).set([5, 7, 9, 4, -1, -1]);
  new Float32Array(buffer, rows * k * 4, rows * k).set([0.1, 0.2, 0.3, 0.5, NaN, NaN]);
  assert.deepEqual(neighborsFromChunk(buffer, rows, k, 0, 2).map((n) => n.index), [5, 7]);
  const second = neighborsFromChunk(buffer, rows, k, 1, 10);
  assert.equal(second.length, 1);
  assert.equal(second[0].index, 4);
  assert.ok(Math.abs(second[0].distance - 0.5) < 1e-7);
});

test('a selection table quotes CSV fields and flattens TSV ones, its header first (a plain table)', () => {
  const app = {
    dataset: { columns: ['word'], values: () => ['plain', 'a,b "c"', 'tab\there'] },
    shown: Projection.restored('pca', {}, 3, { data: Float32Array.from([0, 1, 2, 3, 4, 5]), dims: 2 }),
    state: { pca: { x: 0, y: 1, z: 2, is3d: false } },
  };
  const csv = selectionTable(app, [1, 2], ',').split('\n');
  assert.equal(csv[0], 'index,word,pca_x,pca_y');
  assert.equal(csv[1], '1,"a,b ""c""",2,3');
  const tsv = selectionTable(app, [2], '\t').split('\n');
  assert.equal(tsv[1], '2\ttab here\t4\t5');
});
