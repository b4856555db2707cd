// In-browser compute for uploaded data sets, which the server never sees: PCA, nearest
// neighbours, search and the custom (linear) projection. Server data sets use the REST API
// for all of these. Pure functions over typed arrays, usable from a worker and from node.

/** Seeded pseudo-random numbers in [0, 1): the same upload gives the same PCA signs. */
function random(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(rand) {
  return Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
}

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

/** Rows centred (and scaled to unit length when spherizing), NaN rows zeroed. */
function centeredRows(data, n, d, spherize) {
  const mean = new Float64Array(d);
  let count = 0;
  for (let i = 0; i < n; i++) {
    let finite = true;
    for (let j = 0; j < d; j++) if (!Number.isFinite(data[i * d + j])) finite = false;
    if (!finite) continue;
    count++;
    for (let j = 0; j < d; j++) mean[j] += data[i * d + j];
  }
  for (let j = 0; j < d; j++) mean[j] /= count || 1;
  const out = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    let norm = 0;
    let finite = true;
    for (let j = 0; j < d; j++) {
      const v = data[i * d + j] - mean[j];
      if (!Number.isFinite(v)) finite = false;
      out[i * d + j] = v;
      norm += v * v;
    }
    const scale = !finite ? 0 : spherize ? 1 / (Math.sqrt(norm) || 1) : 1;
    for (let j = 0; j < d; j++) out[i * d + j] = finite ? out[i * d + j] * scale : 0;
  }
  return out;
}

/**
 * PCA by randomized subspace iteration on at most `sampleLimit` rows, then every row
 * projected: { coords (n x k, row-major), k, varianceRatio[k], totalVariance }.
 * Rows with NaN/Inf get NaN coordinates.
 */
export function pca(data, n, d, { k = 10, spherize = false, sampleLimit = 50000, seed = 7 } = {}) {
  const x = centeredRows(data, n, d, spherize);
  const comps = Math.min(k, d, n);
  const p = Math.min(d, comps + 6);
  const rand = random(seed);
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
  const coords = new Float32Array(n * comps);
  for (let i = 0; i < n; i++) {
    let finite = true;
    for (let j = 0; j < d; j++) if (!Number.isFinite(data[i * d + j])) finite = false;
    for (let c = 0; c < comps; c++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += x[i * d + j] * w[c * d + j];
      coords[i * comps + c] = finite ? s : NaN;
    }
  }
  const varianceRatio = values.slice(0, comps).map((v) => (total > 0 ? Math.max(0, v) / total : 0));
  return { coords, k: comps, varianceRatio, totalVariance: total };
}

/** A case-insensitive matcher for a query: substring, or regex (throws on a bad one). */
export function matcher(query, regex) {
  if (regex) {
    const re = new RegExp(query, 'i');
    return (v) => re.test(v);
  }
  const q = query.toLowerCase();
  return (v) => v.toLowerCase().includes(q);
}

/** Indices whose value matches the query (empty query matches nothing). */
export function search(values, query, regex) {
  if (!query) return [];
  const test = matcher(query, regex);
  const out = [];
  for (let i = 0; i < values.length; i++) if (test(values[i])) out.push(i);
  return out;
}

/** Distance of row i to the query row under a metric; NaN rows give NaN. */
function distanceTo(data, d, i, q, qNorm, metric) {
  if (metric === 'cosine') {
    let dotp = 0;
    let norm = 0;
    for (let j = 0; j < d; j++) {
      const v = data[i * d + j];
      dotp += v * q[j];
      norm += v * v;
    }
    return 1 - dotp / (qNorm * (Math.sqrt(norm) || 1));
  }
  let sum = 0;
  for (let j = 0; j < d; j++) sum += (data[i * d + j] - q[j]) ** 2;
  return Math.sqrt(sum);
}

/**
 * The k nearest rows to row `index` ([{ index, distance }] ascending; the row itself and
 * rows with NaN excluded), by brute force with a bounded max-heap.
 */
export function nearestNeighbors(data, n, d, index, k, metric = 'cosine') {
  const q = data.subarray(index * d, index * d + d);
  let qNorm = 0;
  for (let j = 0; j < d; j++) qNorm += q[j] * q[j];
  qNorm = Math.sqrt(qNorm) || 1;
  const heap = [];
  const swap = (a, b) => ([heap[a], heap[b]] = [heap[b], heap[a]]);
  for (let i = 0; i < n; i++) {
    if (i === index) continue;
    const distance = distanceTo(data, d, i, q, qNorm, metric);
    if (!Number.isFinite(distance)) continue;
    if (heap.length === k && distance >= heap[0].distance) continue;
    if (heap.length === k) {
      heap[0] = { index: i, distance };
      for (let p = 0; ; ) {
        const l = 2 * p + 1;
        const r = l + 1;
        let m = p;
        if (l < k && heap[l].distance > heap[m].distance) m = l;
        if (r < k && heap[r].distance > heap[m].distance) m = r;
        if (m === p) break;
        swap(p, m);
        p = m;
      }
    } else {
      heap.push({ index: i, distance });
      for (let c = heap.length - 1; c > 0; ) {
        const p = (c - 1) >> 1;
        if (heap[p].distance >= heap[c].distance) break;
        swap(p, c);
        c = p;
      }
    }
  }
  return heap.sort((a, b) => a.distance - b.distance || a.index - b.index);
}

function centroid(data, d, indices) {
  const c = new Float64Array(d);
  for (const i of indices) for (let j = 0; j < d; j++) c[j] += data[i * d + j];
  for (let j = 0; j < d; j++) c[j] /= indices.length;
  return c;
}

/**
 * TensorBoard's custom projection: x along centroid(right) - centroid(left), y along
 * centroid(up) - centroid(down), both in the original space. An axis whose two queries do
 * not both match stays 0. Returns { coords (n x 2), matches: { left, right, up, down } }.
 */
export function customProjection(data, n, d, values, { left, right, up, down, regex }) {
  const queries = { left, right, up, down };
  const found = {};
  for (const [name, query] of Object.entries(queries)) found[name] = search(values, query, regex);
  const axis = (a, b) => {
    if (!found[a].length || !found[b].length) return null;
    const ca = centroid(data, d, found[a]);
    const cb = centroid(data, d, found[b]);
    return cb.map((v, j) => v - ca[j]);
  };
  const axes = [axis('left', 'right'), axis('down', 'up')];
  const coords = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    for (let a = 0; a < 2; a++) {
      const dir = axes[a];
      if (!dir) continue;
      let s = 0;
      for (let j = 0; j < d; j++) s += data[i * d + j] * dir[j];
      coords[i * 2 + a] = s;
    }
  }
  const matches = Object.fromEntries(Object.entries(found).map(([key, list]) => [key, list.length]));
  return { coords, matches };
}
