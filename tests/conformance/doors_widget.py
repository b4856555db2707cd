"""The widget door: ``projector.Projector``'s Python side (no browser: its traits and methods).

Its server runs in this process; its cache is its own, through ``PROJECTOR_CACHE_DIR`` (the
widget takes no cache argument), set while it starts.
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
from tests.conformance.answers import Refused, frame_columns, png_pixels
from tests.conformance.dataset import Blobs


@contextmanager
def _cache(folder: Path) -> Iterator[None]:
    before = os.environ.get("PROJECTOR_CACHE_DIR")
    os.environ["PROJECTOR_CACHE_DIR"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PROJECTOR_CACHE_DIR")
        else:
            os.environ["PROJECTOR_CACHE_DIR"] = before


class Widget:
    def __init__(self, blobs: Blobs, work: Path) -> None:
        self.blobs = blobs
        self.work = work
        self._widgets: list[Projector] = []

    def _open(self, *args: Any, **kwargs: Any) -> Projector:
        with _cache(self.work / "cache"):
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
