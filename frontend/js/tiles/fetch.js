// Points in level-of-detail order from the server: its tiles (GET /api/jobs/ID/tiles/Z/X/Y:
// a quadtree cell's next points in LOD order, docs/ARCHITECTURE.md "Tiles") with the
// coordinates of their points, and the fit of those coordinates into the plot's unit cube
// that the whole set gets, from the bounds the server sends along.

/** Server data sets above this many points show a first slice before the whole projection. */
export const PREVIEW_ABOVE = 250000;

/**
 * One tile of a job's tiles over `axes` (the server waits for a running job): { indices:
 * Int32Array (row ids, LOD order), coords: Float32Array (count x k), codes: Int32Array (with
 * `column`: its dictionary codes) or null, k, axes, total, bounds, order }. `early`: while
 * the server has still to compute the tiles, an even random sample
 * of the tile's cell at once instead (order: 'random').
 */
export async function fetchTile(api, jobId, axes, z, x, y, early = false, column = null) {
  const path = `jobs/${encodeURIComponent(jobId)}/tiles/${z}/${x}/${y}`;
  const response = await api._fetch(path, { params: { axes: axes.join(','), early: early || undefined, column: column ?? undefined } });
  const buffer = await response.arrayBuffer();
  const got = Number(response.headers.get('X-Count'));
  const used = response.headers.get('X-Axes').split(',').map(Number);
  return {
    indices: new Int32Array(buffer, 0, got), // uint32 on the wire; row ids stay below 2^31 here
    coords: new Float32Array(buffer, got * 4, got * used.length),
    codes: column === null ? null : new Int32Array(buffer, got * 4 * (1 + used.length), got),
    k: used.length,
    axes: used,
    total: Number(response.headers.get('X-Total')),
    bounds: JSON.parse(response.headers.get('X-Bounds')),
    order: response.headers.get('X-Order'),
  };
}

/**
 * Every tile of level `z` (4^z requests side by side) as one slice: an even sample of the
 * whole picture, at most 65536 points a tile. order: 'lod' when every tile came from the
 * computed tiles, else 'random' (see fetchTile's `early`).
 */
export async function fetchLevel(api, jobId, axes, z, early = true) {
  const wanted = [];
  for (let x = 0; x < 1 << z; x++) for (let y = 0; y < 1 << z; y++) wanted.push([x, y]);
  return mergeSlices(await Promise.all(wanted.map(([x, y]) => fetchTile(api, jobId, axes, z, x, y, early))));
}

/** Slices (tiles, levels) concatenated in order into one. */
export function mergeSlices(slices) {
  const count = slices.reduce((sum, t) => sum + t.indices.length, 0);
  const { k } = slices[0];
  const indices = new Int32Array(count);
  const coords = new Float32Array(count * k);
  let at = 0;
  for (const t of slices) {
    indices.set(t.indices, at);
    coords.set(t.coords, at * k);
    at += t.indices.length;
  }
  return { ...slices[0], indices, coords, order: slices.every((t) => t.order === 'lod') ? 'lod' : 'random' };
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
