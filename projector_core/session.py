"""The view a notebook widget shares with its page: selection, colour column, projection.

The page (the front end in the widget's iframe) and Python both write it; each write bumps a
version and names its origin, so each side applies only the other's changes. Python code
subscribes to hear the page's writes; the page long-polls for Python's (``/api/session/state``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from projector_core.data.catalog import Catalog

FIELDS = ("run", "embedding", "selection", "color_by", "projection")
Listener = Callable[[str, dict[str, Any]], None]


class SessionState:
    def __init__(self) -> None:
        self.version = 0
        self.origin: str | None = None
        self._values: dict[str, Any] = {"run": None, "embedding": None, "selection": [],
                                        "color_by": None, "projection": None}
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"version": self.version, "origin": self.origin, **self._values,
                    "selection": list(self._values["selection"])}

    def update(self, origin: str, **changes: Any) -> dict[str, Any]:
        """Apply the changes (unknown names are a bug: KeyError); listeners hear real changes."""
        with self._lock:
            unknown = set(changes) - set(FIELDS)
            if unknown:
                raise KeyError(", ".join(sorted(unknown)))
            changed = {k: v for k, v in changes.items() if self._values[k] != v}
            if changed:
                self._values.update(changed)
                self.version += 1
                self.origin = origin
            listeners = list(self._listeners) if changed else []
        snapshot = self.snapshot()
        for listener in listeners:
            listener(origin, snapshot)
        return snapshot

    def subscribe(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.append(listener)


def check_view(catalog: Catalog, current: dict[str, Any], changes: dict[str, Any]) -> None:
    """ValueError for a view that names what does not exist: an unknown run or embedding, a
    colour column the metadata lacks, a selected index past N. The view's embedding is the
    one ``changes`` or ``current`` names, else the first (what the page then shows)."""
    view = {**current, **changes}
    runs = catalog.runs()
    if not runs:
        return
    try:  # an unknown name: the catalogue's sentence, a 422 here (a view names it)
        run = catalog.run(view["run"]) if view.get("run") is not None else runs[0]
        embedding = (run.embedding(view["embedding"]) if view.get("embedding") is not None
                     else run.embeddings[0])
    except KeyError as error:
        raise ValueError(str(error)) from None
    except IndexError:
        return  # a run without embeddings: nothing to check against
    if embedding.loading is not None or embedding.shape is None:
        return  # not read yet (or unreadable): the page reports it
    where = f"{run.name}/{embedding.name}"
    color = changes.get("color_by")
    columns = embedding.metadata_columns() or ["index"]
    if color is not None and color not in columns:
        raise ValueError(f"unknown column {color!r} for color_by: {where} has "
                         f"{', '.join(columns)}")
    n = embedding.shape[0]
    past = [i for i in changes.get("selection") or [] if not 0 <= i < n]
    if past:
        raise ValueError(f"selection index {past[0]} out of range: {where} has {n} points "
                         f"(0..{n - 1})")
