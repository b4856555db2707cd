"""`projector serve` as a user runs it: a real subprocess on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from projector_core.formats.writer import add_embedding
from tests.builders import write_tsv
from tests.cli_server import cli_server

PROJECTOR = [sys.executable, "-m", "projector.server.cli"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run_until_served(args: list[str], tmp_path: Path) -> tuple[str, str, str]:
    """Start the server, wait for /api/health, return (url, stdout, stderr) after stopping it."""
    port = _free_port()
    env_cache = ["--cache-dir", str(tmp_path / "cache")]
    process = subprocess.Popen([*PROJECTOR, "serve", *args, "--port", str(port), *env_cache],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/api/health").status_code == 200:
                    runs = httpx.get(f"{url}/api/runs").json()
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            raise AssertionError("server did not come up")
    finally:
        process.terminate()
        stdout, stderr = process.communicate(timeout=20)
    return str(runs), stdout, stderr


def test_serve_without_logdir_opens_the_sample_data(tmp_path):
    runs, stdout, _ = _run_until_served([], tmp_path)
    assert "digits" in runs and "words" in runs
    assert "http://localhost:" in stdout
    assert "digits  1797x64" in stdout


def test_serve_prints_what_it_found_and_a_progress_line(tmp_path):
    logdir = tmp_path / "logs"
    write_tsv(logdir / "good" / "t.tsv", np.ones((4, 3), np.float32))
    (logdir / "good" / "projector_config.pbtxt").write_text(
        'embeddings { tensor_name: "t" tensor_path: "t.tsv" }')
    (logdir / "bad").mkdir()
    (logdir / "bad" / "projector_config.pbtxt").write_text("embeddings {")
    runs, stdout, stderr = _run_until_served([str(logdir)], tmp_path)
    assert "'name': 'good'" in runs
    assert "run good" in stdout and "t  4x3  tensor=good/t.tsv" in stdout
    assert "run bad" in stdout and "skipped: bad/projector_config.pbtxt line 1" in stdout
    assert "parsing good/t.tsv" in stderr and "100.0%" in stderr


@pytest.mark.parametrize(("make", "code", "message"), [
    (lambda p: p / "missing", 2, "does not exist"),
    (lambda p: p, 1, "no projector_config.pbtxt or projector_config.json found"),
])
def test_missing_or_empty_logdir_is_a_clear_message(tmp_path, make, code, message):
    result = subprocess.run([*PROJECTOR, "serve", str(make(tmp_path))], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_port_in_use_is_a_clear_message(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = subprocess.run([*PROJECTOR, "serve", "--port", str(port), "--cache-dir",
                                 str(tmp_path / "cache")], capture_output=True, text=True,
                                timeout=60)
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_serve_wait_serves_an_empty_logdir_and_lists_runs_as_they_are_written(tmp_path):
    """`--wait`: a LOGDIR with no runs yet is served (not refused), and a run written into it
    afterwards, by the project's writer, appears in /api/runs and can be read."""
    logdir = tmp_path / "logs"
    logdir.mkdir()
    with cli_server([str(logdir), "--wait"], tmp_path) as server:
        assert server.get("/api/runs").json() == []
        vectors = np.random.default_rng(0).normal(size=(20, 4)).astype(np.float32)
        add_embedding(logdir / "later", vectors, [f"p{i}" for i in range(20)], tag="t")
        deadline = time.monotonic() + 120
        while not [e for r in server.get("/api/runs").json() if r["name"] == "later"
                   for e in r["embeddings"] if e["status"] == "ready"]:
            assert time.monotonic() < deadline, server.output()
            time.sleep(0.2)
        tensor = server.get("/api/tensor", run="later", embedding="t:00000")
        assert np.frombuffer(tensor.content, "<f4").reshape(20, 4).tolist() == vectors.tolist()
        assert f"no runs yet under {logdir}; watching for new ones" in server.output()
