"""Where t-SNE and UMAP come to the page as tiles (issue 25): one decision, by the size of
their N x 2 float32 against the most a page takes whole, which the cluster's stored results
obey too; ``/api/runs`` tells it per embedding, and the job's stream can leave out frames."""

from __future__ import annotations

import json
import time

import httpx
import numpy as np
import pytest
from websockets.sync.client import connect

from projector_core.distributed import coords_store, sample_fit
from projector_core.distributed.coords_store import WHOLE_BYTES, ShardStats, StoredCoordinates
from projector_core.distributed.errors import TooLarge
from projector_core.tiles.view import tsne_umap_from_tiles
from tests.builders import write_points_run

LAST_WHOLE = WHOLE_BYTES // 8  # the most points whose N x 2 float32 a page takes whole


def stored(points: int) -> StoredCoordinates:
    """A cluster's stored 2-D result of `points` rows (its size alone: nothing is read)."""
    return StoredCoordinates("never-read", (points, 2),
                             ShardStats(0, np.full(2, np.inf), np.full(2, -np.inf)))


def test_the_decision_flips_where_a_page_stops_taking_a_layout_whole():
    assert LAST_WHOLE == 33_554_432  # 256 MB of N x 2 float32
    assert tsne_umap_from_tiles(LAST_WHOLE) is False
    assert tsne_umap_from_tiles(LAST_WHOLE + 1) is True
    assert tsne_umap_from_tiles(100_000_000) is True and tsne_umap_from_tiles(50_000) is False
    # The figure is defined once: the cluster's whole reads and frames use the same one.
    assert coords_store.WHOLE_BYTES is WHOLE_BYTES and sample_fit.WHOLE_BYTES is WHOLE_BYTES


def test_the_cluster_agrees_a_layout_the_page_takes_whole_can_be_read_whole():
    # Over the bound a stored result refuses a whole read (a 413 "too large: use tiles")
    # before touching its store; at the bound it would read it (the missing store says so).
    with pytest.raises(TooLarge):
        np.asarray(stored(LAST_WHOLE + 1))
    with pytest.raises(Exception) as at_bound:
        np.asarray(stored(LAST_WHOLE))
    assert not isinstance(at_bound.value, TooLarge)


def test_runs_say_per_embedding_and_the_stream_leaves_frames_out(serve, tmp_path):
    n = 400
    rng = np.random.default_rng(0)
    write_points_run(tmp_path / "logs" / "run", rng.normal(size=(n, 8)))
    url = serve(tmp_path / "logs")
    [embedding] = [e for run in httpx.get(f"{url}/api/runs", timeout=60).json()
                   for e in run["embeddings"]]
    assert embedding["tsne_umap_tiles"] is False and embedding["tiles"] is False
    documented = httpx.get(f"{url}/openapi.json", timeout=60).json()
    assert "tsne_umap_tiles" in documented["components"]["schemas"]["EmbeddingOut"]["properties"]

    request = {"run": "run", "embedding": "points", "method": "tsne", "dims": 2,
               "params": {"n_iter": 300, "seed": 0}}
    job = httpx.post(f"{url}/api/projections", json=request, timeout=60).json()["job"]
    texts: list[dict] = []
    binary = 0
    with connect(url.replace("http", "ws", 1) + f"/api/jobs/{job}/stream?frames=false",
                 max_size=None) as socket:
        for message in socket:
            if isinstance(message, str):
                texts.append(json.loads(message))
            else:
                binary += 1
    assert binary == 0 and not [t for t in texts if t["type"] == "frame"]
    assert any(t["type"] == "progress" for t in texts)
    assert texts[-1]["type"] == "status" and texts[-1]["status"] == "done"
    assert texts[-1]["info"]["iterations"] == 300
    # The tiles then hold every point (what the page shows instead of the result).
    index = httpx.get(f"{url}/api/jobs/{job}/tiles", timeout=60).json()
    assert index["total"] == n


def test_a_running_sampled_job_answers_early_tiles_of_the_points_placed_so_far(serve, tmp_path):
    n, sample = 3000, 400
    rng = np.random.default_rng(1)
    write_points_run(tmp_path / "logs" / "run", rng.normal(size=(n, 8)))
    url = serve(tmp_path / "logs")
    request = {"run": "run", "embedding": "points", "method": "tsne", "dims": 2,
               "params": {"n_iter": 100000, "seed": 0, "mode": "sample", "sample_size": sample}}
    job = httpx.post(f"{url}/api/projections", json=request, timeout=60).json()["job"]
    tile = f"{url}/api/jobs/{job}/tiles/0/0/0"
    try:
        deadline = 120
        answer = None
        # Answered at once from the start (no point before a first frame), never held until
        # the job ends (it would not within the timeout): until the sample's fit has a frame.
        for _ in range(deadline * 10):
            answer = httpx.get(tile, params={"early": "true"}, timeout=30)
            assert answer.status_code == 200 and int(answer.headers["X-Total"]) == n
            if int(answer.headers["X-Count"]):
                break
            time.sleep(0.1)
        assert answer is not None and answer.status_code == 200
        assert answer.headers["X-Order"] == "random"
        assert answer.headers["Cache-Control"] == "no-store"
        count = int(answer.headers["X-Count"])
        assert 0 < count <= sample  # only placed points: the rest of the frame is NaN
        assert int(answer.headers["X-Total"]) == n
        rows = np.frombuffer(answer.content[:4 * count], "<u4")
        coords = np.frombuffer(answer.content[4 * count:], "<f4").reshape(count, 2)
        assert len(np.unique(rows)) == count and rows.max() < n
        assert np.isfinite(coords).all()
        bounds = json.loads(answer.headers["X-Bounds"])
        assert np.all(coords >= np.array(bounds["lo"]) - 1e-6)
        assert np.all(coords <= np.array(bounds["hi"]) + 1e-6)
        # Still running: without early=true a tile would wait for the job (it is not asked).
        assert httpx.get(f"{url}/api/jobs/{job}", timeout=30).json()["status"] == "running"
    finally:
        httpx.delete(f"{url}/api/jobs/{job}", timeout=30)
