"""Stopping ``projector serve`` promptly: uvicorn's graceful shutdown waits for every open
request, and a ``?wait=true`` request waits for its job, so a long t-SNE would hold a SIGTERM
(or Ctrl-C) until it is done. Asked to stop, the server cancels its jobs first: each open wait
then answers (409, cancelled) and the shutdown goes on."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import FrameType

import uvicorn


class StoppingServer(uvicorn.Server):
    """A uvicorn server that calls ``on_stop`` (cancel the jobs) when a signal asks it to exit."""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_stop = on_stop

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # Not here: a signal handler runs between two bytecodes of the event loop's thread,
        # which may hold a job's lock that cancelling takes.
        threading.Thread(target=self.on_stop, name="projector-stop", daemon=True).start()
