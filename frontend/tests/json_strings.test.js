import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseStringList } from '../js/json_strings.js';

test('a long JSON list of strings parsed in pieces equals JSON.parse, whatever the strings hold', async () => {
  const values = ['', 'plain', 'a ", " b', 'ends with \\', '\\"', 'x\\\\', 'tab\there', 'line\nbreak',
    'unicode é 日本', '","', ',', ', ', '"', ' , ', '] [', 'emoji 🙂', ...Array.from({ length: 500 }, (_, i) => `w${i}, "q"`)];
  for (const separators of [', ', ',']) {
    const text = `[${values.map((v) => JSON.stringify(v)).join(separators)}]   `;
    for (const piece of [1, 7, 64, 1 << 20]) {
      assert.deepEqual(await parseStringList(text, piece), values, `piece ${piece}`);
    }
  }
  assert.deepEqual(await parseStringList('[]', 1), []);
  assert.deepEqual(await parseStringList('["one"]', 1), ['one']);
});
