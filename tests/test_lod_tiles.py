"""Level-of-detail tiles: every point once, each tile its cell's next points in LOD order; the
routes serve them; the default view is prepared as soon as the catalog has loaded."""

from __future__ import annotations

import json
import time

import httpx
import numpy as np

from projector_core.data.catalog import Catalog
from projector_core.jobs.job import JobStatus
from projector_core.jobs.priority import Priority
from projector_core.kernels.backend import get_backend
from projector_core.projection.compute import request_key
from projector_core.projection.default_request import projection_request
from projector_core.service import ProjectionService
from projector_core.tiles import view
from projector_core.tiles.build import build_tiles
from projector_core.tiles.order import lod_order
from tests.builders import write_pbtxt_run
from tests.test_lod import blobs, pca_job, write_points


def cell_of(coords: np.ndarray, tiles, z: int) -> np.ndarray:
    """Each point's (x, y) cell at level z of the tile set's box, as the kernel bins them."""
    lo, hi = np.array(tiles.lo), np.array(tiles.hi)
    side = 1 << 15
    fine = np.clip((coords[:, :2].astype(np.float64) - lo) * (side / (hi - lo)), 0, side - 1)
    return fine.astype(np.int64) >> (15 - z)


def test_tiles_hold_every_point_once_in_lod_order_within_budget():
    coords, _ = blobs(20_000)
    order = lod_order(coords)
    tiles = build_tiles(coords, order, budget=500)
    assert np.array_equal(np.sort(tiles.rows), np.arange(20_000))
    root = tiles.find(0, 0, 0)
    assert np.array_equal(tiles.rows[root], order[:500])  # the root: the head of the order
    rank = np.empty(20_000, np.int64)
    rank[order] = np.arange(20_000)
    placed = np.zeros(20_000, bool)
    for (z, x, y), start, count in zip(tiles.tiles, tiles.offsets, tiles.counts, strict=True):
        rows = tiles.rows[start:start + count]
        assert 0 < count <= 500
        assert (cell_of(coords[rows], tiles, z) == [x, y]).all()  # inside the tile's cell
        assert (np.diff(rank[rows]) > 0).all()  # in LOD order
        # The cell's next points: nothing unplaced in the cell comes before the tile's last.
        inside = (cell_of(coords, tiles, z) == [x, y]).all(axis=1) & ~placed
        left = np.flatnonzero(inside)
        assert rank[left[~np.isin(left, rows)]].min(initial=20_000) > rank[rows].max()
        placed[rows] = True
    assert placed.all()


def test_tiles_keep_missing_points():
    coords, _ = blobs(3000)
    coords[[5, 9]] = np.nan
    tiles = build_tiles(coords, lod_order(coords), budget=100)
    assert np.array_equal(np.sort(tiles.rows), np.arange(3000))


def read_tile(answer: httpx.Response, k: int, with_codes: bool = False):
    count = int(answer.headers["X-Count"])
    rows = np.frombuffer(answer.content[:count * 4], "<u4")
    coords = np.frombuffer(answer.content[count * 4:count * 4 * (1 + k)], "<f4").reshape(count, k)
    codes = np.frombuffer(answer.content[count * 4 * (1 + k):], "<i4") if with_codes else None
    return rows, coords, codes


def test_tile_routes_serve_the_index_and_every_point(serve, tmp_path):
    labels = [f"c{i % 7}" for i in range(3000)]
    write_points(tmp_path / "logs" / "run", 3000, labels)
    url = serve(tmp_path / "logs")
    request = {"run": "run", "embedding": "points", "method": "pca", "dims": 3}
    job = httpx.post(f"{url}/api/projections", json=request).json()["job"]
    index = httpx.get(f"{url}/api/jobs/{job}/tiles", timeout=60).json()  # waits for the job
    assert index["axes"] == [0, 1] and index["total"] == 3000
    answer = httpx.post(f"{url}/api/projections?wait=true", json=request,
                        headers={"Accept": "application/octet-stream"}, timeout=60)
    coords = np.frombuffer(answer.content, "<f4").reshape(3000, -1)
    np.testing.assert_allclose(index["bounds"]["lo"], coords.min(0)[:2], rtol=1e-6)
    expected = build_tiles(coords[:, :2], lod_order(coords[:, :2]))
    assert index["tiles"] == np.column_stack([expected.tiles, expected.counts]).tolist()
    seen = []
    for z, x, y, count in index["tiles"]:
        tile = httpx.get(f"{url}/api/jobs/{job}/tiles/{z}/{x}/{y}",
                         params={"axes": "0,1,2", "column": "label"})
        assert tile.headers["X-Axes"] == "0,1" and int(tile.headers["X-Count"]) == count
        rows, xy, codes = read_tile(tile, 2, with_codes=True)
        np.testing.assert_array_equal(xy, coords[rows][:, :2])
        column = httpx.get(f"{url}/api/metadata/column",
                           params={"run": "run", "embedding": "points", "column": "label"})
        head = int(column.headers["X-Dictionary-Bytes"])
        dictionary = json.loads(column.content[:head])
        assert [dictionary[c] for c in codes] == [labels[r] for r in rows]
        seen.append(rows)
    assert np.array_equal(np.sort(np.concatenate(seen)), np.arange(3000))
    empty = httpx.get(f"{url}/api/jobs/{job}/tiles/9/511/0")
    assert empty.status_code == 200 and empty.headers["X-Count"] == "0" and not empty.content
    assert httpx.get(f"{url}/api/jobs/{job}/tiles/1/2/0").status_code == 422
    assert httpx.get(f"{url}/api/jobs/{job}/tiles/0/0/0",
                     params={"column": "nope"}).status_code == 422
    assert httpx.get(f"{url}/api/jobs/nope/tiles").status_code == 404


def test_default_view_is_prepared_once_the_catalog_has_loaded(tmp_path):
    write_points(tmp_path / "logs" / "run", 2000, [f"c{i % 3}" for i in range(2000)])
    catalog = Catalog(tmp_path / "logs", cache_dir=tmp_path / "cache")
    catalog.refresh()
    service = ProjectionService.standalone(catalog)
    jobs, lod = service.jobs, service.lod
    try:
        service.prepare_default_view()
        embedding = catalog.embedding("run", "points")
        # The page's request (projecting.js requestFor('pca'): dims 3, spherize below 50
        # dims) finds the prepared job done, its order and tiles computed.
        request = projection_request(embedding, "pca")
        assert request.model_dump(include={"method", "dims"}) == {"method": "pca", "dims": 3}
        assert request.params.spherize is False
        job = jobs.find(request_key(request, embedding, get_backend("cpu")))
        assert job is not None and job.status is JobStatus.DONE
        assert lod.peek_order(job, [0, 1]) is not None
        assert "label" in embedding.metadata()._codes
        # Nobody asked for it: it was background work, until the page's request finds it.
        assert job.priority is Priority.BACKGROUND
        assert service.start(request, embedding) is job
        assert job.priority is Priority.REQUESTED
    finally:
        service.stop()


def test_server_prepares_the_default_views_tiles_before_any_page_asks(serve, tmp_path,
                                                                      monkeypatch):
    """Under uvicorn, served as ``projector serve`` serves (the view prepared), nobody asking: the
    default PCA job appears and finishes, and its tiles are built, which an early tile
    request shows (it never builds them: it answers the computed tile once they exist).
    The page shows sets above 2M points from tiles: here the bound is lowered to 1000."""
    monkeypatch.setattr(view, "TILES_ABOVE", 1000)
    write_points(tmp_path / "logs" / "run", 3000, [f"c{i % 3}" for i in range(3000)])
    url = serve(tmp_path / "logs")
    deadline = time.monotonic() + 120
    done: list[dict] = []
    while not done and time.monotonic() < deadline:
        done = [j for j in httpx.get(f"{url}/api/jobs").json()["jobs"]
                if j["method"] == "pca" and j["status"] == "done"]
        time.sleep(0.1)
    assert len(done) == 1, "the default view's projection was not started on load"
    assert done[0]["priority"] == "background"  # the server's guess, yielding to requests
    tile = None
    while time.monotonic() < deadline:
        tile = httpx.get(f"{url}/api/jobs/{done[0]['id']}/tiles/0/0/0",
                         params={"axes": "0,1", "early": "true", "column": "label"})
        if tile.headers["X-Order"] == "lod":
            break
        time.sleep(0.1)
    assert tile is not None and tile.headers["X-Order"] == "lod"
    assert tile.headers["Cache-Control"].endswith("immutable")
    # The page's own request (projecting.js's default: the table's) finds that same job.
    names = {"run": "run", "embedding": "points"}
    table = httpx.get(f"{url}/api/projections/methods", params=names).json()
    request = {**names, "method": "pca", **table["methods"]["pca"]["default_request"]}
    assert request["params"]["components"] == 10, "the page picks its axes among ten"
    assert httpx.post(f"{url}/api/projections", json=request).json()["job"] == done[0]["id"]


def test_early_tiles_sample_their_cell_until_the_tiles_are_computed(serve, tmp_path):
    write_points(tmp_path / "logs" / "run", 3000, ["a"] * 3000)
    url = serve(tmp_path / "logs")
    job, coords = pca_job(url, 3000)
    early = httpx.get(f"{url}/api/jobs/{job}/tiles/1/1/0", params={"early": "true"})
    assert early.headers["X-Order"] == "random"
    rows, xy, _ = read_tile(early, 2)
    mid = (coords.min(0) + coords.max(0)) / 2
    assert len(rows) > 300 and (xy[:, 0] >= mid[0]).all() and (xy[:, 1] < mid[1]).all()
    expected = ((coords[:, 0] >= mid[0]) & (coords[:, 1] < mid[1])).sum()
    assert abs(len(rows) - expected) <= 2  # the whole quadrant (the sample is every point)
    np.testing.assert_array_equal(xy, coords[rows][:, :2])
    httpx.get(f"{url}/api/jobs/{job}/tiles", timeout=60)  # computes them
    ready = httpx.get(f"{url}/api/jobs/{job}/tiles/1/1/0", params={"early": "true"})
    assert ready.headers["X-Order"] == "lod"


def test_early_tiles_of_a_level_split_one_random_sample_by_cell():
    from projector_core.tiles.build import early_tile, plane_box

    coords, _ = blobs(20_000)
    lo, hi = plane_box(coords)
    root = early_tile(coords, [0, 1], lo, hi, 0, 0, 0, 1000)
    assert 950 < len(root) <= 1000 and len(set(root.tolist())) == len(root)
    quadrants = [early_tile(coords, [0, 1], lo, hi, 1, x, y, 1000)
                 for x in (0, 1) for y in (0, 1)]
    together = np.concatenate(quadrants)
    assert 3500 < len(together) <= 4000 and len(set(together.tolist())) == len(together)
    # One sample split by cell: the same rows whichever quadrant asks.
    again = early_tile(coords, [0, 1], lo, hi, 1, 1, 1, 1000)
    assert np.array_equal(again, quadrants[3])
    mid = (lo + hi) / 2
    for (x, y), rows in zip([(0, 0), (0, 1), (1, 0), (1, 1)], quadrants, strict=True):
        assert ((coords[rows, 0] >= mid[0]) == bool(x)).all()
        assert ((coords[rows, 1] >= mid[1]) == bool(y)).all()


def test_tiles_and_their_queries_default_to_the_two_axes_of_the_quadtree(serve, tmp_path):
    """A 3-D PCA's tiles asked without ``axes`` are over its first two columns (the quadtree's,
    what a cluster's workers tile), not three; pick and search read the same tiles."""
    rng = np.random.default_rng(1)
    write_pbtxt_run(
        tmp_path / "logs" / "run",
        'embeddings { tensor_name: "points" tensor_path: "t.bytes" tensor_shape: 500 '
        'tensor_shape: 8 metadata_path: "meta.tsv" }',
        {"t.bytes": rng.normal(size=(500, 8)).astype("<f4").tobytes(),
         "meta.tsv": "label\tgroup\n" + "".join(f"c{i % 3}\tg{i % 2}\n" for i in range(500))})
    url = serve(tmp_path / "logs")
    job, coords = pca_job(url, 500, dims=3)
    tile = httpx.get(f"{url}/api/jobs/{job}/tiles/0/0/0")
    assert tile.headers["X-Axes"] == "0,1"
    rows, xy, _ = read_tile(tile, 2)
    np.testing.assert_array_equal(xy, coords[rows][:, :2])
    x, y = coords[7, :2]
    pick = httpx.get(f"{url}/api/jobs/{job}/pick", params={"x": x, "y": y, "radius": 1e-6})
    assert pick.json()["row"] == 7
    found = httpx.get(f"{url}/api/jobs/{job}/search", params={"column": "label", "query": "c1"})
    assert found.json()["count"] == sum(1 for i in range(500) if i % 3 == 1)
