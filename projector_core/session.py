"""The view a notebook widget shares with its page: selection, colour column, projection.

The page (the front end in the widget's iframe) and Python both write it; each write bumps a
version and names its origin, so each side applies only the other's changes. Python code
subscribes to hear the page's writes; the page long-polls for Python's (``/api/session/state``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

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
