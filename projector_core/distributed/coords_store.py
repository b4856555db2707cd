"""A projection's coordinates written by the workers, shard by shard, to a zarr under the cache.

At 100M points a projection's N x 10 float32 is 4 GB: the server must not hold it. So on a
cluster each worker projects the shards it holds and writes their rows of one ``coords``
array (one zarr chunk per shard: no two tasks write the same chunk), and sends back only
the shard's per-column minimum, maximum and finite rows. The server keeps a
:class:`StoredCoordinates`, which reads rows on demand; a whole-array read above
``WHOLE_BYTES`` is :class:`~projector_core.distributed.errors.TooLarge` (a 413 "too large:
use tiles"), never an N-sized allocation. The path must be on storage the workers share.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.distributed.errors import TooLarge
from projector_core.distributed.shard_tasks import HeldShard, held, shard_project
from projector_core.formats.chunked import Shard

STORES_KEPT = 16  # projections whose stores stay on disk
# The most of a projection's coordinates read whole (a frame, ``/result``): the page's 10M x 3
# fits. A stored result above it is never read whole here, a cluster's t-SNE/UMAP sends thin
# frames instead (``sample_fit.py``), and the page is sent its tiles (``tiles/view.py``).
WHOLE_BYTES = 256 * 2**20


def new_store(root: Path, name: str) -> Path:
    """A fresh folder for one projection's stores under ``root``; the oldest beyond
    ``STORES_KEPT`` are removed (their jobs were forgotten long before)."""
    path = Path(root) / f"{name}-{uuid.uuid4().hex[:12]}"
    path.mkdir(parents=True, exist_ok=False)
    older = sorted((p for p in Path(root).iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    for stale in older[:-STORES_KEPT]:
        shutil.rmtree(stale, ignore_errors=True)
    return path


def create_coords(store: Path, n: int, columns: int, shard_rows: int) -> str:
    """The empty ``coords`` array (metadata only), chunked one shard a chunk; its path."""
    import zarr

    path = str(Path(store) / "coords")
    zarr.create_array(store=path, shape=(n, columns), chunks=(max(1, shard_rows), columns),
                      dtype="<f4", compressors=None, fill_value=np.nan, zarr_format=3)
    return path


@dataclass(frozen=True)
class ShardStats:
    """What a shard's coordinates tell the server: finite rows and their range per column."""

    finite: int
    lo: np.ndarray  # float64 [c], +inf when no finite row
    hi: np.ndarray  # float64 [c], -inf when no finite row


def write_rows(path: str, start: int, coordinates: np.ndarray) -> ShardStats:
    """Write a shard's coordinates at ``start`` (a worker calls this); their stats back.
    A row with any NaN/Inf is unplaced (all NaN), as the single machine's result."""
    import zarr

    coordinates = np.asarray(coordinates, np.float32)
    placeable = np.isfinite(coordinates).all(axis=1)
    if not placeable.all():
        coordinates = coordinates.copy()
        coordinates[~placeable] = np.nan
    zarr.open_array(store=path, mode="r+")[start:start + coordinates.shape[0]] = coordinates
    inside = coordinates[placeable]
    columns = coordinates.shape[1]
    lo = inside.min(axis=0).astype(np.float64) if inside.size else np.full(columns, np.inf)
    hi = inside.max(axis=0).astype(np.float64) if inside.size else np.full(columns, -np.inf)
    return ShardStats(int(placeable.sum()), lo, hi)


def project_into(item: HeldShard | Shard, path: str, *args: Any) -> ShardStats:
    """:func:`shard_project` of a held shard, written to the store where it lies."""
    part = held(item)
    return write_rows(path, part.start, shard_project(part, *args))


def project_on_workers(cluster: Any, vectors: Any, store_name: str, *args: Any
                       ) -> StoredCoordinates:
    """Every shard projected by ``shard_project(*args)`` on the worker holding it, written to
    a new store under the cluster's ``store_dir``; only per-shard stats come back."""
    shards = vectors.shards()
    columns = args[0].shape[1]
    path = create_coords(new_store(cluster.store_dir, store_name), vectors.shape[0], columns,
                         shards[0].stop - shards[0].start)
    stats = cluster.map(project_into, cluster.held(vectors), path, *args)
    return StoredCoordinates(path, (vectors.shape[0], columns), combine(stats))


def combine(stats: list[ShardStats]) -> ShardStats:
    return ShardStats(sum(s.finite for s in stats), np.min([s.lo for s in stats], axis=0),
                      np.max([s.hi for s in stats], axis=0))


class StoredCoordinates:
    """A projection's N x c float32 coordinates in a zarr the workers wrote, read by rows.

    Quacks like the read-only array a result holds (``shape``, ``dtype``, row and column
    indexing); ``np.asarray`` reads it whole only below ``WHOLE_BYTES``.
    """

    dtype = np.dtype("<f4")
    ndim = 2
    stored = True  # the result lives on disk: not copied into the result cache

    def __init__(self, path: str, shape: tuple[int, int], stats: ShardStats) -> None:
        self.path = path
        self.shape = shape
        self.stats = stats
        self.tiles: str | None = None  # the tile store built from it, once built

    @property
    def nbytes(self) -> int:
        return self.shape[0] * self.shape[1] * 4

    def __len__(self) -> int:
        return self.shape[0]

    def _array(self) -> Any:
        import zarr

        return zarr.open_array(store=self.path, mode="r")

    def __getitem__(self, key: Any) -> np.ndarray:
        rows, columns = key if isinstance(key, tuple) else (key, slice(None))
        if isinstance(rows, slice) and rows == slice(None) and self.nbytes > WHOLE_BYTES:
            raise self.too_large()
        if isinstance(rows, np.ndarray | list):
            rows = np.asarray(rows)
            if rows.dtype == bool:
                rows = np.flatnonzero(rows)
            array = self._array()
            picked = array.get_orthogonal_selection((rows.astype(np.int64), slice(None)))
            return np.asarray(picked)[:, columns]
        return np.asarray(self._array()[rows])[..., columns] if not isinstance(rows, int) \
            else np.asarray(self._array()[rows])[columns]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self.nbytes > WHOLE_BYTES:
            raise self.too_large()
        whole = np.asarray(self._array()[:])
        return whole if dtype is None else whole.astype(dtype, copy=False)

    def too_large(self) -> TooLarge:
        return TooLarge(f"too large: use tiles ({self.shape[0]:,} x {self.shape[1]} "
                        f"coordinates, {self.nbytes / 2**30:.1f} GiB, stay on disk: "
                        "GET /api/jobs/ID/tiles)")
