"""Stopping ``projector serve`` promptly: uvicorn's graceful shutdown waits for every open
request, and a ``?wait=true`` request waits for its job, so a long t-SNE would hold a SIGTERM
(or Ctrl-C) until it is done. Asked to stop, the server cancels its jobs first: each open wait
then answers (409, cancelled) and the shutdown goes on. Open event streams (``GET /api/events``)
never end by themselves: they are ended before uvicorn waits for the open requests, however the
server was asked to stop (a signal, or ``should_exit`` from the thread that runs it)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from types import FrameType

import uvicorn


class StoppingServer(uvicorn.Server):
    """A uvicorn server that calls ``on_stop`` (cancel the jobs) when a signal asks it to exit,
    and ``end_streams`` (close the event hub) as its shutdown begins."""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None] | None = None,
                 end_streams: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.on_stop = on_stop
        self.end_streams = end_streams

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # Not here: a signal handler runs between two bytecodes of the event loop's thread,
        # which may hold a job's lock that cancelling takes.
        if self.on_stop is not None:
            threading.Thread(target=self.on_stop, name="projector-stop", daemon=True).start()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.end_streams is not None:
            self.end_streams()
        await super().shutdown(sockets)
