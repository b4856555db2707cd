import assert from 'node:assert/strict';
import { test } from 'node:test';

import { splitStep } from '../js/training/timeline.js';
import { TilePoints } from '../js/tiles/tile_points.js';

test('every step of a tag shows its labels: the tag is the name without its step', () => {
  assert.equal(splitStep('enc:00010')[0], 'enc');
  assert.equal(splitStep('a:b:00001')[0], 'a:b');
  assert.equal(splitStep('words')[0], 'words');
  assert.equal(splitStep('words:v2')[0], 'words:v2'); // not a step
});

/** A TilePoints over the box [0, 8]^2 holding one resident tile carrying `column`'s codes. */
function carrying(column, rows, coords, codes) {
  const box = { lo: [0, 0], hi: [8, 8] };
  const tiled = new TilePoints(null, 'job', { budget: 8, total: rows.length, axes: [0, 1], box, bounds: box, tiles: [[0, 0, 0, rows.length]] });
  tiled.coloring = { column, words: null, word: 0 };
  const painted = [];
  const layer = { setColors: () => painted.push('colors'), setFlags: () => {}, dispose: () => painted.push('dropped') };
  tiled.resident.set('0/0/0', { key: '0/0/0', z: 0, count: rows.length, rows: Int32Array.from(rows), coords: Float32Array.from(coords.flat()), codes: Int32Array.from(codes), column, layer, positions: new Float32Array(rows.length * 3) });
  tiled.residentPoints = rows.length;
  return { tiled, painted };
}

test("a tiled map takes this page's edit at once: its code on its rows, or inside its region", () => {
  const coords = [[1, 1], [2, 2], [6, 6], [7, 1]];
  const { tiled, painted } = carrying('fixed', [10, 11, 12, 13], coords, [0, 0, 0, 0]);
  tiled.recode('fixed', { rows: [11, 13], region: null, code: 2, value: 'b', values: 3 });
  assert.deepEqual([...tiled.resident.get('0/0/0').codes], [0, 2, 0, 2]);
  tiled.recode('fixed', { rows: null, region: { polygon: [[0, 0], [3, 0], [3, 3], [0, 3]], axes: [0, 1] }, code: 1, value: 'a', values: 3 });
  assert.deepEqual([...tiled.resident.get('0/0/0').codes], [1, 1, 0, 2]);
  assert.deepEqual(painted, ['colors', 'colors']);
  tiled.recode('other', null); // a column the tiles do not carry: nothing changes
  assert.equal(tiled.resident.size, 1);
  tiled.recode('fixed', null); // any other change: fetched again as the view wants them
  assert.equal(tiled.resident.size, 0);
  assert.equal(painted.at(-1), 'dropped');
});
