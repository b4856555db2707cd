"""The widget door: ``projector.Projector``'s Python side (no browser: its traits and methods).

Its server runs in this process; its cache and annotation store are its own, through
``PROJECTOR_CACHE_DIR`` and ``PROJECTOR_ANNOTATIONS`` (the widget takes neither as an
argument), set while it starts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import traitlets

from projector import Projector
from tests.conformance.answers import Refused, column_answer, frame_columns, png_pixels
from tests.conformance.dataset import Blobs


@contextmanager
def _own(work: Path) -> Iterator[None]:
    """The environment a widget starts in: the door's cache and annotation store."""
    own = {"PROJECTOR_CACHE_DIR": str(work / "cache"),
           "PROJECTOR_ANNOTATIONS": str(work / "annotations.sqlite")}
    before = {name: os.environ.get(name) for name in own}
    os.environ.update(own)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value


class Widget:
    def __init__(self, blobs: Blobs, work: Path) -> None:
        self.blobs = blobs
        self.work = work
        self._widgets: list[Projector] = []
        self._labelling: Projector | None = None

    def _open(self, *args: Any, **kwargs: Any) -> Projector:
        with _own(self.work):
            widget = (Projector.from_logdir(self.blobs.logdir) if not args and not kwargs
                      else Projector(*args, **kwargs))
        self._widgets.append(widget)
        return widget

    def close(self) -> None:
        for widget in self._widgets:
            widget.close()

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        frame = pd.DataFrame(self.blobs.table(request))
        widget = self._open(self.blobs.vectors, frame)
        widget.selection = list(range(len(self.blobs.vectors)))
        table = widget.selected_frame()
        return {"rows": len(table), "metadata": frame_columns(table)}

    def render(self, request: dict[str, Any]) -> Any:
        widget = self._open()
        path = self.work / f"picture-{len(self._widgets)}.png"
        try:
            widget.run = request["run"]
            widget.embedding = request["embedding"]
            widget.projection = request["projection"]
            widget.save_image(path, width=request["width"])
        except (traitlets.TraitError, ValueError, LookupError) as error:
            raise Refused(str(error).strip("'\"")) from None
        return png_pixels(path.read_bytes())

    def annotate(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._labelling is None:
            self._labelling = self._open()
        widget = self._labelling
        try:
            widget.run = request["run"]
            widget.embedding = request["embedding"]
            changed = [widget.annotate(request["column"], edit["value"], edit["rows"])["changed"]
                       for edit in request["edits"]]
        except (traitlets.TraitError, ValueError, LookupError) as error:
            raise Refused(str(error)) from None
        if request.get("undo"):
            widget.undo()
        return column_answer(changed, widget.annotations[request["column"]].tolist())
