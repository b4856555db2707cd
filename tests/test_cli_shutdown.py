"""``projector serve`` stops when asked (SIGTERM, as a service manager or Ctrl-C asks) while a
``?wait=true`` request is open: the open wait ends on shutdown instead of holding uvicorn's
graceful shutdown until a long job is done."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.cli_server import cli_server

HANG = 30  # seconds: only catches a server that does not stop


@pytest.mark.parametrize("dask", [[], ["--dask", "local:1"]], ids=["plain", "dask"])
def test_sigterm_ends_an_open_wait_and_the_server(tmp_path: Path, dask: list[str]) -> None:
    np.save(tmp_path / "v.npy", np.random.default_rng(0).normal(size=(2000, 16)).astype("f4"))
    with cli_server([str(tmp_path / "v.npy"), "--no-warm-up", *dask], tmp_path) as server:
        run = server.get("/api/runs").json()[0]
        answers: list[httpx.Response | Exception] = []

        def wait_for_a_long_tsne() -> None:
            try:
                answers.append(httpx.post(
                    f"{server.url}/api/projections", params={"wait": "true"}, timeout=600,
                    json={"run": run["name"], "embedding": run["embeddings"][0]["name"],
                          "method": "tsne", "params": {"n_iter": 100_000}}))
            except httpx.HTTPError as error:
                answers.append(error)

        waiting = threading.Thread(target=wait_for_a_long_tsne, daemon=True)
        waiting.start()
        deadline = time.monotonic() + 120
        while not [job for job in server.get("/api/jobs").json()["jobs"]
                    if job["status"] == "running"]:
            assert time.monotonic() < deadline, server.output()
            time.sleep(0.2)
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(HANG)
        except subprocess.TimeoutExpired:
            pytest.fail(f"projector serve {' '.join(dask)} still runs {HANG} s after SIGTERM "
                        f"with a ?wait=true request open")
        waiting.join(HANG)
        assert not waiting.is_alive(), "the open request was never answered nor closed"
        answer = answers[0]
        assert isinstance(answer, Exception) or answer.status_code == 409, answer
