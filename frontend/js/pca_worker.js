// PCA of an uploaded data set off the main thread, so the page stays responsive.

import { pca } from './kernels.js';

self.onmessage = (event) => {
  const { vectors, n, d, spherize } = event.data;
  try {
    const result = pca(vectors, n, d, { spherize });
    self.postMessage(result, [result.coords.buffer]);
  } catch (err) {
    self.postMessage({ error: err.message });
  }
};
