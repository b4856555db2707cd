"""A categorical column stored beside a zarr as int32 codes (``formats/code_columns.py``) is
one of the embedding's metadata columns for all a tiled view asks, through a real server
(uvicorn) without a cluster: listed and chosen as the label, counted a chunk at a time,
carried by the in-memory tiles, searched over every point; the column route answers its
codes, and a whole TSV is spelled out only for a set not shown from tiles."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

from projector import Client

pytest.importorskip("zarr")

from projector_core.data.catalog import Catalog
from projector_core.formats.chunked_writer import write_zarr
from projector_core.formats.code_columns import write_code_column
from projector_core.service import ProjectionService

N = 3000
KINDS = ["cat", "dog", "bird", "fish", "cow"]
NAMES = {"run": ".", "embedding": "v"}


def _data(tmp_path):
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(N, 6)).astype(np.float32)
    codes = rng.choice(len(KINDS), N, p=[0.4, 0.3, 0.15, 0.1, 0.05]).astype(np.int32)
    path = write_zarr(tmp_path / "v.zarr", vectors, chunk_rows=700)
    write_code_column(path, "kind", codes, KINDS, N, chunk_rows=512)  # 6 chunks, the last short
    return path, codes


def test_a_stored_column_is_listed_counted_tiled_and_searched(serve, tmp_path):
    path, codes = _data(tmp_path)
    base = serve(path)
    embedding = httpx.get(f"{base}/api/runs").json()[0]["embeddings"][0]
    assert embedding["metadata_columns"] == ["kind"]
    assert embedding["label_column"] == "kind"  # the first non-numeric column

    counts = httpx.get(f"{base}/api/metadata/column/counts", params={**NAMES, "column": "kind"})
    assert counts.status_code == 200, counts.text
    assert counts.json() == {"column": "kind", "values": 5, "dictionary": KINDS,
                             "counts": np.bincount(codes, minlength=5).tolist()}

    job = Client(base, timeout=120).projection(".", "v", "pca", dims=2, timeout=120).job
    manifest = httpx.get(f"{base}/api/jobs/{job}/tiles", params={"axes": "0,1"},
                         timeout=60).json()
    seen = 0
    for z, x, y, count in manifest["tiles"]:
        tile = httpx.get(f"{base}/api/jobs/{job}/tiles/{z}/{x}/{y}",
                         params={"axes": "0,1", "column": "kind"}, timeout=60)
        assert tile.status_code == 200, tile.text
        rows = np.frombuffer(tile.content[:4 * count], "<u4")
        carried = np.frombuffer(tile.content[4 * count + 8 * count:], "<i4")
        np.testing.assert_array_equal(carried, codes[rows])
        seen += count
    assert seen == N

    for value, code in (("bird", 2), ("fish", 3)):
        found = httpx.get(f"{base}/api/jobs/{job}/search", params={
            "column": "kind", "query": value, "limit": N}).json()
        assert found["codes"] == [code]
        assert found["count"] == int((codes == code).sum())
        assert found["rows"] == np.flatnonzero(codes == code).tolist()
        whole = httpx.get(f"{base}/api/search", params={**NAMES, "column": "kind",
                                                           "query": value}).json()
        assert whole["indices"] == found["rows"]


def test_whole_column_routes_answer_the_stored_codes(serve, tmp_path):
    path, codes = _data(tmp_path)
    base = serve(path)
    column = httpx.get(f"{base}/api/metadata/column", params={**NAMES, "column": "kind"})
    assert column.status_code == 200, column.text
    assert column.headers["x-kind"] == "categorical"
    head = int(column.headers["x-dictionary-bytes"])
    assert json.loads(column.content[:head]) == KINDS
    np.testing.assert_array_equal(np.frombuffer(column.content[head:], "<i4"), codes)
    again = httpx.get(f"{base}/api/metadata/column", params={**NAMES, "column": "kind"},
                      headers={"If-None-Match": column.headers["etag"]})
    assert again.status_code == 304
    numeric = httpx.get(f"{base}/api/metadata/column",
                        params={**NAMES, "column": "kind", "kind": "numeric"})
    assert numeric.status_code == 422 and "not numeric" in numeric.text
    unknown = httpx.get(f"{base}/api/metadata/column/counts", params={**NAMES, "column": "x"})
    assert unknown.status_code == 422 and "columns: kind" in unknown.text
    # A set this small is shown whole: the TSV spells the stored column out.
    tsv = httpx.get(f"{base}/api/metadata", params=NAMES)
    assert tsv.status_code == 200, tsv.text
    assert tsv.text.splitlines() == ["kind", *(KINDS[c] for c in codes)]


def test_a_set_shown_from_tiles_counts_its_stored_column_but_sends_no_tsv(serve, tmp_path):
    from projector_core.tiles.view import TILES_ABOVE

    n = TILES_ABOVE + 1
    codes = (np.arange(n, dtype=np.int64) * 7 % 5).astype(np.int32)
    path = write_zarr(tmp_path / "v.zarr", np.zeros((n, 2), np.float32), chunk_rows=1 << 20)
    write_code_column(path, "kind", codes, KINDS, n, chunk_rows=300_000)
    base = serve(path)
    counts = httpx.get(f"{base}/api/metadata/column/counts", params={**NAMES, "column": "kind"},
                       timeout=60)
    assert counts.json()["counts"] == np.bincount(codes, minlength=5).tolist()
    tsv = httpx.get(f"{base}/api/metadata", params=NAMES, timeout=60)
    assert tsv.status_code == 413
    assert "shown from tiles" in tsv.text and "(kind)" in tsv.text


def test_a_code_outside_the_dictionary_is_a_422_naming_the_row_and_file(serve, tmp_path):
    path, codes = _data(tmp_path)
    codes[2500] = len(KINDS) + 4
    write_code_column(path, "kind", codes, KINDS, N, chunk_rows=512)
    base = serve(path)
    for route in ("metadata/column/counts", "metadata/column"):
        answer = httpx.get(f"{base}/api/{route}", params={**NAMES, "column": "kind"})
        assert answer.status_code == 422
        assert "row 2500 holds code 9" in answer.text and "kind" in answer.text


def test_a_broken_stored_column_is_named_and_the_points_stay_usable(serve, tmp_path):
    path, _ = _data(tmp_path)
    write_code_column(path, "short", np.zeros(10, np.int32), ["x"], 10)
    base = serve(path)
    embedding = httpx.get(f"{base}/api/runs").json()[0]["embeddings"][0]
    assert embedding["status"] == "ready" and embedding["metadata_columns"] == []
    assert "short" in embedding["error"] and f"{N} integer codes" in embedding["error"]
    pca = httpx.post(f"{base}/api/projections?wait=true", json={**NAMES, "method": "pca"},
                     timeout=120)
    assert pca.status_code == 200


def test_the_default_view_counts_a_stored_column_ahead_of_the_page(tmp_path):
    path, codes = _data(tmp_path)
    catalog = Catalog(path, cache_dir=tmp_path / "cache")
    catalog.refresh()
    service = ProjectionService.standalone(catalog)
    try:
        service.prepare_default_view()
        stored = catalog.embedding(".", "v").code_columns["kind"]
        assert "counts" in vars(stored) and "codes" not in vars(stored)  # counted, not read whole
        assert vars(stored)["counts"].tolist() == np.bincount(codes, minlength=5).tolist()
    finally:
        service.stop()


@pytest.mark.slow
def test_on_a_cluster_the_workers_tiles_carry_the_stored_column_and_search_it(serve, tmp_path):
    pytest.importorskip("distributed")
    from projector_core.distributed.cluster import Cluster

    path, codes = _data(tmp_path)
    cluster = Cluster("local:1", timeout=300, store_dir=tmp_path / "stores")
    try:
        base = serve(path, cluster=cluster)
        done = Client(base, timeout=300).projection(".", "v", "pca", dims=2, timeout=300)
        assert done.info["tile_columns"] == ["kind"]  # the workers' tiles, not in-memory ones
        job = done.job
        manifest = httpx.get(f"{base}/api/jobs/{job}/tiles", params={"axes": "0,1"}).json()
        z, x, y, count = manifest["tiles"][0]
        tile = httpx.get(f"{base}/api/jobs/{job}/tiles/{z}/{x}/{y}",
                         params={"axes": "0,1", "column": "kind"}, timeout=60)
        rows = np.frombuffer(tile.content[:4 * count], "<u4")
        np.testing.assert_array_equal(np.frombuffer(tile.content[12 * count:], "<i4"),
                                      codes[rows])
        found = httpx.get(f"{base}/api/jobs/{job}/search", params={
            "column": "kind", "query": "cow", "limit": N}).json()
        assert found["codes"] == [4]
        assert found["rows"] == np.flatnonzero(codes == 4).tolist()
    finally:
        cluster.close()
