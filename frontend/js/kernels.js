// In-browser compute for uploaded data sets, which the server never sees: PCA, nearest
// neighbours, search and the custom (linear) projection. Server data sets use the REST API
// for all of these. Pure functions over typed arrays, usable from a worker and from node.

import { gaussian, seededUniform, standardNormal } from './random.js';

/**
 * Orthonormalizes the p columns of a d x p column-major matrix in place (modified
 * Gram-Schmidt, each column twice). A column that depends on the previous ones leaves only
 * rounding noise: it is replaced by a unit vector and orthogonalized again.
 */
function orthonormalize(q, d, p) {
  for (let j = 0; j < p; j++) {
    for (let attempt = 0; attempt <= d; attempt++) {
      let before = 0;
      for (let r = 0; r < d; r++) before += q[j * d + r] ** 2;
      for (let pass = 0; pass < 2; pass++) {
        for (let i = 0; i < j; i++) {
          let dotp = 0;
          for (let r = 0; r < d; r++) dotp += q[j * d + r] * q[i * d + r];
          for (let r = 0; r < d; r++) q[j * d + r] -= dotp * q[i * d + r];
        }
      }
      let norm = 0;
      for (let r = 0; r < d; r++) norm += q[j * d + r] ** 2;
      if (norm > 1e-20 * before && norm > 0) {
        norm = Math.sqrt(norm);
        for (let r = 0; r < d; r++) q[j * d + r] /= norm;
        break;
      }
      for (let r = 0; r < d; r++) q[j * d + r] = r === (j + attempt) % d ? 1 : 0;
    }
  }
}

/** Eigen-decomposition of a small symmetric p x p matrix by cyclic Jacobi rotations. */
export function symmetricEigen(matrix, p) {
  const a = Float64Array.from(matrix);
  const v = new Float64Array(p * p);
  for (let i = 0; i < p; i++) v[i * p + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let i = 0; i < p; i++) for (let j = i + 1; j < p; j++) off += a[i * p + j] ** 2;
    if (off < 1e-22) break;
    for (let i = 0; i < p; i++) {
      for (let j = i + 1; j < p; j++) {
        const aij = a[i * p + j];
        if (Math.abs(aij) < 1e-300) continue;
        const theta = (a[j * p + j] - a[i * p + i]) / (2 * aij);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < p; k++) {
          const aki = a[k * p + i];
          const akj = a[k * p + j];
          a[k * p + i] = c * aki - s * akj;
          a[k * p + j] = s * aki + c * akj;
        }
        for (let k = 0; k < p; k++) {
          const aik = a[i * p + k];
          const ajk = a[j * p + k];
          a[i * p + k] = c * aik - s * ajk;
          a[j * p + k] = s * aik + c * ajk;
        }
        for (let k = 0; k < p; k++) {
          const vki = v[k * p + i];
          const vkj = v[k * p + j];
          v[k * p + i] = c * vki - s * vkj;
          v[k * p + j] = s * vki + c * vkj;
        }
      }
    }
  }
  const order = [...Array(p).keys()].sort((x, y) => a[y * p + y] - a[x * p + x]);
  return {
    values: order.map((i) => a[i * p + i]),
    vectors: order.map((i) => Array.from({ length: p }, (_, k) => v[k * p + i])),
  };
}

/** Mean of the rows flagged finite, in float64. */
function meanOf(data, n, d, finite, count) {
  const mean = new Float64Array(d);
  for (let i = 0; i < n; i++) if (finite[i]) for (let j = 0; j < d; j++) mean[j] += data[i * d + j];
  for (let j = 0; j < d; j++) mean[j] /= count;
  return mean;
}

/**
 * The rows PCA fits, moved as the server's kernel moves them: centred; when spherizing, each
 * scaled to unit length (a zero row stays zero) and centred again. Rows with NaN/Inf are
 * zeroed and flagged 0 in `finite`; none finite is an error.
 */
function centeredRows(data, n, d, spherize) {
  const { finite, count } = finiteRows(data, n, d);
  if (!count) throw new RangeError('PCA needs at least one row without NaN or Inf values');
  const x = Float32Array.from(data);
  const shift = (mean) => {
    for (let i = 0; i < n; i++) if (finite[i]) for (let j = 0; j < d; j++) x[i * d + j] -= mean[j];
  };
  shift(meanOf(data, n, d, finite, count));
  if (spherize) {
    for (let i = 0; i < n; i++) {
      let norm = 0;
      for (let j = 0; j < d; j++) norm += x[i * d + j] ** 2;
      const scale = 1 / (Math.sqrt(norm) || 1);
      for (let j = 0; j < d; j++) x[i * d + j] *= scale;
    }
    shift(meanOf(x, n, d, finite, count));
  }
  for (let i = 0; i < n; i++) if (!finite[i]) x.fill(0, i * d, i * d + d);
  return { x, finite };
}

/** scikit-learn's svd_flip, as the server: each component's largest-magnitude entry positive. */
function flipSigns(w, comps, d) {
  for (let c = 0; c < comps; c++) {
    let top = 0;
    for (let j = 1; j < d; j++) if (Math.abs(w[c * d + j]) > Math.abs(w[c * d + top])) top = j;
    if (w[c * d + top] < 0) for (let j = 0; j < d; j++) w[c * d + j] = -w[c * d + j];
  }
}

/**
 * PCA by randomized subspace iteration on at most `sampleLimit` rows, then every row
 * projected: { coords (n x k, row-major), k = min(k, d), varianceRatio[k], totalVariance }.
 * Rows with NaN/Inf get NaN coordinates. The server kernel's rules (tests/cases/pca.json),
 * though it fits every row rather than a sample.
 */
export function pca(data, n, d, { k = 10, spherize = false, sampleLimit = 50000, seed = 7 } = {}) {
  if (!(k >= 1)) throw new RangeError(`n_components must be positive, got ${k}`);
  const { x, finite } = centeredRows(data, n, d, spherize);
  const comps = Math.min(k, d);
  const p = Math.min(d, comps + 6);
  const rand = seededUniform(seed); // the same upload gives the same PCA signs
  const rows = [];
  if (n <= sampleLimit) for (let i = 0; i < n; i++) rows.push(i);
  else for (let i = 0; i < sampleLimit; i++) rows.push(Math.floor(rand() * n));
  const m = rows.length;
  const q = new Float64Array(d * p);
  for (let i = 0; i < q.length; i++) q[i] = gaussian(rand);
  orthonormalize(q, d, p);
  const z = new Float64Array(m * p);
  const xq = () => {
    z.fill(0);
    for (let r = 0; r < m; r++) {
      const base = rows[r] * d;
      for (let c = 0; c < p; c++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += x[base + j] * q[c * d + j];
        z[r * p + c] = s;
      }
    }
  };
  for (let iter = 0; iter < 8; iter++) {
    xq();
    q.fill(0);
    for (let r = 0; r < m; r++) {
      const base = rows[r] * d;
      for (let c = 0; c < p; c++) {
        const zc = z[r * p + c];
        for (let j = 0; j < d; j++) q[c * d + j] += x[base + j] * zc;
      }
    }
    orthonormalize(q, d, p);
  }
  xq();
  const cov = new Float64Array(p * p);
  for (let r = 0; r < m; r++) {
    for (let a = 0; a < p; a++) for (let b = 0; b < p; b++) cov[a * p + b] += z[r * p + a] * z[r * p + b];
  }
  const denom = Math.max(1, m - 1);
  for (let i = 0; i < cov.length; i++) cov[i] /= denom;
  let total = 0;
  for (let r = 0; r < m; r++) for (let j = 0; j < d; j++) total += x[rows[r] * d + j] ** 2;
  total /= denom;
  const { values, vectors } = symmetricEigen(cov, p);
  const w = new Float64Array(comps * d);
  for (let c = 0; c < comps; c++) {
    for (let j = 0; j < d; j++) {
      let s = 0;
      for (let b = 0; b < p; b++) s += q[b * d + j] * vectors[c][b];
      w[c * d + j] = s;
    }
  }
  flipSigns(w, comps, d);
  const coords = new Float32Array(n * comps);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < comps; c++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += x[i * d + j] * w[c * d + j];
      coords[i * comps + c] = finite[i] ? s : NaN;
    }
  }
  const varianceRatio = values.slice(0, comps).map((v) => (total > 0 ? Math.max(0, v) / total : 0));
  return { coords, k: comps, varianceRatio, totalVariance: total };
}

/**
 * Text compared without case, as the server's str.casefold(): upper then lower case folds
 * "ß" to "ss" and the "ﬁ" ligature to "fi", which toLowerCase() alone does not.
 */
function fold(text) {
  return text.toUpperCase().toLowerCase();
}

/** A case-insensitive matcher for a query: substring, or regex (throws on a bad one). */
export function matcher(query, regex) {
  if (regex) {
    const re = new RegExp(query, 'i');
    return (v) => re.test(v);
  }
  const q = fold(query);
  return (v) => fold(v).includes(q);
}

/** Indices whose value matches the query; a blank (empty or whitespace-only) query matches nothing. */
export function search(values, query, regex) {
  if (!query.trim()) return [];
  const test = matcher(query, regex);
  const out = [];
  for (let i = 0; i < values.length; i++) if (test(values[i])) out.push(i);
  return out;
}

function finiteRow(data, d, i) {
  for (let j = 0; j < d; j++) if (!Number.isFinite(data[i * d + j])) return false;
  return true;
}

/** { finite: 1 per row without NaN/Inf, else 0; count: how many }: the rows every kernel fits. */
function finiteRows(data, n, d) {
  const finite = new Uint8Array(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    finite[i] = finiteRow(data, d, i) ? 1 : 0;
    count += finite[i];
  }
  return { finite, count };
}

/** Distance of row i to the query row: 1 - cos (clipped to [0, 2], a zero vector at 1) or euclidean. */
function distanceTo(data, d, i, q, qNorm, metric) {
  if (metric === 'cosine') {
    let dotp = 0;
    let norm = 0;
    for (let j = 0; j < d; j++) {
      const v = data[i * d + j];
      dotp += v * q[j];
      norm += v * v;
    }
    return Math.min(2, Math.max(0, 1 - dotp / (qNorm * (Math.sqrt(norm) || 1))));
  }
  let sum = 0;
  for (let j = 0; j < d; j++) sum += (data[i * d + j] - q[j]) ** 2;
  return Math.sqrt(sum);
}

/** Whether neighbour a ranks after b: farther, or as far with a higher index. */
const after = (a, b) => a.distance > b.distance || (a.distance === b.distance && a.index > b.index);

/**
 * The k nearest rows to row `index` ([{ index, distance }] ascending, ties by index; the row
 * itself and rows with NaN/Inf excluded), by brute force with a bounded max-heap. Refuses
 * what GET /api/neighbors refuses: k below 1 or above the N - 1 other rows, an index out of
 * range, a row holding NaN/Inf.
 */
/**
 * The range of k for a point among n: the server's limit (projector_core/projection/limits.py,
 * sent as `limits.neighbors.k` for server data), kept here for local data; the shared cases
 * pin the refusal beyond it.
 */
export function neighborLimit(n) {
  return { minimum: 1, maximum: n - 1 };
}

export function nearestNeighbors(data, n, d, index, k, metric = 'cosine') {
  if (!Number.isInteger(index) || index < 0 || index >= n) {
    throw new RangeError(`index ${index} out of range: the data set has ${n} points`);
  }
  const most = neighborLimit(n).maximum;
  if (!(k >= 1)) throw new RangeError(`k must be positive, got ${k}`);
  if (k > most) throw new RangeError(`k ${k} is more than the ${most} other points of the data set`);
  if (!finiteRow(data, d, index)) throw new RangeError(`row ${index} holds NaN or Inf values and has no neighbours`);
  return nearestTo(data, n, d, data.subarray(index * d, index * d + d), k, metric, (i) => i === index);
}

/**
 * Search by example for local data (the server's semantic/examples.py): the k nearest rows
 * to the mean of `rows`' finite vectors, `rows` left out.
 */
export function exampleNeighbors(data, n, d, rows, k, metric = 'cosine') {
  const examples = new Set(rows);
  const q = new Float64Array(d);
  let count = 0;
  for (const row of examples) {
    if (!Number.isInteger(row) || row < 0 || row >= n) throw new RangeError(`row ${row} out of range: the data set has ${n} points`);
    if (!finiteRow(data, d, row)) continue;
    for (let j = 0; j < d; j++) q[j] += data[row * d + j];
    count += 1;
  }
  if (!count) throw new RangeError(`none of the ${examples.size} rows has a finite vector: they have no centroid to search from`);
  for (let j = 0; j < d; j++) q[j] /= count;
  if (!(k >= 1) || k > n - examples.size) throw new RangeError(`k ${k} is more than the ${n - examples.size} other points of the data set`);
  return nearestTo(data, n, d, q, k, metric, (i) => examples.has(i));
}

/** The k nearest finite rows to the query vector `q` (rows `skip` says left out), nearest first, ties by index. */
function nearestTo(data, n, d, q, k, metric, skip) {
  let qNorm = 0;
  for (let j = 0; j < d; j++) qNorm += q[j] * q[j];
  qNorm = Math.sqrt(qNorm) || 1;
  const heap = [];
  const swap = (a, b) => ([heap[a], heap[b]] = [heap[b], heap[a]]);
  for (let i = 0; i < n; i++) {
    if (skip(i) || !finiteRow(data, d, i)) continue;
    const distance = distanceTo(data, d, i, q, qNorm, metric);
    // Rows come in index order, so an equal distance never displaces the heap's top.
    if (heap.length === k && distance >= heap[0].distance) continue;
    if (heap.length === k) {
      heap[0] = { index: i, distance };
      for (let p = 0; ; ) {
        const l = 2 * p + 1;
        const r = l + 1;
        let m = p;
        if (l < k && after(heap[l], heap[m])) m = l;
        if (r < k && after(heap[r], heap[m])) m = r;
        if (m === p) break;
        swap(p, m);
        p = m;
      }
    } else {
      heap.push({ index: i, distance });
      for (let c = heap.length - 1; c > 0; ) {
        const p = (c - 1) >> 1;
        if (!after(heap[c], heap[p])) break;
        swap(p, c);
        c = p;
      }
    }
  }
  return heap.sort((a, b) => a.distance - b.distance || a.index - b.index);
}

const SIDES = ['left', 'right', 'up', 'down'];

/**
 * TensorBoard's custom projection, by the server kernel's rules (tests/cases/custom.json):
 * x along centroid(right) - centroid(left), y along centroid(up) - centroid(down), centroids
 * over the matching rows without NaN/Inf; coordinates are the rows minus their mean dotted
 * with the axes (NaN for a row with NaN/Inf). A side that matches nothing takes a seeded
 * standard-normal centroid (TensorBoard's random vector), side i the i-th d numbers of
 * standardNormal(4d, seed), as the server's fallback_centroids draws them.
 * Returns { coords (n x 2), matches: { left, right, up, down } }.
 */
export function customProjection(data, n, d, values, { left, right, up, down, regex, seed = 0 }) {
  if (values.length !== n) throw new RangeError(`the metadata column has ${values.length} values for ${n} points`);
  const queries = { left, right, up, down };
  const { finite, count } = finiteRows(data, n, d);
  if (!count) throw new RangeError('custom projection needs at least one row without NaN or Inf values');
  const centroids = {};
  const matches = {};
  let fallback = null;
  SIDES.forEach((side, s) => {
    const member = new Uint8Array(n);
    let matched = 0;
    for (const i of search(values, queries[side] ?? '', regex)) {
      if (finite[i]) {
        member[i] = 1;
        matched++;
      }
    }
    matches[side] = matched;
    if (matched) {
      centroids[side] = meanOf(data, n, d, member, matched);
    } else {
      fallback ??= standardNormal(SIDES.length * d, seed);
      centroids[side] = fallback.subarray(s * d, (s + 1) * d);
    }
  });
  const mean = meanOf(data, n, d, finite, count);
  const axis = (a, b) => centroids[b].map((v, j) => v - centroids[a][j]);
  const axes = [axis('left', 'right'), axis('down', 'up')];
  const coords = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    for (let a = 0; a < 2; a++) {
      const dir = axes[a];
      let s = 0;
      for (let j = 0; j < d; j++) s += (data[i * d + j] - mean[j]) * dir[j];
      coords[i * 2 + a] = finite[i] ? s : NaN;
    }
  }
  return { coords, matches };
}
