import assert from 'node:assert/strict';
import test from 'node:test';

import { downloadName } from '../js/file_names.js';

test('an upload keeps its name without its extension', () => {
  assert.equal(downloadName({ name: 'up_tensor.tsv', run: null, local: true }, 'tsne', 'csv'), 'up_tensor-tsne.csv');
});

test('a server tensor is named with its run, unsafe characters replaced', () => {
  assert.equal(downloadName({ name: 'default:00010', run: 'train', local: false }, 'pca', 'tsv'), 'train-default_00010-pca.tsv');
  assert.equal(downloadName({ name: 'digits', run: 'digits', local: false }, 'metadata', 'tsv'), 'digits-metadata.tsv');
});

test('an upload kept by the server is named without its session run', () => {
  assert.equal(downloadName({ name: 'up_tensor.tsv', run: 'upload-6bd367e6', local: false }, 'tsne', 'csv'), 'up_tensor-tsne.csv');
});
