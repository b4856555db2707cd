"""The conventions a newcomer meets first (issue 33, item 6): a named neighbour pair, the
coroutine said as one, a real ``--help``, progress lines fit for a log, and a body sent
without its JSON content type told what to send."""

from __future__ import annotations

import inspect
import subprocess
import sys

import httpx
import numpy as np
import pytest

from projector import Client
from tests.builders import write_tsv
from tests.test_cli import PROJECTOR
from tests.test_cli_first_minute import run_cli


def test_neighbors_is_a_named_pair_in_todays_order(serve, sample_logdir):
    client = Client(serve(sample_logdir))
    found = client.neighbors("iris", "iris", index=0, k=3)
    indices, distances = found
    assert found.indices is indices and found.distances is distances
    assert indices.dtype == np.int64 and len(indices) == 3 and 0 not in indices
    assert list(distances) == sorted(distances)


def test_project_async_says_it_is_a_coroutine():
    method = Client.project_async
    assert inspect.iscoroutinefunction(method)
    assert "coroutine" in (method.__doc__ or "") and "await" in (method.__doc__ or "")


def test_the_top_level_help_describes_the_tool():
    done = run_cli("--help")
    assert done.returncode == 0
    assert "explore embeddings" in done.stdout and "``" not in done.stdout
    assert "bound first" not in done.stdout  # the module's docstring is for developers
    render = run_cli("render", "--help").stdout
    assert "--projection {" in render and "the projection drawn" in render


def test_progress_is_one_line_per_update_when_not_a_terminal(tmp_path):
    logdir = tmp_path / "logs"
    write_tsv(logdir / "run" / "t.tsv", np.ones((400, 3), np.float32))
    (logdir / "run" / "projector_config.pbtxt").write_text(
        'embeddings { tensor_name: "t" tensor_path: "t.tsv" }')
    done = subprocess.run([*PROJECTOR, "render", str(logdir), "-o", str(tmp_path / "p.png"),
                           "--width", "200", "--cache-dir", str(tmp_path / "cache")],
                          capture_output=True, timeout=120)  # bytes: a \r is kept as sent
    assert done.returncode == 0, done.stderr
    assert b"\r" not in done.stderr and b"\r" not in done.stdout
    lines = done.stderr.decode().splitlines()
    assert lines and all(line.strip() for line in lines), "one line per update, none blank"


def test_progress_overwrites_itself_on_a_terminal():
    code = ("import sys; sys.stderr.isatty = lambda: True\n"
            "from projector.server.export_cli import StageLine\n"
            "line = StageLine(); line('pca', 0.5); line('pca', 1.0); line.end()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.returncode == 0 and done.stderr.count(b"\r") >= 2 and b"\n" not in done.stderr


@pytest.mark.quiet_server
@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_a_post_without_json_content_type_is_told_what_to_send(serve, sample_logdir, content_type):
    base = serve(sample_logdir)
    headers = {"content-type": content_type} if content_type else {}
    answer = httpx.post(f"{base}/api/projections", headers=headers,
                        content=b'{"run": "iris", "embedding": "iris", "method": "pca"}')
    assert answer.status_code == 422
    assert "Content-Type: application/json" in answer.json()["detail"]
    sent = httpx.post(f"{base}/api/projections", json={"run": "iris", "embedding": "iris",
                                                       "method": "pca"})
    assert sent.status_code in (200, 201, 202)
