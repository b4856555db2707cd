"""The suite's data, reference and doors: each door started once, on first use, over a result
cache and an annotation store of its own (so that no shared cache or store makes two doors
agree), and closed at the end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from projector.server.cli import build_parser, serve_app

from tests.conformance.dataset import Blobs, write_blobs
from tests.conformance.doors_cli import Cli
from tests.conformance.doors_http import ClientDoor, Rest
from tests.conformance.doors_mcp import Mcp, mcp_sessions
from tests.conformance.doors_page import PageDoor, chromium
from tests.conformance.doors_widget import Widget
from tests.conformance.reference import Reference
from tests.conftest import LiveServer
from tests.page_policy import waits_under_the_page_policy  # noqa: F401 (an autouse fixture)


@pytest.fixture(scope="session")
def blobs(tmp_path_factory: pytest.TempPathFactory) -> Blobs:
    return write_blobs(tmp_path_factory.mktemp("blobs"))


@pytest.fixture(scope="session")
def reference(blobs: Blobs, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return Reference(blobs, tmp_path_factory.mktemp("reference-cache"))


@pytest.fixture(scope="module")  # not session: the page door's event loop would outlive the suite
def door(blobs: Blobs, tmp_path_factory: pytest.TempPathFactory,
         request: pytest.FixtureRequest) -> Iterator[Callable[[str], Any]]:
    """``door(name)``: that door's adapter, started on first use."""
    started: dict[str, Any] = {}
    with ExitStack() as stack:

        def server(name: str) -> str:
            """`projector serve LOGDIR --cache-dir OWN --annotations OWN`, as the CLI builds
            it, under uvicorn."""
            request.getfixturevalue("_compute_warmed_up")
            own = work(name)
            argv = ["serve", str(blobs.logdir), "--cache-dir", str(own / "cache"),
                    "--annotations", str(own / "annotations.sqlite")]
            live = LiveServer(serve_app(build_parser().parse_args(argv)))
            live.start()
            stack.callback(live.stop)
            return live.url

        def work(name: str) -> Path:
            return tmp_path_factory.mktemp(f"door-{name}")

        def make(name: str) -> Any:
            if name == "rest":
                return Rest(server(name), blobs, work(name))
            if name == "client":
                return ClientDoor(server(name), blobs)
            if name == "widget":
                widget = Widget(blobs, work(name))
                stack.callback(widget.close)
                return widget
            if name == "mcp":
                mcp = Mcp(stack.enter_context(mcp_sessions()), blobs, work(name) / "cache")
                stack.callback(mcp.close)
                return mcp
            if name == "cli":
                return Cli(blobs, work(name))
            if name == "page":
                return PageDoor(stack.enter_context(chromium()), server(name), blobs, work(name))
            raise KeyError(name)

        def get(name: str) -> Any:
            if name not in started:
                started[name] = make(name)
            return started[name]

        yield get
