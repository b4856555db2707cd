"""Jobs a page started stop once no page follows them any more.

A t-SNE runs until its iterations are done, minutes on large data; when the tab that asked
for it closes, nobody will look at the result, yet it would hold one of the two job workers.
A page marks its jobs (``watch``); a page follows a job over its WebSocket stream (``following``)
or by polling its status (``seen``). When a watched job has had no follower for ``grace``
seconds (a reload, a dropped connection and the poll interval fit inside), it is cancelled.
A job that anything asked for without the mark (the REST API, a script, the MCP server) is
``keep``-marked and runs to its end, even when a page follows it too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from projector_core.jobs.job import Job

DEFAULT_GRACE = 20.0  # seconds a watched job may go unfollowed


@dataclass
class _Watch:
    job: Job
    kept: bool = False
    followers: int = 0
    last_seen: float = field(default_factory=time.monotonic)


class Followers:
    """Who follows which job; cancels watched jobs left alone for ``grace`` seconds."""

    def __init__(self, grace: float = DEFAULT_GRACE) -> None:
        self.grace = grace
        self._watches: dict[str, _Watch] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._reaper: threading.Thread | None = None

    def watch(self, job: Job) -> None:
        """``job`` (just started or reused for a page) stops when its page is gone."""
        self._add(job, kept=False)

    def keep(self, job: Job) -> None:
        """``job`` was asked for by something other than a page: it runs to its end."""
        self._add(job, kept=True)

    @contextmanager
    def following(self, job: Job) -> Iterator[None]:
        """A follower (a WebSocket stream) for as long as the block runs."""
        with self._lock:
            watch = self._watches.get(job.id)
            if watch is not None:
                watch.followers += 1
        try:
            yield
        finally:
            with self._lock:
                if watch is not None:
                    watch.followers -= 1
                    watch.last_seen = time.monotonic()

    def seen(self, job: Job) -> None:
        """A poll of the job's status: followed for another grace period."""
        with self._lock:
            self._touch(job)

    def stop(self) -> None:
        self._wake.set()

    def _add(self, job: Job, kept: bool) -> None:
        with self._lock:
            if job.status.finished:
                return
            watch = self._watches.setdefault(job.id, _Watch(job, kept=kept))
            watch.kept = watch.kept or kept
            watch.last_seen = time.monotonic()
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, name="projector-followers",
                                                daemon=True)
                self._reaper.start()

    def _touch(self, job: Job) -> None:
        watch = self._watches.get(job.id)
        if watch is not None:
            watch.last_seen = time.monotonic()

    def _reap(self) -> None:
        while not self._wake.wait(min(1.0, self.grace / 4)):
            now = time.monotonic()
            with self._lock:
                for job_id, watch in list(self._watches.items()):
                    if watch.job.status.finished:
                        del self._watches[job_id]
                    elif not watch.kept and watch.followers == 0 and now - watch.last_seen >= self.grace:
                        watch.job.cancel()
                        del self._watches[job_id]
