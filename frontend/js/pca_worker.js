// PCA of an uploaded data set off the main thread, so the page stays responsive.

import { pca } from './kernels.js';

self.onmessage = (event) => {
  const { vectors, n, d, spherize } = event.data;
  try {
    const result = pca(vectors, n, d, { spherize });
    // A worker's postMessage (the transfer list moves the coordinates, no copy); the check
    // reads `self` as a window, whose postMessage takes a target origin instead.
    /** @type {any} */ (self).postMessage(result, [result.coords.buffer]);
  } catch (err) {
    self.postMessage({ error: err.message });
  }
};
