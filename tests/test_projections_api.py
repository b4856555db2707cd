"""Projection jobs over HTTP and WebSocket, against the real app under uvicorn."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.manifold import trustworthiness
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.builders import write_pbtxt_run

DIGITS = {"run": "digits", "embedding": "digits"}


@pytest.fixture
def client(serve, sample_logdir):
    with httpx.Client(base_url=serve(sample_logdir), timeout=60) as http:
        yield http


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    return load_digits().data.astype(np.float32)


def _start(client: httpx.Client, **body) -> str:
    response = client.post("/api/projections", json=body)
    assert response.status_code == 202, response.text
    return response.json()["job"]


def _until(predicate, timeout: float = 30.0, every: float = 0.02):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(every)


def _stream(base_url: str, job_id: str) -> list[dict | np.ndarray]:
    """Every message of a job's stream in order; frames decoded to arrays."""
    received: list[dict | np.ndarray] = []
    url = base_url.replace("http", "ws", 1) + f"/api/jobs/{job_id}/stream"
    with connect(url, max_size=None) as socket:
        header: dict = {}
        for message in socket:
            if isinstance(message, str):
                header = json.loads(message)
                received.append(header)
            else:
                array = np.frombuffer(message, "<f4").reshape(header["shape"])
                received.append(array)
    return received


def test_tsne_streams_frames_while_running_then_the_final_one(client, digits):
    job = _start(client, **DIGITS, method="tsne", params={"n_iter": 400, "seed": 1})
    messages = _stream(str(client.base_url), job)
    texts = [m for m in messages if isinstance(m, dict)]
    frames = [m for m in messages if isinstance(m, np.ndarray)]
    headers = [m for m in texts if m["type"] == "frame"]
    assert len(headers) == len(frames)
    intermediate = [h for h in headers if not h["final"]]
    assert len(intermediate) >= 3
    assert all(h["status"] == "running" for h in intermediate)
    iterations = [h["iteration"] for h in intermediate if h["iteration"]]
    assert iterations == sorted(iterations) and len(set(iterations)) >= 3
    assert headers[-1]["final"] and headers[-1]["status"] == "done"
    assert texts[-1]["type"] == "status" and texts[-1]["status"] == "done"
    assert texts[-1]["info"]["gradient_method"] == "bh"
    assert any(m["type"] == "progress" for m in texts)

    final = frames[-1]
    assert final.shape == (1797, 2)
    assert trustworthiness(digits, final, n_neighbors=10) >= 0.95
    assert not np.allclose(frames[0], final)

    binary = client.get(f"/api/jobs/{job}/result", headers={"Accept": "application/octet-stream"})
    assert binary.headers["X-Shape"] == "1797,2"
    np.testing.assert_array_equal(np.frombuffer(binary.content, "<f4").reshape(1797, 2), final)
    assert json.loads(binary.headers["X-Info"])["iterations"] == 400
    as_json = client.get(f"/api/jobs/{job}/result").json()
    np.testing.assert_allclose(np.array(as_json["coordinates"]), final)
    assert as_json["info"]["invalid_rows"] == 0 and as_json["info"]["perplexity"] == 30
    assert client.get(f"/api/jobs/{job}").json() == {
        "id": job, "status": "done", "progress": 1.0, "iteration": 400, "error": None,
        "paused": False, "phase": "optimisation", "phase_progress": 1.0,
        "priority": "requested", "yielding": False}


def test_health_and_neighbours_are_answered_while_tsne_runs(client):
    """Answers interleave with the job's steps: it runs and advances between them, so no
    answer waited for the job (how quickly they come is bench/serving.py's business)."""
    job = _start(client, **DIGITS, method="tsne", params={"n_iter": 20000, "seed": 2})
    _until(lambda: (client.get(f"/api/jobs/{job}").json()["iteration"] or 0) > 5)
    iterations = []
    for _ in range(5):
        assert client.get("/api/health").json() == {"status": "ok"}
        found = client.get("/api/neighbors", params={**DIGITS, "index": 0, "k": 10}).json()
        assert len(found["neighbors"]) == 10
        state = client.get(f"/api/jobs/{job}").json()
        assert state["status"] == "running", state
        iterations.append(state["iteration"])
        # The next answers come after the job has taken at least one more step.
        _until(lambda seen=state["iteration"]: client.get(f"/api/jobs/{job}").json()["iteration"] > seen)
    assert iterations == sorted(set(iterations)) and iterations[-1] < 20000
    client.delete(f"/api/jobs/{job}")


def test_cancel_stops_the_computation_at_its_next_step(client):
    """Two long runs fill both workers; cancelling them frees the workers for a queued third
    long before their 20000 iterations, and the cancelled runs never step again."""
    long = [_start(client, **DIGITS, method="tsne", params={"n_iter": 20000, "seed": s})
            for s in (10, 11)]
    waiting = _start(client, **DIGITS, method="tsne", params={"n_iter": 20000, "seed": 12})
    for job in long:
        _until(lambda job=job: (client.get(f"/api/jobs/{job}").json()["iteration"] or 0) > 3)
    assert client.get(f"/api/jobs/{waiting}").json()["status"] == "queued"

    for job in long:
        answer = client.delete(f"/api/jobs/{job}")
        assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    def steps(state: dict) -> dict:
        """A job's snapshot less its phase fraction, which the step in flight at the cancel
        may still report; the iteration and progress say whether it stepped."""
        return {key: value for key, value in state.items() if key != "phase_progress"}

    frozen = [steps(client.get(f"/api/jobs/{job}").json()) for job in long]
    assert all(state["iteration"] < 20000 for state in frozen)
    _until(lambda: (client.get(f"/api/jobs/{waiting}").json()["iteration"] or 0) > 5)
    # The queued run took steps meanwhile; the cancelled ones took none.
    assert [steps(client.get(f"/api/jobs/{job}").json()) for job in long] == frozen
    # A follower of a cancelled job hears so and the stream closes.
    messages = _stream(str(client.base_url), long[0])
    assert [steps(message) for message in messages] == [{"type": "status", **frozen[0]}]
    assert client.get(f"/api/jobs/{long[0]}/result").status_code == 409
    client.delete(f"/api/jobs/{waiting}")


def test_cancel_during_the_neighbour_search_does_not_wait_for_its_end(serve, tmp_path):
    """On larger data the Annoy search takes many seconds; a cancel does not wait for its end.

    Two identical searches start together; one is cancelled early in its search. Its worker
    goes to the queued job while its twin, never cancelled, is still searching: the cancel
    stopped the search, it did not wait for it (the twin's progress is the yardstick, in the
    same run, whatever the machine's speed)."""
    data = np.random.default_rng(0).normal(size=(8000, 50)).astype("<f4")
    write_pbtxt_run(tmp_path / "logdir" / "big", 'embeddings {\n  tensor_name: "v"\n'
                    '  tensor_path: "v.bytes"\n  tensor_shape: 8000\n  tensor_shape: 50\n}\n',
                    {"v.bytes": data.tobytes()})
    with httpx.Client(base_url=serve(tmp_path / "logdir"), timeout=60) as http:
        body = {"run": "big", "embedding": "v", "method": "tsne"}
        cancelled, twin = (_start(http, **body, params={"seed": s}) for s in (1, 2))
        waiting = _start(http, **body, params={"seed": 3})
        # Querying the neighbours (after the trees are built), well before the first step.
        _until(lambda: 0 < http.get(f"/api/jobs/{cancelled}").json()["progress"] < 0.2)
        http.delete(f"/api/jobs/{cancelled}")
        before = http.get(f"/api/jobs/{twin}").json()["phase_progress"] or 0.0
        _until(lambda: http.get(f"/api/jobs/{waiting}").json()["status"] == "running", 60)
        searching = http.get(f"/api/jobs/{twin}").json()
        for job in (twin, waiting):
            http.delete(f"/api/jobs/{job}")
        # Freed while the twin searched on, with less than half of its search behind it since.
        assert searching["phase"] == "neighbours" and searching["iteration"] in (None, 0), searching
        assert searching["phase_progress"] - before < (1 - before) / 2, (before, searching)


def test_pause_and_resume(client):
    job = _start(client, **DIGITS, method="tsne", params={"n_iter": 20000, "seed": 4})
    _until(lambda: (client.get(f"/api/jobs/{job}").json()["iteration"] or 0) > 3)
    paused = client.post(f"/api/jobs/{job}/pause").json()
    assert paused["paused"] and paused["status"] == "running"
    time.sleep(0.2)
    held = client.get(f"/api/jobs/{job}").json()["iteration"]
    time.sleep(0.3)
    assert client.get(f"/api/jobs/{job}").json()["iteration"] == held
    assert client.post(f"/api/jobs/{job}/resume").json()["paused"] is False
    _until(lambda: client.get(f"/api/jobs/{job}").json()["iteration"] > held)
    client.delete(f"/api/jobs/{job}")


def test_pca_dims_is_the_width_and_components_asks_more(client, digits):
    """``dims`` is the output width (scikit-learn's ``PCA(n_components=dims)``);
    ``params.components``, when given, decides it and ``info.dims`` says so."""
    for dims in (2, 3):
        answer = client.post("/api/projections?wait=true",
                             json={**DIGITS, "method": "pca", "dims": dims})
        assert answer.status_code == 200
        result = answer.json()
        assert np.array(result["coordinates"]).shape == (1797, dims)
        assert result["info"]["dims"] == dims
        reference = PCA(dims).fit(digits).explained_variance_ratio_
        np.testing.assert_allclose(result["info"]["explained_variance_ratio"], reference,
                                   atol=1e-4)
    asked = {**DIGITS, "method": "pca", "dims": 3, "params": {"components": 10}}
    result = client.post("/api/projections?wait=true", json=asked).json()
    assert np.array(result["coordinates"]).shape == (1797, 10) and result["info"]["dims"] == 10
    np.testing.assert_allclose(result["info"]["explained_variance_ratio"],
                               PCA(10).fit(digits).explained_variance_ratio_, atol=1e-4)
    binary = client.post("/api/projections?wait=true", json=asked,
                         headers={"Accept": "application/octet-stream"})
    assert binary.headers["content-type"] == "application/octet-stream"
    assert binary.headers["X-Shape"] == "1797,10"


def test_custom_reports_matches_and_precomputed_uses_columns(client):
    custom = client.post("/api/projections?wait=true", json={
        **DIGITS, "method": "custom",
        "params": {"column": "label", "left": "0", "right": "1", "up": "^[78]$", "down": "zzz",
                   "regex": True}}).json()
    target = load_digits().target
    assert custom["info"]["matches"] == {
        "left": int((target == 0).sum()), "right": int((target == 1).sum()),
        "up": int(np.isin(target, [7, 8]).sum()), "down": 0}
    assert len(custom["coordinates"]) == 1797 and len(custom["coordinates"][0]) == 2
    iris = client.post("/api/projections?wait=true", json={
        "run": "iris", "embedding": "iris", "method": "precomputed",
        "params": {"columns": ["sepal_length", "petal_length", "petal_width"]}}).json()
    assert iris["coordinates"][0] == pytest.approx([5.1, 1.4, 0.2])
    assert iris["info"]["columns"] == ["sepal_length", "petal_length", "petal_width"]


def test_umap_through_the_api(client, digits):
    result = client.post("/api/projections?wait=true", json={
        **DIGITS, "method": "umap", "dims": 3, "params": {"n_epochs": 100, "seed": 5}}).json()
    coordinates = np.array(result["coordinates"])
    assert coordinates.shape == (1797, 3)
    assert result["info"]["n_epochs"] == 100 and result["info"]["neighbors"] == "exact"
    assert trustworthiness(digits, coordinates, n_neighbors=10) >= 0.9


@pytest.mark.parametrize(("body", "message"), [
    ({"method": "tsne", "params": {"perplexity": 700}},
     "perplexity 700 is too large for 1797 points: it must be at most (N - 1) / 3 = 598.7"),
    ({"method": "tsne", "params": {"iterations": 10}},
     "tsne.params.iterations: Extra inputs are not permitted"),
    ({"method": "tsne", "params": {"n_iter": 0}}, "tsne.params.n_iter: "),
    ({"method": "tsne", "params": {"learning_rate": -1}}, "learning_rate"),
    ({"method": "umap", "params": {"min_dist": 1.5}}, "umap.params.min_dist: "),
    ({"method": "tsne", "dims": 4}, "tsne.dims: "),
    ({"method": "isomap"}, "unknown; one of"),
    ({"method": "custom", "params": {"column": "nope"}}, "unknown metadata column 'nope'"),
    ({"method": "custom", "params": {"column": "label", "left": "(", "regex": True}},
     "invalid regular expression '('"),
    ({"method": "precomputed", "params": {"columns": ["label", "parity"]}},
     "metadata column 'parity' is not numeric"),
    ({"method": "precomputed"}, "the data has 64 dimensions"),
    ({"method": "pca", "device": "tpu"}, "unknown device 'tpu'"),
])
def test_bad_requests_are_422_with_a_clear_message(client, body, message):
    answer = client.post("/api/projections", json={**DIGITS, **body})
    assert answer.status_code == 422
    assert message in answer.json()["detail"]


def test_unknown_names_are_404(client):
    assert client.post("/api/projections", json={
        "run": "nope", "embedding": "digits", "method": "pca"}).status_code == 404
    assert client.post("/api/projections", json={
        "run": "digits", "embedding": "nope", "method": "pca"}).status_code == 404
    assert client.get("/api/jobs/nope").status_code == 404
    assert client.delete("/api/jobs/nope").status_code == 404
    assert client.get("/api/jobs/nope/result").status_code == 404
    url = str(client.base_url).replace("http", "ws", 1) + "/api/jobs/nope/stream"
    with connect(url) as socket, pytest.raises(ConnectionClosed) as closed:
        socket.recv(timeout=5)
    assert closed.value.rcvd.code == 4404


def test_result_before_done_is_409(client):
    job = _start(client, **DIGITS, method="tsne", params={"n_iter": 20000, "seed": 6})
    answer = client.get(f"/api/jobs/{job}/result")
    assert answer.status_code == 409
    assert f"job {job} is" in answer.json()["detail"]
    client.delete(f"/api/jobs/{job}")


def test_late_follower_gets_the_final_frame_and_close(client):
    job = _start(client, **DIGITS, method="pca", params={"spherize": True})
    _until(lambda: client.get(f"/api/jobs/{job}").json()["status"] == "done")
    messages = _stream(str(client.base_url), job)
    assert [m["type"] if isinstance(m, dict) else "bytes" for m in messages] == [
        "frame", "bytes", "status"]
    assert messages[0]["final"] and messages[1].shape == (1797, 2)  # dims 2
    assert len(messages[2]["info"]["explained_variance_ratio"]) == 2


def test_identical_request_is_served_from_cache_even_after_restart(serve, sample_logdir,
                                                                   tmp_path):
    body = {**DIGITS, "method": "tsne", "params": {"n_iter": 60, "seed": 7}}
    first_url = serve(sample_logdir, cache_dir=tmp_path / "shared")
    with httpx.Client(base_url=first_url, timeout=60) as http:
        first = http.post("/api/projections?wait=true", json=body)
        job = first.headers["X-Job"]
        assert _start(http, **body) == job  # same job while the server keeps it
    second_url = serve(sample_logdir, cache_dir=tmp_path / "shared")
    with httpx.Client(base_url=second_url, timeout=60) as http:
        again = _start(http, **body)
        assert http.get(f"/api/jobs/{again}").json()["status"] == "done"
        assert http.get(f"/api/jobs/{again}/result").json() == first.json()
        changed = _start(http, **{**body, "dims": 3})
        assert http.get(f"/api/jobs/{changed}").json()["status"] != "done"
        http.delete(f"/api/jobs/{changed}")


def _nan_logdir(root: Path, digits: np.ndarray) -> Path:
    data = digits[:300].copy()
    data[[5, 17]] = np.nan
    data[40, 3] = np.inf
    labels = "".join(f"{i % 10}\t{i}\n" if i != 8 else "8\t\n" for i in range(300))
    write_pbtxt_run(root / "holes", 'embeddings {\n  tensor_name: "v"\n'
                    '  tensor_path: "v.bytes"\n  tensor_shape: 300\n  tensor_shape: 64\n'
                    '  metadata_path: "meta.tsv"\n}\n',
                    {"v.bytes": data.astype("<f4").tobytes(), "meta.tsv": "label\tx\n" + labels})
    return root


@pytest.mark.parametrize(("method", "params", "invalid"), [
    ("tsne", {"n_iter": 100}, 3),
    ("umap", {"n_epochs": 30}, 3),
    ("pca", {}, 3),
    ("custom", {"column": "label", "left": "1", "right": "2"}, 3),
    ("precomputed", {"columns": ["label", "x"]}, 1),
])
def test_rows_with_nan_or_inf_get_null_coordinates(serve, tmp_path, digits, method, params,
                                                   invalid):
    base = serve(_nan_logdir(tmp_path / "logdir", digits))
    body = {"run": "holes", "embedding": "v", "method": method, "params": params}
    with httpx.Client(base_url=base, timeout=60) as http:
        result = http.post("/api/projections?wait=true", json=body).json()
        binary = http.post("/api/projections?wait=true", json=body,
                           headers={"Accept": "application/octet-stream"})
    missing = [i for i, row in enumerate(result["coordinates"]) if row is None]
    assert result["info"]["invalid_rows"] == invalid
    assert missing == ([5, 17, 40] if invalid == 3 else [8])
    shape = tuple(int(s) for s in binary.headers["X-Shape"].split(","))
    array = np.frombuffer(binary.content, "<f4").reshape(shape)
    assert np.isnan(array[missing]).all()
    assert np.isfinite(np.delete(array, missing, axis=0)).all()


def test_tsne_on_the_torch_backend_uses_exact_neighbours(client, digits):
    """The GPU path (exact kNN on the array backend), exercised with torch on the CPU."""
    result = client.post("/api/projections?wait=true", json={
        **DIGITS, "method": "tsne", "device": "torch", "params": {"n_iter": 300}}).json()
    assert result["info"]["neighbors"] == "exact"
    assert trustworthiness(digits, np.array(result["coordinates"]), n_neighbors=10) >= 0.95


def test_waiting_request_does_not_block_other_requests(client):
    outcome = {}

    def wait_for_long_job() -> None:
        outcome["answer"] = client.post("/api/projections?wait=true", json={
            **DIGITS, "method": "tsne", "params": {"n_iter": 20000, "seed": 8}})

    waiter = threading.Thread(target=wait_for_long_job)
    waiter.start()
    with httpx.Client(base_url=client.base_url, timeout=10) as other:
        job = _until(lambda: _running_tsne(other))
        before = other.get(f"/api/jobs/{job}").json()["iteration"] or 0
        assert other.get("/api/health").status_code == 200
        # Answered while the waited-for job is still running, and stepping.
        _until(lambda: (other.get(f"/api/jobs/{job}").json()["iteration"] or 0) > before)
        assert other.get(f"/api/jobs/{job}").json()["status"] == "running"
        assert outcome == {}  # the waiting request is still waiting
        other.delete(f"/api/jobs/{job}")
    waiter.join(10)
    assert outcome["answer"].status_code == 409
    assert "cancelled" in outcome["answer"].json()["detail"]


def _running_tsne(http: httpx.Client) -> str | None:
    """The id of the job a waiting request started (found through a second identical POST)."""
    job = http.post("/api/projections", json={
        **DIGITS, "method": "tsne", "params": {"n_iter": 20000, "seed": 8}}).json()["job"]
    return job if http.get(f"/api/jobs/{job}").json()["status"] == "running" else None


def test_fixed_bounds_and_data_limits_are_refused_together(client):
    """One 422 names every field: a model's fixed bound (n_iter >= 1) and the data's limit
    (perplexity <= (N - 1) / 3), not one of them and then the other on the next try."""
    answer = client.post("/api/projections", json={
        **DIGITS, "method": "tsne", "params": {"perplexity": 700, "n_iter": 0}})
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert "tsne.params.n_iter: " in detail
    assert "perplexity 700 is too large for 1797 points: it must be at most (N - 1) / 3 = 598.7" \
        in detail
    # Past both bounds: the tighter one, the data's, is the one said (not "<= 1000" first).
    answer = client.post("/api/projections", json={
        **DIGITS, "method": "tsne", "params": {"perplexity": 1500, "n_iter": 0}})
    detail = answer.json()["detail"]
    assert answer.status_code == 422 and "tsne.params.n_iter: " in detail
    assert "perplexity 1500 is too large for 1797 points" in detail and "1000" not in detail
    # Fixing what was said is enough: the next answer is a job.
    answer = client.post("/api/projections", json={
        **DIGITS, "method": "tsne", "params": {"perplexity": 598, "n_iter": 1}})
    assert answer.status_code == 202
    client.delete(f"/api/jobs/{answer.json()['job']}")


def test_result_as_csv_or_tsv_is_the_pages_download(client):
    """format=csv|tsv streams the coordinates over axes with the page's header and rows
    (what a tiled view downloads); JSON and bytes stay as they were."""
    job = _start(client, **DIGITS, method="pca", dims=3)
    _until(lambda: client.get(f"/api/jobs/{job}").json()["status"] == "done")
    coordinates = np.array(client.get(f"/api/jobs/{job}/result").json()["coordinates"],
                           np.float32)
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        answer = client.get(f"/api/jobs/{job}/result", params={"format": fmt, "axes": "2,0"})
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith(
            "text/csv" if fmt == "csv" else "text/tab-separated-values")
        lines = answer.text.splitlines()
        assert lines[0] == sep.join(["index", "x", "y"]) and len(lines) == 1798
        rows = np.array([line.split(sep) for line in lines[1:]], np.float64)
        assert (rows[:, 0] == np.arange(1797)).all()
        np.testing.assert_array_equal(rows[:, 1:].astype(np.float32), coordinates[:, [2, 0]])
    three = client.get(f"/api/jobs/{job}/result", params={"format": "csv"}).text
    assert three.splitlines()[0] == "index,x,y,z"  # default: three of PCA's ten columns
    bad = client.get(f"/api/jobs/{job}/result", params={"format": "csv", "axes": "0,99"})
    assert bad.status_code == 422 and "axes" in bad.json()["detail"]
