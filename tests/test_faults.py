"""Faults while the server runs: files deleted or rewritten under it, clients that vanish
mid-stream, jobs whose worker dies. Each time the server reports the problem and carries on.

Files rewritten *in place* are tested against a ``projector serve`` subprocess: memory-mapping
a user's file that is then truncated kills a process with SIGBUS, and that must never be the
test runner.
"""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image
from websockets.exceptions import ConnectionClosedOK
from websockets.sync.client import connect

from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import JobStatus
from tests.builders import vectors, write_pbtxt_run, write_tsv

REFRESH = 0.2  # seconds between live re-scans in these tests


def _until(predicate: Callable[[], object], timeout: float = 15.0, what: str = "") -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"not reached within {timeout} s: {what}"
        time.sleep(0.1)


def _embedding(url: str, run: str, name: str = "t") -> dict | None:
    for listed in httpx.get(f"{url}/api/runs").json():
        if listed["name"] == run:
            return {e["name"]: e for e in listed["embeddings"]}.get(name)
    return None


def _tensor(url: str, run: str, name: str = "t") -> np.ndarray:
    response = httpx.get(f"{url}/api/tensor", params={"run": run, "embedding": name},
                         timeout=30)
    assert response.status_code == 200, response.text
    n, d = map(int, response.headers["x-shape"].split(","))
    return np.frombuffer(response.content, "<f4").reshape(n, d)


def _two_runs(logdir: Path) -> dict[str, np.ndarray]:
    """Run ``a``: TSV tensor + metadata + sprite; run ``b``: .npy tensor (the bystander)."""
    a, b = vectors(9, 3, 1), vectors(6, 2, 2)
    write_tsv(logdir / "a" / "t.tsv", a)
    (logdir / "a" / "m.tsv").write_text("".join(f"p{i}\n" for i in range(9)))
    Image.new("RGB", (24, 24)).save(logdir / "a" / "s.png")
    write_pbtxt_run(logdir / "a", 'embeddings { tensor_name: "t" tensor_path: "t.tsv" '
                                  'metadata_path: "m.tsv" sprite { image_path: "s.png" '
                                  "single_image_dim: 8 single_image_dim: 8 } }")
    (logdir / "b").mkdir(parents=True)
    np.save(logdir / "b" / "t.npy", b)
    write_pbtxt_run(logdir / "b", 'embeddings { tensor_name: "t" tensor_path: "t.npy" }')
    return {"a": a, "b": b}


def _bystander_works(url: str, expected: np.ndarray) -> None:
    np.testing.assert_array_equal(_tensor(url, "b"), expected)
    assert httpx.get(f"{url}/api/health").json() == {"status": "ok"}


def _error_contains(url: str, run: str, text: str) -> Callable[[], bool]:
    def check() -> bool:
        embedding = _embedding(url, run)
        return embedding is not None and text in (embedding["error"] or "")
    return check


# -- files deleted or rewritten (the live re-scan reports them) --------------------------------


def test_deleted_files_are_reported_and_restored_files_come_back(tmp_path, serve):
    logdir = tmp_path / "logs"
    written = _two_runs(logdir)
    url = serve(logdir, refresh_seconds=REFRESH)
    params = {"run": "a", "embedding": "t"}

    sprite = (logdir / "a" / "s.png").read_bytes()
    (logdir / "a" / "s.png").unlink()
    gone = httpx.get(f"{url}/api/sprite", params=params)  # asked before the re-scan notices
    assert gone.status_code == 422 and "a/s.png" in gone.json()["detail"]
    _until(_error_contains(url, "a", "a/s.png: sprite image not found"), what="sprite error")

    tensor = (logdir / "a" / "t.tsv").read_bytes()
    (logdir / "a" / "t.tsv").unlink()
    _until(_error_contains(url, "a", "a/t.tsv: tensor file not found"), what="tensor error")
    refused = httpx.get(f"{url}/api/tensor", params=params)
    assert refused.status_code == 422 and "a/t.tsv" in refused.json()["detail"]
    _bystander_works(url, written["b"])

    (logdir / "a" / "t.tsv").write_bytes(tensor)
    (logdir / "a" / "s.png").write_bytes(sprite)
    _until(lambda: (_embedding(url, "a") or {}).get("error") is None, what="healthy again")
    np.testing.assert_array_equal(_tensor(url, "a"), written["a"])

    for path in (logdir / "b").iterdir():  # a whole run removed: it leaves the list
        path.unlink()
    (logdir / "b").rmdir()
    _until(lambda: _embedding(url, "b") is None, what="run b gone")
    assert httpx.get(f"{url}/api/tensor", params={"run": "b", "embedding": "t"}).status_code == 404


def test_rewritten_files_are_read_again_broken_ones_reported(tmp_path, serve):
    logdir = tmp_path / "logs"
    written = _two_runs(logdir)
    url = serve(logdir, refresh_seconds=REFRESH)

    replacement = vectors(9, 3, 7)
    write_tsv(logdir / "a" / "t.tsv", replacement)
    _until(lambda: np.array_equal(_tensor(url, "a"), replacement), what="new values served")

    (logdir / "a" / "t.tsv").write_text("1\t2\t3\n4\tfive\t6\n")
    _until(_error_contains(url, "a", "a/t.tsv line 2: column 2: 'five' is not a number"),
           what="broken TSV reported")
    _bystander_works(url, written["b"])

    write_tsv(logdir / "a" / "t.tsv", replacement)
    (logdir / "a" / "m.tsv").write_text("p0\np1\n")
    _until(_error_contains(url, "a", "a/m.tsv: has 2 data rows but the tensor has 9"),
           what="metadata mismatch reported")
    np.testing.assert_array_equal(_tensor(url, "a"), replacement)

    (logdir / "a" / "projector_config.pbtxt").write_text('embeddings { tensor_name: "t"')

    def config_error() -> bool:
        run = {r["name"]: r for r in httpx.get(f"{url}/api/runs").json()}["a"]
        return "a/projector_config.pbtxt line 1" in (run["error"] or "")

    _until(config_error, what="config error reported")
    _bystander_works(url, written["b"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def subprocess_server(tmp_path) -> Iterator[Callable[[Path], tuple[str, subprocess.Popen]]]:
    """``start(logdir) -> (url, process)``: a real ``projector serve`` in its own process."""
    processes: list[subprocess.Popen] = []

    def start(logdir: Path) -> tuple[str, subprocess.Popen]:
        port = _free_port()
        log = tmp_path / "server.log"
        with log.open("w") as handle:  # a file, not a pipe nobody drains
            process = subprocess.Popen(
                [sys.executable, "-m", "projector.server.cli", "serve", str(logdir), "--port", str(port),
                 "--cache-dir", str(tmp_path / "cache")],
                stdout=subprocess.DEVNULL, stderr=handle)
        processes.append(process)
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            assert process.poll() is None, log.read_text()
            try:
                return httpx.get(f"{url}/api/health").status_code == 200
            except httpx.TransportError:
                return False

        _until(up, timeout=60, what="projector serve up")
        return url, process

    yield start
    for process in processes:
        process.terminate()
        process.wait(timeout=20)


def test_tensor_files_rewritten_in_place_never_crash_the_server(tmp_path, subprocess_server):
    """``np.save`` and ``open(..., "wb")`` truncate the file the server has open; reading a
    memory map of it past the new end would be SIGBUS, the whole server gone."""
    logdir = tmp_path / "logs"
    big, raw = vectors(4000, 64, 1), vectors(3000, 16, 2)
    (logdir / "n").mkdir(parents=True)
    np.save(logdir / "n" / "t.npy", big)
    write_pbtxt_run(logdir / "n", 'embeddings { tensor_name: "t" tensor_path: "t.npy" }')
    (logdir / "r").mkdir()
    (logdir / "r" / "t.bytes").write_bytes(raw.tobytes())
    write_pbtxt_run(logdir / "r", 'embeddings { tensor_name: "t" tensor_path: "t.bytes" '
                                  "tensor_shape: [3000, 16] }")
    url, process = subprocess_server(logdir)
    np.testing.assert_array_equal(_tensor(url, "n"), big)
    np.testing.assert_array_equal(_tensor(url, "r"), raw)

    smaller = vectors(10, 64, 3)
    with (logdir / "n" / "t.npy").open("r+b") as handle:  # same file, truncated and rewritten
        handle.truncate(0)
        np.save(handle, smaller)
    with (logdir / "r" / "t.bytes").open("r+b") as handle:
        handle.truncate(100)
    deadline = time.monotonic() + 2.5  # across a re-scan (every 2 s in `projector serve`)
    while time.monotonic() < deadline:
        for run, before, after in (("n", big, smaller), ("r", raw, None)):
            response = httpx.get(f"{url}/api/tensor", params={"run": run, "embedding": "t"})
            if response.status_code == 422:
                assert f"{run}/t." in response.json()["detail"]
                continue
            assert response.status_code == 200
            served = np.frombuffer(response.content, "<f4")
            assert np.array_equal(served, before.ravel()) or (
                after is not None and np.array_equal(served, after.ravel()))
        assert process.poll() is None, "the server died"

    _until(lambda: _embedding(url, "n")["shape"] == [10, 64], what="rewritten .npy re-read")
    np.testing.assert_array_equal(_tensor(url, "n"), smaller)
    _until(_error_contains(url, "r", "r/t.bytes: has 100 bytes but tensor_shape [3000, 16]"),
           what="truncated .bytes reported")
    assert process.poll() is None


# -- clients that disappear ---------------------------------------------------------------------


def _abort_after(url: str, path: str, read_bytes: int) -> None:
    """Ask for ``path``, read a little of the answer, then reset the connection (RST)."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    received = 0
    while received < read_bytes:
        chunk = sock.recv(65536)
        assert chunk, "server closed early"
        received += len(chunk)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_clients_vanishing_mid_stream_of_a_big_tensor(tmp_path, serve):
    big = vectors(30_000, 256)  # 30 MB on the wire
    (tmp_path / "logs" / "big").mkdir(parents=True)
    np.save(tmp_path / "logs" / "big" / "t.npy", big)
    write_pbtxt_run(tmp_path / "logs" / "big", 'embeddings { tensor_name: "t" '
                                               'tensor_path: "t.npy" }')
    url = serve(tmp_path / "logs", refresh_seconds=0)
    np.testing.assert_array_equal(_tensor(url, "big"), big)
    threads_before = threading.active_count()

    for _ in range(12):
        _abort_after(url, "/api/tensor?run=big&embedding=t", 256 * 1024)
    with httpx.stream("GET", f"{url}/api/tensor", params={"run": "big", "embedding": "t"}) as r:
        next(r.iter_bytes())  # a polite client that stops reading and closes

    assert httpx.get(f"{url}/api/health").json() == {"status": "ok"}
    np.testing.assert_array_equal(_tensor(url, "big"), big)
    _until(lambda: threading.active_count() <= threads_before + 2, timeout=10,
           what="stream threads released")


# -- jobs ---------------------------------------------------------------------------------------


def test_a_job_whose_worker_dies_is_failed_and_the_pool_keeps_working():
    """A work function that ends its thread outright (SystemExit, not an Exception) must not
    leave its job "running" forever nor take a worker from the pool."""

    def dies(ctx) -> None:
        raise SystemExit("worker killed")

    manager = JobManager(workers=1)
    try:
        dead = manager.submit(dies)
        assert dead.wait(5), "the job never finished"
        assert dead.status is JobStatus.FAILED
        assert "SystemExit" in (dead.error or "")
        after = manager.submit(lambda ctx: "alive")
        assert after.wait(5) and after.result == "alive"
    finally:
        manager.shutdown()


def _digits_tsne(url: str) -> str:
    body = {"run": "digits", "embedding": "digits", "method": "tsne", "dims": 2,
            "params": {"n_iter": 5000, "seed": 3}}
    response = httpx.post(f"{url}/api/projections", json=body)
    assert response.status_code == 202, response.text
    return response.json()["job"]


def test_websocket_followers_vanishing_mid_stream(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    job = _digits_tsne(url)
    stream = url.replace("http", "ws", 1) + f"/api/jobs/{job}/stream"
    for abrupt in (True, False, True):
        with connect(stream, max_size=None) as follower:
            frames = 0
            while frames < 1:
                frames += isinstance(follower.recv(timeout=30), bytes)
            if abrupt:  # the network goes away: no close handshake
                follower.socket.shutdown(socket.SHUT_RDWR)
    assert httpx.get(f"{url}/api/health").json() == {"status": "ok"}
    status = httpx.get(f"{url}/api/jobs/{job}").json()
    assert status["status"] in ("running", "done"), status
    with connect(stream, max_size=None) as follower:  # a new follower is served as usual
        first = follower.recv(timeout=30)
        assert isinstance(first, str) and json.loads(first)["id"] == job
        assert httpx.delete(f"{url}/api/jobs/{job}").json()["status"] in ("cancelled", "done")
        with pytest.raises(ConnectionClosedOK):
            while True:  # drained until the server ends the stream with a normal close
                follower.recv(timeout=30)
