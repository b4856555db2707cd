"""The real server (``create_app`` under uvicorn) on a free 127.0.0.1 port, in a thread of this
process: the data stays in memory and projections run here, through the same job engine."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import uvicorn
from fastapi import FastAPI

from projector.server.app import create_app
from projector.server.stopping import StoppingServer
from projector_core.data.catalog import Catalog
from projector_core.data.memory import memory_embedding, memory_run
from projector_core.kernels.text_encoder import resolve_model
from projector_core.semantic.declarations import declared_models
from projector_core.service import ProjectionService

RUN_NAME = "memory"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def behind_proxy() -> bool:
    """Colab and JupyterHub-style proxies reach the server under another Host name."""
    return "google.colab" in sys.modules or bool(os.environ.get("PROJECTOR_PROXY_URL"))


class LocalServer:
    """uvicorn serving one app from a background thread; ``stop()`` ends it.

    ``token``: the one the app was built with (``create_app(token=...)``), for the URLs below;
    ``port``: where it listens (0: any free port).
    """

    def __init__(self, app: FastAPI, token: str | None = None, port: int = 0) -> None:
        if not 0 <= port <= 65535:
            raise ValueError(f"port {port} is not a port: give 0..65535 (0: any free port)")
        self.app = app
        app.state.stopping = threading.Event()
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.token = token
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                timeout_graceful_shutdown=2)
        self._server = StoppingServer(config, end_streams=app.state.events.close)
        self._thread = threading.Thread(target=self._server.run, name=f"projector-{self.port}",
                                        daemon=True)

    @property
    def service(self) -> ProjectionService:
        """The app's projection service: what the widget asks, as the page's routes do."""
        service: ProjectionService = self.app.state.projection_service
        return service

    @property
    def page_url(self) -> str:
        """The page's URL for a browser tab: with ``?token=``, which becomes a cookie."""
        return self.url + (f"?token={quote(self.token, safe='')}" if self.token else "")

    @property
    def token_path(self) -> str:
        """The app's path under its token (``token/TOKEN/``) for an iframe of another site,
        where no cookie is kept; empty without a token."""
        return f"token/{quote(self.token, safe='')}/" if self.token else ""

    def start(self, timeout: float = 30) -> LocalServer:
        """Start serving in a background thread; return once it answers (``RuntimeError`` if it
        has not within ``timeout`` seconds)."""
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the projector server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        """Stop the server and wait (at most 10 s) for its thread to end."""
        self.app.state.stopping.set()  # long polls answer at once instead of holding the exit
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def wait(self) -> None:
        """Block until the server stops; Ctrl+C stops it."""
        try:
            while self._thread.is_alive():
                self._thread.join(0.5)
        except KeyboardInterrupt:
            self.stop()


def memory_server(vectors: Any = None, metadata: Any = None, *, logdir: str | Path | None = None,
                  name: str = "embedding", labels: Any = None, sprite: Any = None,
                  sprite_dim: tuple[int, int] | None = None,
                  vector_column: str | None = None, token: str | None = None,
                  model: str | list[str] | None = None, port: int = 0) -> LocalServer:
    """A started server over in-memory data (run ``memory``), or over a LOGDIR, or both.

    ``token`` (default ``$PROJECTOR_TOKEN``): every request needs it, as for ``projector serve
    --token``; for a machine shared with other users, whom 127.0.0.1 does not keep out.
    ``model``: the model that made the vectors (search by meaning), or for a LOGDIR the
    ``projector serve --model`` forms (MODEL, RUN/EMBEDDING=MODEL); loaded in the background.
    ``port``: where it listens (0, the default: any free port).
    """
    token = token if token is not None else os.environ.get("PROJECTOR_TOKEN") or None
    catalog = Catalog(logdir)
    catalog.refresh()
    own = model if isinstance(model, str) and logdir is None else None  # the vectors' model
    if vectors is not None:
        embedding = memory_embedding(RUN_NAME, name, vectors, metadata, labels=labels,
                                     sprite=sprite, sprite_dim=sprite_dim,
                                     vector_column=vector_column, model=own)
        catalog.add_run(memory_run(RUN_NAME, [embedding]))
    flags = [] if own is not None else [model] if isinstance(model, str) else list(model or [])
    declared = declared_models(flags, [(run.name, e.name) for run in catalog.runs()
                                       for e in run.embeddings])
    for found in {*declared.values(), *([own] if own else [])}:
        resolve_model(found)  # a model not here is said now, not at the first phrase
    app = create_app(catalog=catalog, refresh_seconds=2.0 if logdir is not None else 0,
                     allowed_hosts=["*"] if behind_proxy() else None, token=token,
                     framed_by_any_page=True,  # the widget's iframe, in a notebook's page
                     models=declared, load_models=True)
    return LocalServer(app, token, port).start()
