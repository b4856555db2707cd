"""Projector from Python: ``show()`` for scripts, ``Projector`` for notebooks, ``Client`` for
a running server's API.

``Projector`` needs ``anywidget`` (``pip install 'embedding-projector[notebook]'``); it is imported only
when asked for, so ``show()`` works without it.
"""

from __future__ import annotations

from typing import Any

from projector.local_server import LocalServer, memory_server
from projector.script import show

__all__ = ["Client", "LocalServer", "Projector", "ProjectorError", "memory_server", "show"]


def __getattr__(name: str) -> Any:
    if name == "Client":
        from projector.client.api import Client
        return Client
    if name == "ProjectorError":  # what a refused Client call raises: caught beside Client
        from projector.client.api import ProjectorError
        return ProjectorError
    if name == "Projector":
        try:
            from projector.widget import Projector
        except ImportError as exc:
            raise ImportError(f"the notebook widget needs anywidget ({exc}): "
                              "pip install 'embedding-projector[notebook]'") from None
        return Projector
    raise AttributeError(name)
