// "Load your own data": the files go to the server (POST /api/uploads), which keeps them in
// memory for this session as a run of their own, so t-SNE, UMAP and neighbours run there like
// on LOGDIR data. A file over the server's limit is read in this browser instead (PCA and
// Custom only), as before uploads existed.

import { errorOf } from './api.js';

/** @param {import('./app.js').App} app */
export async function uploadFiles(app, tensorFile, metadataFile) {
  const form = new FormData();
  form.append('tensor', tensorFile, tensorFile.name);
  if (metadataFile) form.append('metadata', metadataFile, metadataFile.name);
  const task = app.progress.start(`Uploading ${tensorFile.name}…`);
  let response;
  try {
    response = await fetch(app.api.url('uploads'), { method: 'POST', body: form });
  } finally {
    task.done();
  }
  if (response.status === 413) {
    await app.datasets.openFiles(tensorFile, metadataFile);
    app.setMessage(`${tensorFile.name} is over the server's upload limit: shown from this browser (PCA and Custom only)`);
    return;
  }
  if (!response.ok) throw await errorOf(response);
  const body = await response.json();
  await app.datasets.relist();
  if (app.dataset) app.update({ run: body.run, embedding: body.embedding });
  else await app.datasets.openDataset(body.run, body.embedding);
  app.setMessage(`Uploaded ${tensorFile.name}: kept in the server's memory for this session only`);
}
