"""``Projector``: the projector's own front end inside a notebook cell, two-way with Python.

The widget starts the real server in the kernel process (:mod:`projector.local_server`) and
its front-end module shows that server's page in an iframe: one code base, nothing fetched
from a CDN. The page and Python share the view through ``/api/session/state``: the user's
selection, colour column and projection arrive in the traits below, and setting a trait
changes the page. Projections run in the kernel through the server's projection service (the
page's jobs, streamed), which the widget asks for everything else too: the shown embedding,
a view's check, a saved picture.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import anywidget
import numpy as np
import traitlets

from projector.local_server import LocalServer, memory_server
from projector_core.data.model import Embedding

PROJECTIONS = ("pca", "tsne", "umap", "custom")


class Projector(anywidget.AnyWidget):
    _esm = Path(__file__).with_name("widget.js")

    url = traitlets.Unicode("", help="The page of the server in this kernel").tag(sync=True)
    path = traitlets.Unicode("", help="The page's path under url: token/TOKEN/ when the "
                             "server has a token").tag(sync=True)
    port = traitlets.Int(0).tag(sync=True)
    height = traitlets.Int(640).tag(sync=True)
    run = traitlets.Unicode(None, allow_none=True, help="Run shown in the page")
    embedding = traitlets.Unicode(None, allow_none=True, help="Embedding shown in the page")
    selection = traitlets.List(traitlets.Int(), help="Selected point indices")
    color_by = traitlets.Unicode(None, allow_none=True, help="Metadata column the points are "
                                                              "coloured by")
    projection = traitlets.Unicode("pca", help="pca, tsne, umap or custom")

    def __init__(self, vectors: Any = None, metadata: Any = None, *, labels: Any = None,
                 sprite: Any = None, sprite_dim: tuple[int, int] | None = None,
                 name: str = "embedding", vector_column: str | None = None,
                 height: int = 640, server: LocalServer | None = None,
                 token: str | None = None, port: int = 0, **view: Any) -> None:
        """``port``: the kernel's server listens there (0, the default: any free port)."""
        wanted = {k: view[k] for k in ("selection", "color_by", "projection") if k in view}
        unknown = set(view) - set(wanted)
        if unknown:  # before a server is started for nothing
            raise TypeError(f"unknown arguments: {', '.join(sorted(unknown))}")
        if server is None:
            if vectors is None:
                raise TypeError("Projector() needs vectors (or use Projector.from_logdir)")
            server = memory_server(vectors, metadata, labels=labels, sprite=sprite,
                                   sprite_dim=sprite_dim, name=name, vector_column=vector_column,
                                   token=token, port=port)
        self._server = server
        self._session = server.app.state.session
        self._from_page = threading.local()
        proxy = os.environ.get("PROJECTOR_PROXY_URL")  # e.g. /proxy/{port}/ (jupyter-server-proxy)
        super().__init__(url=proxy.format(port=server.port) if proxy else server.url,
                         path=server.token_path, port=server.port, height=height)
        self._session.subscribe(self._page_changed)
        for key, value in wanted.items():
            setattr(self, key, value)

    @classmethod
    def from_logdir(cls, logdir: str | Path, *, height: int = 640, token: str | None = None,
                    port: int = 0, **view: Any) -> Projector:
        """The runs of a LOGDIR (read-only, watched for new ones) in the widget."""
        return cls(server=memory_server(logdir=logdir, token=token, port=port), height=height,
                   **view)

    # -- Python -> page ----------------------------------------------------------------------
    @traitlets.validate("projection")
    def _check_projection(self, proposal: dict[str, Any]) -> str:
        if proposal["value"] not in PROJECTIONS:
            raise traitlets.TraitError(f"projection must be one of {', '.join(PROJECTIONS)}")
        return proposal["value"]

    @traitlets.validate("selection", "color_by", "run", "embedding")
    def _check_exists(self, proposal: dict[str, Any]) -> Any:
        """An unknown run, embedding or column or an index past N is refused here, not stored
        for the page."""
        value = proposal["value"]
        if getattr(self._from_page, "active", False):
            return value
        name = proposal["trait"].name
        changes = {"run": {"run": value, "embedding": None},  # its first embedding
                   "embedding": {"run": self.run, "embedding": value},
                   "selection": {"selection": list(value)}}.get(name, {name: value})
        try:
            self._server.service.check_view(self._session.snapshot(), changes)
        except ValueError as error:
            raise traitlets.TraitError(str(error)) from None
        return value

    @traitlets.observe("selection", "color_by", "projection")
    def _python_changed(self, change: dict[str, Any]) -> None:
        if getattr(self._from_page, "active", False):
            return
        value = list(change["new"]) if change["name"] == "selection" else change["new"]
        self._session.update("python", **{change["name"]: value})

    # -- page -> Python ------------------------------------------------------------------------
    def _page_changed(self, origin: str, state: dict[str, Any]) -> None:
        if origin != "page":
            return
        self._from_page.active = True
        try:
            with self.hold_trait_notifications():
                for key in ("run", "embedding", "selection", "color_by", "projection"):
                    if state[key] is not None or key in ("color_by", "run", "embedding"):
                        setattr(self, key, state[key])
        finally:
            self._from_page.active = False

    def _shown_embedding(self) -> Embedding:
        return self._server.service.shown_embedding(self.run, self.embedding)

    def save_image(self, path: str | Path, width: int = 2000, **options: Any) -> Path:
        """The widget's projection, coloured as in the page, drawn as a picture at ``path``
        (``projector render``'s renderer; computed or reused through the server's jobs).
        ``options``: height, point_size, legend. ValueError (the service's sentence) for a
        projection no view opens unasked (custom)."""
        if self.color_by is not None:  # else the page's default column
            options["color_by"] = self.color_by
        self._server.service.render(self._shown_embedding(), self.projection, Path(path),
                                    width, **options)
        return Path(path)

    def selected_frame(self) -> Any:
        """The metadata rows of the selected points, as a pandas DataFrame indexed by point:
        numbers as numbers, whole ones as int64 (as ``Client.metadata`` reads them)."""
        import pandas as pd

        embedding = self._shown_embedding()
        metadata = embedding.metadata()
        rows = list(self.selection)
        if metadata is None:
            return pd.DataFrame(index=pd.Index(rows, name="index"))
        frame = pd.DataFrame({name: [metadata.column(name)[i] for i in rows]
                              for name in metadata.names}, index=pd.Index(rows, name="index"))
        for name in metadata.names:
            numbers = metadata.numeric(name)
            if numbers is None:
                continue
            whole = bool(np.all(np.isfinite(numbers)) and np.all(numbers == np.round(numbers)))
            frame[name] = numbers[rows].astype(np.int64) if whole else numbers[rows]
        return frame

    def close(self) -> None:
        """Close the widget and stop its server."""
        server = getattr(self, "_server", None)  # none when the constructor failed before it
        if server is not None:
            server.stop()
        super().close()
