import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DEFAULT_COLOR, gradientColor, MISSING_COLOR, PALETTE, pointColoring } from '../js/colors.js';
import { Dataset } from '../js/dataset.js';
import { decodeState, defaultState, encodeState, sanitizeState } from '../js/state.js';
import { parseMetadataTsv } from '../js/tsv.js';

const rgbAt = (colors, i) => Array.from(colors.slice(i * 4, i * 4 + 3));

function dataset() {
  const metadata = parseMetadataTsv('class\tsize\n0\t1.5\n1\t2\n0\t3\n');
  return new Dataset({ source: 'server', run: 'r', name: 'e', n: 3, d: 2, metadata });
}

test('colour by quality is part of the state: the URL keeps it, bad values fall back to off', () => {
  assert.equal(defaultState().colorByQuality, false);
  const s = { ...defaultState(), run: 'r', embedding: 'e', colorByQuality: true };
  assert.equal(decodeState(encodeState(s)).colorByQuality, true);
  assert.equal(sanitizeState({ colorByQuality: 'yes' }).colorByQuality, false);
  assert.equal(sanitizeState({ colorByQuality: true }).colorByQuality, true);
});

test('the colour rule: a column by its kind, categorical as the state forces it, else the default', () => {
  const ds = dataset();
  const byClass = pointColoring({ ...defaultState(), colorBy: 'class' }, ds);
  assert.equal(byClass.kind, 'categorical');
  assert.deepEqual(rgbAt(byClass.colors, 0), rgbAt(byClass.colors, 2));
  assert.deepEqual(rgbAt(byClass.colors, 0), PALETTE[0]);
  assert.equal(pointColoring({ ...defaultState(), colorBy: 'size' }, ds).kind, 'numeric');
  assert.equal(pointColoring({ ...defaultState(), colorBy: 'size', categorical: true }, ds).kind, 'categorical');
  const none = pointColoring(defaultState(), ds);
  assert.equal(none.kind, 'none');
  assert.deepEqual(rgbAt(none.colors, 1), DEFAULT_COLOR);
});

test('quality colours the points while the state asks for it and values for every point are here', () => {
  const ds = dataset();
  const state = { ...defaultState(), colorBy: 'class', colorByQuality: true };
  const quality = [1, null, 0.5];
  const c = pointColoring(state, ds, quality);
  assert.equal(c.kind, 'quality');
  assert.equal(c.legend, null); // the structure panel shows its legend
  assert.deepEqual(rgbAt(c.colors, 0), gradientColor(1));
  assert.deepEqual(rgbAt(c.colors, 1), MISSING_COLOR);
  assert.deepEqual(rgbAt(c.colors, 2), gradientColor(0.5));
  // Not measured yet, measured for another data set, or switched off: the column's colours.
  assert.equal(pointColoring(state, ds, null).kind, 'categorical');
  assert.equal(pointColoring(state, ds, [1, 1]).kind, 'categorical');
  assert.equal(pointColoring({ ...state, colorByQuality: false }, ds, quality).kind, 'categorical');
});
