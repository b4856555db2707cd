"""Shared fixtures: the real app under uvicorn on 127.0.0.1, and the bundled sample data.

A test's server is the one ``projector serve`` builds (``serve_app``): it warms the compute
libraries up and prepares the first view in the background, as a user's does. A test whose
assertions need a server doing nothing by itself is marked ``@pytest.mark.quiet_server``.
Every server of a session, in this process or a subprocess, compiles numba's kernels into
one cache, once.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn
from projector.server.app import SAMPLE_DATA
from projector.server.cli import build_parser, serve_app
from projector.server.stopping import StoppingServer

# The server imports openTSNE / scikit-learn on the first t-SNE request (or in its warm-up); the
# test process does it once here, so that no test's HTTP timeout pays for the import.
import projector_core.kernels.tsne  # noqa: F401
from projector_core.projection import warmup

pytest_plugins = ["tests.ci_skips"]  # on CI, a skip is a failure unless the test allows it


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    """uvicorn serving one app in a background thread, stopped at the end of the test."""

    def __init__(self, app, port: int | None = None) -> None:
        self.port = port or _free_port()
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


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """One numba cache for the session (numba reads it when first imported, which collecting a
    test module may do); servers and their subprocesses inherit it, so the warm-up's kernels
    are compiled once, not once per server."""
    numba = config._tmp_path_factory.getbasetemp() / "numba"  # type: ignore[attr-defined]
    os.environ.setdefault("NUMBA_CACHE_DIR", str(numba))


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


@pytest.fixture(scope="session")
def _compute_warmed_up() -> None:
    """The warm-up ``projector serve`` starts (once a process), over before the session's first
    server that would start it: no test's requests race it by chance (the tests of the warm-up
    itself race it on purpose, test_umap_neighbors.py and test_cli_options.py)."""
    warmup.start_warm_up(delay=0)
    assert warmup.ready.wait(600), "the compute libraries' warm-up did not end"


@pytest.fixture
def serve(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., str]]:
    """``serve(logdir, **create_app_options) -> base_url``: a fresh app under real uvicorn,
    configured as ``projector serve LOGDIR --cache-dir TMP/cache`` configures it (the options
    are ``create_app``'s keywords, over the CLI's); quiet (no warm-up, no prepared view)
    for a test marked ``quiet_server``."""
    servers: list[LiveServer] = []
    quiet = request.node.get_closest_marker("quiet_server") is not None

    def start(logdir: str | Path | None = None, **options) -> str:
        argv = ["serve", *([str(logdir)] if logdir is not None else []),
                *([] if "cache_dir" in options else ["--cache-dir", str(tmp_path / "cache")]),
                *(["--no-warm-up"] if quiet else [])]
        if quiet:
            options.setdefault("prepare_view", False)
        else:
            request.getfixturevalue("_compute_warmed_up")
        server = LiveServer(serve_app(build_parser().parse_args(argv), **options))
        server.start()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def sample_logdir() -> Path:
    return SAMPLE_DATA
