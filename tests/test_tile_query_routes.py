"""The tile queries through a real server (uvicorn) and ``from projector import Client``: pick,
box/polygon selection with counts, and search answer exactly what a brute force over the
whole projection answers, on 200k points in small tiles (many levels); the tile routes,
now served through the TileSource, answer the same bytes as the tile set; bad requests get
a 4xx that says why."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from projector.server.app import create_app

from projector import Client
from projector.client.answers import ProjectorError
from projector_core.kernels.search import search
from projector_core.tiles.build import build_tiles
from projector_core.tiles.order import lod_order
from projector_core.tiles.store import LodStore
from tests.builders import write_pbtxt_run
from tests.conftest import LiveServer
from tests.test_tile_queries import STAR, brute_pick, clustered, inside_polygon

N = 200_000
BUDGET = 1024
GROUPS = [f"group {g}" for g in "ABCDEFGHIJKLM"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict]]:
    """A server over a 200k-point run (2-D, so PCA keeps the picture) with a categorical
    column and a unique name per point; the data written, for the brute force."""
    folder = tmp_path_factory.mktemp("tile_queries")
    tensor = clustered(N)
    tensor[np.isnan(tensor)] = 0  # a tensor has no NaN; the picture's missing points are
    groups = [GROUPS[i * 7 % len(GROUPS)] for i in range(N)]  # tested in the kernel's test
    names = [f"p{i}" for i in range(N)]
    write_pbtxt_run(folder / "logs" / "run",
                    f'embeddings {{ tensor_name: "points" tensor_path: "t.bytes" '
                    f'tensor_shape: {N} tensor_shape: 2 metadata_path: "meta.tsv" }}\n'
                    'embeddings { tensor_name: "small" tensor_path: "s.bytes" '
                    'tensor_shape: 3000 tensor_shape: 2 }',
                    {"t.bytes": tensor.astype("<f4").tobytes(),
                     "s.bytes": tensor[:3000].astype("<f4").tobytes(),
                     "meta.tsv": "name\tgroup\n" + "".join(
                         f"{n}\t{g}\n" for n, g in zip(names, groups, strict=True))})
    app = create_app(folder / "logs", cache_dir=folder / "cache")
    app.state.projection_service.lod = LodStore(budget=BUDGET)  # small tiles: many levels
    server = LiveServer(app)
    server.start()
    yield server.url, {"group": groups, "name": names}
    server.stop()


@pytest.fixture(scope="module")
def projection(served: tuple[str, dict]) -> tuple[str, np.ndarray]:
    client = Client(served[0], timeout=120)
    done = client.projection("run", "points", "pca", dims=2, timeout=120)
    return done.job, done.coordinates


def test_pick_select_and_search_equal_a_brute_force(served, projection):
    url, columns = served
    job, coords = projection
    client = Client(url, timeout=120)
    rng = np.random.default_rng(7)
    for x, y, radius in [(*coords[rng.integers(N)].tolist(), 0.02) for _ in range(6)] + [
            (*rng.uniform(-10, 10, 2).tolist(), 0.5), (500.0, 500.0, 3.0)]:
        found = client.pick(job, x, y, radius)
        expected = brute_pick(coords, x, y, radius)
        assert found["row"] == expected
        if expected is not None:
            assert found["coords"] == coords[expected].tolist()
            assert found["distance"] == pytest.approx(np.hypot(*(coords[expected] - [x, y])))
        else:
            assert found == {"row": None, "distance": None, "coords": None}

    lo, hi = np.nanpercentile(coords, 30, axis=0), np.nanpercentile(coords, 60, axis=0)
    box = [float(hi[0]), float(lo[1]), float(lo[0]), float(hi[1])]  # corners in any order
    inside = np.flatnonzero((coords[:, 0] >= lo[0]) & (coords[:, 0] <= hi[0])
                            & (coords[:, 1] >= lo[1]) & (coords[:, 1] <= hi[1]))
    found = client.select(job, box=box, limit=1000, column="group")
    assert (found["count"], found["rows"], found["truncated"]) == (
        inside.size, inside[:1000].tolist(), inside.size > 1000)
    assert found["selection"]["kind"] == "region" and len(found["selection"]["polygon"]) == 4
    same = httpx.post(f"{url}/api/jobs/{job}/select",  # axes as a list, as in a page's state
                      json={"box": box, "limit": 1000, "axes": [0, 1]}, timeout=60).json()
    assert same["rows"] == found["rows"] and same["count"] == found["count"]
    values, tally = np.unique(np.asarray(columns["group"])[inside], return_counts=True)
    assert {c["value"]: c["count"] for c in found["counts"]} == dict(
        zip(values.tolist(), tally.tolist(), strict=True))
    assert [c["count"] for c in found["counts"]] == sorted(tally.tolist(), reverse=True)

    centre = coords[np.nanargmin(np.abs(coords[:, 0]))]  # a star around a point of the map
    polygon = (np.asarray(STAR) - [10, 2] + centre).tolist()
    inside = np.flatnonzero(inside_polygon(coords, polygon))
    found = client.select(job, polygon=polygon, limit=1_000_000)
    assert inside.size and found["count"] == inside.size
    assert found["rows"] == inside.tolist() and not found["truncated"]
    assert found["selection"] == {"kind": "region", "polygon": polygon}

    for column, query, regex, limit in [("group", "group [ab]", True, 100),
                                        ("group", "P c", False, 10),  # no value matches
                                        ("name", "p1999", False, 5),
                                        ("name", "^p12.*7$", True, 100_000)]:
        values = columns[column]
        rows = search(values, query, regex)
        found = client.search_points(job, column, query, regex, limit)
        assert (found["count"], found["rows"], found["truncated"]) == (
            len(rows), rows[:limit], len(rows) > limit)
        dictionary = list(dict.fromkeys(values))  # the codes: values in order of appearance
        assert found["codes"] == search(dictionary, query, regex)


def test_tiles_are_the_tile_sets_bytes(served, projection):
    url, columns = served
    job, coords = projection
    index = httpx.get(f"{url}/api/jobs/{job}/tiles", timeout=60).json()
    assert list(index) == ["budget", "box", "total", "tiles", "axes", "bounds"]
    expected = build_tiles(coords, lod_order(coords), BUDGET)
    assert index["tiles"] == np.column_stack([expected.tiles, expected.counts]).tolist()
    assert max(z for z, *_ in index["tiles"]) >= 4  # many levels
    dictionary = list(dict.fromkeys(columns["group"]))
    codes = np.array([dictionary.index(g) for g in GROUPS])[
        np.array([GROUPS.index(g) for g in columns["group"]])]
    with httpx.Client(base_url=url, timeout=60) as http:
        for t, (z, x, y, _) in enumerate(index["tiles"]):
            rows = expected.rows[expected.offsets[t]:expected.offsets[t] + expected.counts[t]]
            answer = http.get(f"/api/jobs/{job}/tiles/{z}/{x}/{y}", params={"column": "group"})
            assert answer.content == (rows.astype("<u4").tobytes() + coords[rows].astype(
                "<f4").tobytes() + codes[rows].astype("<i4").tobytes())
            assert (answer.headers["X-Count"], answer.headers["X-Total"],
                    answer.headers["X-Order"], answer.headers["X-Axes"]) == (
                str(rows.size), str(N), "lod", "0,1")
            assert json.loads(answer.headers["X-Bounds"]) == index["bounds"]


def test_bad_requests_say_why(served, projection):
    url, _ = served
    job, _ = projection
    client = Client(url)
    cases = [
        (lambda: client.pick("nope", 0, 0, 1), 404, "unknown job"),
        (lambda: client.pick(job, 0, 0, -1), 422, "radius"),
        (lambda: client.pick(job, 0, 0, 1, axes="0,x"), 422, "axes"),
        (lambda: client.select(job, polygon=[[0, 0], [1, 1]]), 422, "at least 3"),
        (lambda: client.select(job, box=[0, 0, 1, 1], polygon=[[0, 0], [1, 1], [1, 0]]), 422,
         "exactly one of"),
        (lambda: client.select(job, box=[0, 0, 1, 1], limit=2_000_000), 422, "limit"),
        (lambda: client.select(job, box=[0, 0, 1, 1], column="colour"), 422,
         "unknown metadata column 'colour'"),
        (lambda: client.search_points(job, "colour", "a"), 422, "unknown metadata column"),
        (lambda: client.search_points(job, "group", "(", regex=True), 422,
         "invalid regular expression"),
    ]
    for number, (call, status, says) in enumerate(cases):
        with pytest.raises(ProjectorError) as error:
            call()
        assert error.value.status == status and says in error.value.detail, (number, error.value)
    nan = httpx.post(f"{url}/api/jobs/{job}/select", content=b'{"box": [0, 0, NaN, 1]}',
                     headers={"content-type": "application/json"})
    assert nan.status_code == 422, nan.text
    running = client.start("run", "small", "tsne", n_iter=5000)
    client.cancel(running)  # not done, whether the cancel has landed yet or not
    with pytest.raises(ProjectorError) as error:
        client.select(running, box=[0, 0, 1, 1])
    assert error.value.status == 409 and "result is not available" in error.value.detail
    paths = httpx.get(f"{url}/openapi.json").json()["paths"]
    for path, method, model in [("pick", "get", "PickOut"), ("select", "post", "SelectOut"),
                                ("search", "get", "SearchOut")]:
        answer = paths[f"/api/jobs/{{job_id}}/{path}"][method]["responses"]["200"]
        assert answer["content"]["application/json"]["schema"]["$ref"].endswith(model)
