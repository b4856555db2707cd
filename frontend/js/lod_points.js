// Points in level-of-detail order from the server (GET /api/jobs/ID/lod/points): a slice of
// the order with the coordinates of its points, and the fit of those coordinates into the
// plot's unit cube that the whole set gets, from the bounds the server sends along.

/** Server data sets above this many points show a first slice before the whole projection. */
export const PREVIEW_ABOVE = 250000;
/** Points in that first slice: drawn at once, about 0.25 s of software GL. */
export const PREVIEW_POINTS = 200000;

/**
 * Ranks [offset, offset + count) of a done (or running: the server waits) job's level-of-
 * detail order over `axes`: { indices: Int32Array, coords: Float32Array (count x k), k,
 * axes, total, bounds: { lo, hi }, order: 'lod' }. `early`: while the server has still to
 * compute the order, an even random sample at once instead (order: 'random').
 */
export async function fetchLodPoints(api, jobId, axes, offset, count, early = false) {
  const response = await api._fetch(`jobs/${encodeURIComponent(jobId)}/lod/points`, {
    params: { axes: axes.join(','), offset, count, early: early || undefined },
  });
  const buffer = await response.arrayBuffer();
  const got = Number(response.headers.get('X-Count'));
  const used = response.headers.get('X-Axes').split(',').map(Number);
  return {
    indices: new Int32Array(buffer, 0, got),
    coords: new Float32Array(buffer, got * 4, got * used.length),
    k: used.length,
    axes: used,
    total: Number(response.headers.get('X-Total')),
    bounds: JSON.parse(response.headers.get('X-Bounds')),
    order: response.headers.get('X-Order'),
  };
}

/**
 * Positions (count x 3) of a slice, centred and scaled as geometry.fitPositions does the
 * whole set (so the picture does not jump when it arrives); non-finite rows at the origin.
 */
export function fitSlice({ coords, k, bounds }) {
  const count = coords.length / k;
  let half = 0;
  const mid = [0, 0, 0];
  for (let a = 0; a < k; a++) {
    if (bounds.hi[a] < bounds.lo[a]) continue;
    mid[a] = (bounds.lo[a] + bounds.hi[a]) / 2;
    half = Math.max(half, (bounds.hi[a] - bounds.lo[a]) / 2);
  }
  const scale = half > 0 ? 1 / half : 1;
  const positions = new Float32Array(count * 3);
  for (let r = 0; r < count; r++) {
    let finite = true;
    for (let a = 0; a < k; a++) if (!Number.isFinite(coords[r * k + a])) finite = false;
    if (!finite) continue;
    for (let a = 0; a < k; a++) positions[r * 3 + a] = (coords[r * k + a] - mid[a]) * scale;
  }
  return positions;
}
