"""``projector.show(vectors, metadata=...)``: the projector on in-memory data, from a script."""

from __future__ import annotations

import atexit
import sys
from typing import Any

from projector.local_server import LocalServer, memory_server

_running: list[LocalServer] = []  # kept alive for as long as this process runs


def _interactive() -> bool:
    return hasattr(sys, "ps1") or "IPython" in sys.modules


def show(vectors: Any, metadata: Any = None, *, labels: Any = None, sprite: Any = None,
         sprite_dim: tuple[int, int] | None = None, name: str = "embedding",
         vector_column: str | None = None, token: str | None = None, port: int = 0) -> str:
    """Serve ``vectors`` (array, DataFrame or Arrow table) with their metadata; print and
    return the URL (with ``?token=`` when the server has one: ``token``, default
    ``$PROJECTOR_TOKEN``) on ``port`` (0, the default: any free port).

    Nothing is written to disk. In a script the server keeps the process alive after the
    script's last line until Ctrl+C; in an interactive session it runs beside it.
    """
    server = memory_server(vectors, metadata, labels=labels, sprite=sprite,
                           sprite_dim=sprite_dim, name=name, vector_column=vector_column,
                           token=token, port=port)
    _running.append(server)
    interactive = _interactive()
    if not interactive:  # serve on after the script's last line, until Ctrl+C
        atexit.register(server.wait)
    print(f"Projector at {server.page_url}" + ("" if interactive else "  (Ctrl+C to stop)"),
          flush=True)
    return server.page_url
