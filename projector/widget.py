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
import time
from pathlib import Path
from typing import Any

import anywidget
import numpy as np
import traitlets

from projector.local_server import LocalServer, memory_server
from projector_core.data.model import Embedding
from projector_core.semantic.models import ModelLoading

PROJECTIONS = ("pca", "tsne", "umap", "custom")


class Projector(anywidget.AnyWidget):
    """The projector in a notebook cell, over arrays, tensors, DataFrames or Arrow tables.

    ``Projector(vectors, metadata=..., labels=..., sprite=images_or_path, sprite_dim=(w, h))``
    starts the real server in this kernel on a free 127.0.0.1 port and shows its page. The view
    is two-way: ``selection``, ``color_by`` and ``projection`` follow the page and change it.
    ``token`` (default ``$PROJECTOR_TOKEN``) puts one on that server.
    """

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
                 token: str | None = None, model: str | None = None, port: int = 0,
                 **view: Any) -> None:
        """``model``: the sentence-transformers model that made the vectors (a folder or an
        installed model package): :meth:`search_meaning` and the page's meaning mode then
        search them by a phrase. ``port``: the kernel's server listens there (0, the default:
        any free port)."""
        wanted = {k: view[k] for k in ("selection", "color_by", "projection") if k in view}
        unknown = set(view) - set(wanted)
        if unknown:  # before a server is started for nothing
            raise TypeError(f"unknown arguments: {', '.join(sorted(unknown))}")
        if server is None:
            if vectors is None:
                raise TypeError("Projector() needs vectors (or use Projector.from_logdir)")
            server = memory_server(vectors, metadata, labels=labels, sprite=sprite,
                                   sprite_dim=sprite_dim, name=name, vector_column=vector_column,
                                   token=token, model=model, port=port)
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
                    model: str | list[str] | None = None, port: int = 0,
                    **view: Any) -> Projector:
        """The runs of a LOGDIR (read-only, watched for new ones) in the widget; ``model``
        as ``projector serve --model`` says which model made which embedding."""
        return cls(server=memory_server(logdir=logdir, token=token, model=model, port=port),
                   height=height,
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

    def search_meaning(self, text: str | list[str], k: int = 10, *, select: bool = True,
                       timeout: float = 600) -> Any:
        """The shown embedding's points nearest in meaning to each phrase (embedded by the
        model that made the vectors), as a pandas DataFrame indexed by point: the phrase, the
        similarity, the metadata. ``select``: they become the page's selection. Waits up to
        ``timeout`` seconds for a model still loading."""
        import pandas as pd

        embedding = self._shown_embedding()
        service = self._server.service
        texts = [text] if isinstance(text, str) else list(text)
        deadline = time.monotonic() + timeout
        while True:
            try:
                answer = service.search_meaning(embedding, texts, k)
                break
            except ModelLoading as loading:
                if not loading.job.wait(max(0.0, deadline - time.monotonic())):
                    raise TimeoutError(f"{loading} after {timeout} s") from None
        rows = [(p.text, row, similarity) for p in answer.phrases
                for row, similarity in zip(p.rows, p.similarities, strict=True)]
        metadata = embedding.metadata()
        columns = {name: metadata.column(name) for name in metadata.names} if metadata else {}
        frame = pd.DataFrame({"phrase": [r[0] for r in rows], "similarity": [r[2] for r in rows],
                              **{name: [values[r[1]] for r in rows]
                                 for name, values in columns.items()}},
                             index=pd.Index([r[1] for r in rows], name="index"))
        if select:
            self.selection = list(dict.fromkeys(frame.index))
        return frame

    def selected_frame(self) -> Any:
        """The metadata rows of the selected points, as a pandas DataFrame indexed by point:
        numbers as numbers, whole ones as int64 (as ``Client.metadata`` reads them)."""
        import pandas as pd

        embedding = self._shown_embedding()
        metadata = embedding.metadata_with_added()  # the annotation columns too
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

    # -- annotations: labels kept by the server's store, shown in the page at once ----------------
    def annotate(self, column: str, value: Any, rows: Any = None, *, kind: str | None = None,
                 user: str | None = None) -> dict[str, Any]:
        """Set ``column`` (new or existing) to ``value`` on ``rows`` (default: the selection)
        of the shown embedding, in one edit the page shows without reload: what changed
        (``edit`` id, rows ``changed``, ``rule``). A boolean makes a flag; ``kind``: label,
        flag or note; ``user``: the author (default "local")."""
        embedding = self._shown_embedding()
        chosen = list(self.selection) if rows is None else rows
        committed = self._annotations.annotate(embedding.run, embedding.name, column, value,
                                               chosen, user, kind)
        return {"edit": committed.edit.id, "column": column, "changed": committed.changed,
                "rows": committed.edit.rows, "rule": committed.rule}

    def undo(self, user: str | None = None) -> dict[str, Any]:
        """Undo ``user``'s (default "local") last edit of the shown embedding."""
        embedding = self._shown_embedding()
        committed = self._annotations.undo(embedding.run, embedding.name, user)
        return {"edit": committed.edit.id, "undid": committed.edit.target,
                "column": committed.edit.column, "changed": committed.changed}

    @property
    def annotations(self) -> Any:
        """The shown embedding's annotation columns as a pandas DataFrame indexed by point
        (categoricals; NaN where no value is set)."""
        import pandas as pd

        embedding = self._shown_embedding()
        frame = pd.DataFrame(index=pd.RangeIndex((embedding.shape or (0, 0))[0], name="index"))
        for column in self._annotations.columns(embedding.run, embedding.name):
            if column.shown:
                found = self._annotations.values(embedding.run, embedding.name, column.name)
                frame[column.name] = pd.Categorical.from_codes(found.codes - 1,
                                                               found.dictionary[1:])
        return frame

    @property
    def _annotations(self) -> Any:
        return self._server.app.state.projection_service.annotations

    def close(self) -> None:
        """Close the widget and stop its server."""
        server = getattr(self, "_server", None)  # none when the constructor failed before it
        if server is not None:
            server.stop()
        super().close()
