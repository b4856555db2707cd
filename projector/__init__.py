"""Projector from Python: ``show()`` for scripts, ``Projector`` for notebooks, ``Client`` for
a running server's API, ``add_embedding`` to log embeddings from a training loop (PyTorch's
call, without torch) and ``projector.torch.ProbeLogger`` to log a layer's activations.

``Projector`` needs ``anywidget`` (``pip install 'embedding-projector[notebook]'``); it is imported only
when asked for, so ``show()`` works without it.
"""

from __future__ import annotations

from typing import Any

from projector.local_server import LocalServer, memory_server
from projector.script import show

__all__ = ["Client", "LocalServer", "Projector", "ProjectorError", "add_embedding",
           "memory_server", "show"]


def __getattr__(name: str) -> Any:
    if name == "add_embedding":  # the one writer: formats/writer.py
        from projector_core.formats.writer import add_embedding
        return add_embedding
    if name == "torch":  # projector.torch.ProbeLogger: imports torch, so only when asked for
        import importlib
        return importlib.import_module("projector.torch")
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
