"""Writers of one store take its write lock in turn, threads and processes alike.

SQLite makes a writer that finds the lock taken sleep longer and longer between tries (up to
100 ms), so under eight busy writers some waited past any timeout while the others committed
again and again (measured: a writer refused after 10 s). Here the threads of a process queue
on a lock, and the processes on an ``flock`` of a lock file beside the store, tried every
couple of milliseconds: the lock passes on within a few milliseconds of its release. SQLite's
own wait remains for programs that do not take part (the ``sqlite3`` shell).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from projector_core.annotations.errors import busy

try:
    import fcntl
except ImportError:  # not on Windows: SQLite's own wait then
    fcntl = None  # type: ignore[assignment]

POLL_SECONDS = 0.002


class WriteTurns:
    def __init__(self, store: Path, timeout: float) -> None:
        self.store, self.timeout = store, timeout
        self._thread_turn = threading.Lock()
        self._fd: int | None = (os.open(store.with_name(store.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
                    if fcntl is not None else None)

    @contextmanager
    def turn(self) -> Iterator[None]:
        """This writer's turn (:class:`StoreBusy` after ``timeout`` seconds of waiting)."""
        deadline = time.monotonic() + self.timeout
        if not self._thread_turn.acquire(timeout=self.timeout):
            raise busy(self.store)
        try:
            self._take_file(deadline)
            try:
                yield
            finally:
                if self._fd is not None:
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._thread_turn.release()

    def _take_file(self, deadline: float) -> None:
        while self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise busy(self.store) from None
                time.sleep(POLL_SECONDS)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
