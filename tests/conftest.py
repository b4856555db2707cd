"""Shared fixtures: the real app under uvicorn on 127.0.0.1, and the bundled sample data."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn
from projector.server.app import SAMPLE_DATA, create_app
from projector.server.stopping import StoppingServer

# The server imports openTSNE / scikit-learn on the first t-SNE request (or in its warm-up); the
# test process does it once here, so that no test's HTTP timeout pays for the import.
import projector_core.kernels.tsne  # noqa: F401

pytest_plugins = ["tests.ci_skips"]  # on CI, a skip is a failure unless the test allows it


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """uvicorn serving one app in a background thread, stopped at the end of the test."""

    def __init__(self, app) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = StoppingServer(config, end_streams=app.state.events.close)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test session caches under its own temp folder, never in the user's cache."""
    monkeypatch.setenv("PROJECTOR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(autouse=True)
def _isolated_annotations(tmp_path_factory: pytest.TempPathFactory,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps its labels and saved bookmarks in its own store, never in the user's
    data directory (``projector_core/annotations/location.py``); servers started as
    subprocesses inherit it."""
    store = tmp_path_factory.mktemp("annotations") / "annotations.sqlite"
    monkeypatch.setenv("PROJECTOR_ANNOTATIONS", str(store))


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """``serve(logdir, **create_app_options) -> base_url`` of a fresh app under real uvicorn."""
    servers: list[LiveServer] = []

    def start(logdir: str | Path | None = None, **options) -> str:
        options.setdefault("cache_dir", tmp_path / "cache")
        server = LiveServer(create_app(logdir, **options))
        server.start()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def sample_logdir() -> Path:
    return SAMPLE_DATA
