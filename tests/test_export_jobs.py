"""Site exports are jobs under the job engine's concurrency limit (issue 38): eight concurrent
``GET /api/export/site`` on a ``projector serve`` subprocess queue as jobs, no more than the
engine's workers build at once, ``/api/health`` answers meanwhile, all eight answer valid
zips, and the server's peak resident memory stays within the budget of that many exports,
not eight. The background form answers 202 with a job whose zip is fetched once done; a
client that leaves while its export is queued cancels it."""

from __future__ import annotations

import inspect
import io
import json
import threading
import time
import zipfile
from pathlib import Path

import httpx
import numpy as np

from projector_core.jobs.engine import JobManager
from tests.cli_server import CliServer, cli_server

ROWS, DIMS = 2000, 64
EXPORTS = 8
WORKERS = inspect.signature(JobManager).parameters["workers"].default  # the server's engine
# The budget: the resident memory before an export, plus one export's peak increase per
# worker, plus a quarter for what the allocator keeps between them.
SLACK = 1.25
PARAMS = {"run": ".", "embedding": "v", "projection": "pca", "neighbors": 200}


def _logdir(folder: Path) -> Path:
    folder.mkdir()
    matrix = np.random.default_rng(0).normal(size=(ROWS, DIMS)).astype("<f4")
    (folder / "v.bytes").write_bytes(matrix.tobytes())
    (folder / "projector_config.json").write_text(json.dumps({"embeddings": [
        {"tensorName": "v", "tensorShape": [ROWS, DIMS], "tensorPath": "v.bytes"}]}))
    return folder


def _kib(pid: int, field: str) -> int:
    """``VmHWM`` (the peak) or ``VmRSS`` (now) of the process, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _valid_zip(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert archive.testzip() is None
        assert "index.html" in archive.namelist()


def _export_jobs(server: CliServer) -> list[dict]:
    return [j for j in server.get("/api/jobs").json()["jobs"] if j["kind"] == "export"]


def test_eight_exports_queue_under_the_memory_budget(tmp_path: Path) -> None:
    with cli_server([str(_logdir(tmp_path / "logdir")), "--no-warm-up"], tmp_path) as server:
        pid = server.process.pid
        _valid_zip(server.get("/api/export/site", **PARAMS))  # imports, PCA cached
        before = _kib(pid, "VmRSS")
        _valid_zip(server.get("/api/export/site", **PARAMS))
        one = _kib(pid, "VmHWM") - before
        budget = before + SLACK * WORKERS * one

        answers: list[httpx.Response] = []
        threads = [threading.Thread(target=lambda: answers.append(
            server.get("/api/export/site", **PARAMS))) for _ in range(EXPORTS)]
        for thread in threads:
            thread.start()
        queued_seen = 0
        while any(thread.is_alive() for thread in threads):
            assert server.get("/api/health").status_code == 200
            active = [j["status"] for j in _export_jobs(server)
                      if j["status"] in ("queued", "running")]
            assert active.count("running") <= WORKERS
            queued_seen = max(queued_seen, active.count("queued"))
        for thread in threads:
            thread.join()
        peak = _kib(pid, "VmHWM")

        assert len(answers) == EXPORTS
        for answer in answers:
            _valid_zip(answer)
        assert queued_seen > 0  # health answered while exports waited for a worker
        assert peak <= budget, (
            f"peak {peak / 1024:.0f} MiB over the budget {budget / 1024:.0f} MiB (before "
            f"{before / 1024:.0f} MiB, one export +{one / 1024:.0f} MiB, {WORKERS} workers)")
        assert all(j["status"] == "done" for j in _export_jobs(server))


def test_a_background_export_answers_its_job_then_its_zip(tmp_path: Path) -> None:
    with cli_server([str(_logdir(tmp_path / "logdir")), "--no-warm-up"], tmp_path) as server:
        created = server.get("/api/export/site", **PARAMS, background="true")
        assert created.status_code == 202
        job = created.json()["job"]
        kinds = {j["id"]: (j["kind"], j["method"], j["embedding"]) for j in _export_jobs(server)}
        assert kinds[job] == ("export", "site", "v")
        with httpx.Client(timeout=120) as client:  # followed as a page would, by its status
            status = client.get(f"{server.url}/api/jobs/{job}").json()
            while status["status"] in ("queued", "running"):
                early = client.get(f"{server.url}/api/jobs/{job}/site.zip")
                assert early.status_code in (409, 200)
                status = client.get(f"{server.url}/api/jobs/{job}").json()
        assert status["status"] == "done", status
        _valid_zip(server.get(f"/api/jobs/{job}/site.zip"))
        _valid_zip(server.get(f"/api/jobs/{job}/site.zip"))  # kept for later downloads
        assert server.get("/api/jobs/unknown/site.zip").status_code == 404


def test_a_client_that_leaves_cancels_its_queued_export(tmp_path: Path) -> None:
    with cli_server([str(_logdir(tmp_path / "logdir")), "--no-warm-up"], tmp_path) as server:
        holding = [server.get("/api/export/site", **PARAMS, background="true").json()["job"]
                   for _ in range(WORKERS)]
        for job in holding:  # each holds its worker at its first progress line
            httpx.post(f"{server.url}/api/jobs/{job}/pause", timeout=30).raise_for_status()
        try:
            httpx.get(f"{server.url}/api/export/site", params=PARAMS, timeout=2)
        except httpx.ReadTimeout:
            pass  # the client leaves, its export still queued behind the held ones
        else:
            raise AssertionError("answered while every worker was held")
        deadline = time.monotonic() + 60
        while True:
            left = {j["id"]: j["status"] for j in _export_jobs(server) if j["id"] not in holding}
            if list(left.values()) == ["cancelled"]:
                break
            assert time.monotonic() < deadline, left
        for job in holding:
            httpx.post(f"{server.url}/api/jobs/{job}/resume", timeout=30).raise_for_status()
        for job in holding:
            while server.get(f"/api/jobs/{job}").json()["status"] != "done":
                assert time.monotonic() < deadline + 60
            _valid_zip(server.get(f"/api/jobs/{job}/site.zip"))
