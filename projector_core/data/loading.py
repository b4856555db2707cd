"""Tensors read in the background, so that the server lists a big LOGDIR at once.

An embedding whose tensor takes a while to read (a TSV to parse, a binary file to copy into
the cache) is listed straight away with ``status: "loading"`` and its progress; a single
loader thread reads it (the TSV parser itself uses every core) and then the finished embedding
takes the placeholder's place. Asking for a loading embedding's data raises
:class:`StillLoading`, which the server answers with 503 and the progress.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger("projector")

TELL_SECONDS = 0.25  # how often a load's progress is told (an event per step of the bar)


class LoadCancelled(Exception):
    """The run was re-read or dropped while one of its tensors was loading."""


@dataclass
class Loading:
    """How far a background read got; ``shape`` is known early for binary files."""

    source: str  # the file as shown to the user
    bytes_total: int
    bytes_done: int = 0
    shape: tuple[int, int] | None = None
    cancelled: bool = False
    waiting: str | None = None  # not read but waited for: why (a file still being written)
    finished: threading.Event = field(default_factory=threading.Event)
    # Told of progress (the catalog publishes it: pages show it without asking), at most
    # every TELL_SECONDS.
    listener: Callable[[Loading], None] | None = None
    told: float = 0.0

    @property
    def fraction(self) -> float:
        return min(1.0, self.bytes_done / self.bytes_total) if self.bytes_total else 0.0

    def report(self, done: int, total: int) -> None:
        """Progress from the reader; raising here is how a cancel stops it between blocks."""
        if self.cancelled:
            raise LoadCancelled(self.source)
        self.bytes_done, self.bytes_total = done, total or self.bytes_total
        now = time.monotonic()
        if self.listener is not None and now - self.told >= TELL_SECONDS:
            self.told = now
            self.listener(self)

    def describe(self) -> str:
        if self.waiting is not None:
            return f"{self.source} is still loading: {self.waiting}"
        return (f"{self.source} is still loading: {100 * self.fraction:.0f}% "
                f"({self.bytes_done / 2**20:.0f} of {self.bytes_total / 2**20:.0f} MiB)")


class StillLoading(Exception):
    """Data asked of an embedding whose tensor is still being read: try again shortly."""

    def __init__(self, loading: Loading) -> None:
        self.loading = loading
        super().__init__(loading.describe())


class BackgroundLoader:
    """One daemon thread running load tasks in the order given; started on the first task."""

    def __init__(self) -> None:
        self._tasks: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pending = 0
        self._idle = threading.Condition()

    def submit(self, task: Callable[[], None]) -> None:
        with self._idle:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="tensor-loader",
                                                daemon=True)
                self._thread.start()
        self._tasks.put(task)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until every task submitted so far has finished; False on timeout."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _run(self) -> None:
        while True:
            task = self._tasks.get()
            try:
                task()
            except LoadCancelled:
                pass
            except Exception:  # one broken load must not stop the others
                log.exception("loading a tensor failed")
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()
