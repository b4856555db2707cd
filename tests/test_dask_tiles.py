"""Tiles built by Dask workers from coordinates they wrote equal the single machine's tiles.

A LocalCluster of two worker processes runs PCA over a zarr (the coordinates go to a store
under the cache, never to this process) and builds the tiles level by level. What is true,
and asserted:

- exactly: ``build_tiles`` (the single machine's tiles) over the order of the workers' keys
  gives the same tiles, the same rows in each, the same coordinates and codes;
- against the single machine's own LOD order (``lod_order``, stratified per fine cell) the
  tiles differ in which rows they pick, by binomial noise: the workers draw each point's
  rank share as a uniform number. Both hold every row once, lead with one point of every
  non-empty coarse cell, and give each region of the plane the same share of the root tile
  to within five standard deviations of a binomial draw.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")

from projector_core.distributed.cluster import Cluster  # noqa: E402
from projector_core.distributed.coords_store import StoredCoordinates  # noqa: E402
from projector_core.distributed.errors import TooLarge  # noqa: E402
from projector_core.distributed.pca import sharded_pca  # noqa: E402
from projector_core.formats import chunked  # noqa: E402
from projector_core.formats.chunked import open_chunked  # noqa: E402
from projector_core.formats.chunked_writer import write_zarr  # noqa: E402
from projector_core.tiles import shard_keys  # noqa: E402
from projector_core.tiles.build import MAX_LEVEL, build_tiles  # noqa: E402
from projector_core.tiles.order import lod_order  # noqa: E402
from projector_core.tiles.sharded_build import build_tile_store  # noqa: E402
from projector_core.tiles.stored import ZarrTileSource, stored_tile_source  # noqa: E402

pytestmark = pytest.mark.slow
N, D = 120_000, 16
BUDGET = 4096  # small: the quadtree goes several levels deep at this N
CATEGORIES = ["alpha", "beta", "gamma"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    root = tmp_path_factory.mktemp("tiles")
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 3, N)
    data = (rng.standard_normal((N, D)) + 8 * np.eye(D)[labels] * (np.arange(N) % 7 != 0)[:, None])
    data = data.astype(np.float32)
    data[17] = np.nan
    write_zarr(root / "v.zarr", data, chunk_rows=4096)
    codes_path = str(root / "labels.zarr")
    zarr.create_array(store=codes_path, shape=(N,), chunks=(4096,), dtype="<i4")[:] = labels
    mp = pytest.MonkeyPatch()
    mp.setattr(chunked, "SHARD_BYTES", 4096 * D * 4 * 3)  # 10 shards
    cluster = Cluster("local:2", timeout=300, store_dir=root / "cluster")
    try:
        vectors = open_chunked(root / "v.zarr", "v.zarr")
        result = sharded_pca(vectors, cluster, 3)
        coordinates = result.coordinates
        assert isinstance(coordinates, StoredCoordinates)
        shard_rows = vectors.shards()[0].stop
        path = build_tile_store(coordinates, shard_rows, [0, 1], cluster,
                                {"label": (codes_path, CATEGORIES)}, budget=BUDGET)
        yield coordinates, shard_rows, ZarrTileSource(path), labels, data
    finally:
        cluster.close()
        mp.undo()


def _keys(coordinates: StoredCoordinates, shard_rows: int, box: dict) -> np.ndarray:
    """The workers' keys, drawn again here by the same per-shard functions."""
    plans = [shard_keys.ShardPlan(coordinates.path, s, min(N, s + shard_rows), (0, 1),
                                 tuple(box["lo"]), tuple(box["hi"]), 0)
             for s in range(0, N, shard_rows)]
    leads = shard_keys.choose_leads([shard_keys.shard_leads(p) for p in plans])
    keys = np.concatenate([shard_keys.keys(p, *leads).key for p in plans])
    shard_keys.forget(coordinates.path)
    return keys


def _stored(source: ZarrTileSource, column: str | None = None) -> list[tuple]:
    return [(tuple(t[:3]), *source.read(*t[:3], column=column))
            for t in source.manifest()["tiles"]]


def test_the_workers_tiles_are_build_tiles_over_their_order(built):
    coordinates, shard_rows, source, labels, _data = built
    plane = np.asarray(coordinates[:, :2])
    assert np.isnan(plane[17]).all() and np.isfinite(np.delete(plane, 17, axis=0)).all()
    manifest = source.manifest()
    keys = _keys(coordinates, shard_rows, manifest["box"])
    reference = build_tiles(plane, np.lexsort((np.arange(N), keys)), BUDGET)
    assert manifest["total"] == N and manifest["budget"] == BUDGET and manifest["axes"] == [0, 1]
    assert manifest["box"] == {"lo": list(reference.lo), "hi": list(reference.hi)}
    assert np.array_equal(np.array([t[:3] for t in manifest["tiles"]]), reference.tiles)
    assert np.array_equal(np.array([t[3] for t in manifest["tiles"]]), reference.counts)
    assert max(t[0] for t in manifest["tiles"]) >= 3
    for (z, x, y), rows, coords, codes in _stored(source, "label"):
        where = reference.find(z, x, y)
        assert np.array_equal(rows, reference.rows[where]), (z, x, y)
        np.testing.assert_array_equal(coords, plane[rows])
        assert np.array_equal(codes, labels[rows])
    assert source.codes_dictionary("label") == CATEGORIES
    coordinates.tiles = source.path  # as the job's result carries them
    assert stored_tile_source(coordinates, [0, 1]).manifest() == manifest
    assert stored_tile_source(coordinates, [1, 2]) is None
    assert stored_tile_source(np.zeros((3, 2)), [0, 1]) is None
    assert source.read(MAX_LEVEL, 0, 0) is None
    with pytest.raises(KeyError, match="label"):
        source.read(0, 0, 0, column="colour")


def test_against_the_single_machine_order_the_same_points_up_to_binomial_noise(built):
    coordinates, _shard_rows, source, _labels, _data = built
    plane = np.asarray(coordinates[:, :2])
    single = build_tiles(plane, lod_order(plane), BUDGET)
    stored = _stored(source)
    everyone = np.sort(np.concatenate([rows for _t, rows, _c, _k in stored]))
    assert np.array_equal(everyone, np.arange(N))  # every row once, as the single machine's
    assert np.array_equal(np.sort(single.rows), everyone)
    root = stored[0][1]
    assert stored[0][0] == (0, 0, 0) and root.size == BUDGET == single.find(0, 0, 0).stop
    # The root's share of each level-2 cell: binomial (workers) against stratified (single).
    box_lo, box_hi = np.array(single.lo), np.array(single.hi)
    finite = np.isfinite(plane).all(axis=1)
    cell = np.zeros(N, np.int64)
    scaled = np.clip(((plane[finite] - box_lo) / (box_hi - box_lo) * 4).astype(int), 0, 3)
    cell[finite] = scaled[:, 0] * 4 + scaled[:, 1]
    ours = np.bincount(cell[root], minlength=16)
    theirs = np.bincount(cell[single.rows[single.find(0, 0, 0)]], minlength=16)
    share = np.bincount(cell, minlength=16) / N
    spread = 5 * np.sqrt(BUDGET * share * (1 - share)) + 2
    assert (np.abs(ours - theirs) <= spread + np.abs(theirs - BUDGET * share)).all(), \
        (ours, theirs, BUDGET * share)


def test_a_stored_result_is_read_by_rows_and_refused_whole_when_large(built, monkeypatch):
    coordinates, _shard_rows, _source, _labels, _data = built
    from projector_core.distributed import coords_store

    assert coordinates[5:9].shape == (4, 3)
    assert coordinates[np.array([3, 1])].shape == (2, 3)
    monkeypatch.setattr(coords_store, "WHOLE_BYTES", 1024)
    with pytest.raises(TooLarge, match="too large: use tiles"):
        np.asarray(coordinates)
    assert Path(coordinates.path).is_dir()
