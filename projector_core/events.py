"""The one stream of what changed on the server, for every page, client and agent following it.

Publishers (the catalog: runs, embeddings and training steps added, changed, removed; later
others, e.g. annotation edits) call :meth:`EventHub.publish` from any thread; each follower
holds a :class:`Subscription` and reads its events in order, from a thread or an event loop.
The hub knows no kind of its own: a kind is a name and its data is JSON-ready.

Memory stays bounded whatever the followers do: the hub keeps the last ``history`` events
(for a follower that reconnects to resume where it was, SSE's ``Last-Event-ID``), and each
subscription holds at most ``queue_limit`` undelivered ones. A follower that falls that far
behind has its queue coalesced (a newer event about the same thing, its ``key``, replaces an
older one still queued: events carry whole states, not deltas), and if that is not enough its
queue is dropped for one ``reset`` event telling it to read the state again. Ids are
``EPOCH-N``: ``N`` counts up, ``EPOCH`` is drawn at start, so an id from an earlier server is
never taken for one of this server's.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

HISTORY = 1000  # events kept for followers that reconnect (Last-Event-ID)
QUEUE_LIMIT = 1000  # undelivered events one follower may hold before its queue is coalesced
RESET = "reset"  # the kind of the event that tells a follower to read the state again

ADDED, CHANGED, REMOVED = "added", "changed", "removed"


@dataclass(frozen=True)
class Event:
    """Something that changed: ``kind`` names what (``run``, ``embedding``, ``step``, ...),
    ``action`` what happened to it, ``data`` its state after (JSON-ready). Events with the same
    ``key`` describe the same thing, so the newer one supersedes the older in a full queue."""

    kind: str
    action: str
    data: Mapping[str, Any] = field(default_factory=dict)
    key: str | None = None
    id: str = ""  # EPOCH-N, set by the hub
    seq: int = 0  # N
    time: float = 0.0  # wall-clock seconds when published

    def superseding(self, older: Event) -> Event:
        """This event standing for ``older`` too: a thing added, then changed, is added."""
        if older.action == ADDED and self.action == CHANGED:
            return replace(self, action=ADDED)
        return self


class EventHub:
    """Publish from any thread; subscribe for a bounded, ordered queue of what follows."""

    def __init__(self, history: int = HISTORY, queue_limit: int = QUEUE_LIMIT) -> None:
        self.epoch = secrets.token_hex(4)
        self.queue_limit = queue_limit
        self._history: deque[Event] = deque(maxlen=history)
        self._subscriptions: set[Subscription] = set()
        self._seq = 0
        self._closed = False
        self._lock = threading.Lock()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def last_id(self) -> str:
        return f"{self.epoch}-{self._seq}"

    def publish(self, kind: str, action: str, data: Mapping[str, Any] | None = None,
                key: str | None = None) -> Event:
        """Record an event and queue it for every subscription (in one order for all)."""
        with self._lock:
            self._seq += 1
            event = Event(kind, action, dict(data or {}), key, f"{self.epoch}-{self._seq}",
                          self._seq, time.time())
            self._history.append(event)
            for subscription in self._subscriptions:
                subscription.put(event)
        return event

    def subscribe(self, last_id: str | None = None) -> Subscription:
        """A new follower. With ``last_id`` (an id it saw before it disconnected), the events
        after it come first; when they are no longer all kept, or ``last_id`` is another
        server's, a ``reset`` event comes first instead. Its ``start_id`` is the id the queue
        starts after (what SSE's first message sends, so that even a follower that saw no
        event resumes from there)."""
        with self._lock:
            subscription = Subscription(self, self.last_id)
            resumed = self._after(last_id) if last_id else []
            if resumed is None:
                subscription.put(self._reset(self._seq, "the events since the last one seen "
                                                        "are no longer kept"))
            else:
                subscription.start_id = last_id or self.last_id
                for event in resumed:
                    subscription.put(event)
            if self._closed:
                subscription.end()
            else:
                self._subscriptions.add(subscription)
        return subscription

    def close(self) -> None:
        """End every subscription (the server stops): their readers get ``None``."""
        with self._lock:
            self._closed = True
            subscriptions, self._subscriptions = self._subscriptions, set()
        for subscription in subscriptions:
            subscription.end()

    def _forget(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions.discard(subscription)

    def _after(self, last_id: str) -> list[Event] | None:
        """The kept events after ``last_id``; None when they cannot all be given."""
        epoch, _, number = last_id.partition("-")
        if epoch != self.epoch or not number.isdigit() or int(number) > self._seq:
            return None
        seq = int(number)
        oldest = self._history[0].seq if self._history else self._seq + 1
        if seq + 1 < oldest:
            return None
        return [event for event in self._history if event.seq > seq]

    def _reset(self, seq: int, reason: str) -> Event:
        return Event(RESET, RESET, {"reason": reason}, None, f"{self.epoch}-{seq}", seq,
                     time.time())


class Subscription:
    """One follower's queue: :meth:`get` from a thread, :meth:`next` from an event loop; both
    answer the events queued so far (a list, possibly empty on timeout) or ``None`` once the
    hub closed or the subscription was closed. Close it when done (``with`` does)."""

    def __init__(self, hub: EventHub, start_id: str) -> None:
        self.start_id = start_id
        self._hub = hub
        self._queue: deque[Event] = deque()
        self._ended = False
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def put(self, event: Event) -> None:
        with self._lock:
            if self._ended:
                return
            self._queue.append(event)
            if len(self._queue) > self._hub.queue_limit:
                self._shrink()
            waiters = self._wake_all()
        _wake(waiters)

    def get(self, timeout: float | None = None) -> list[Event] | None:
        """Block until events are queued (or ``timeout`` passes): take them all."""
        with self._changed:
            self._changed.wait_for(lambda: self._queue or self._ended, timeout)
            return self._take()

    async def next(self, timeout: float) -> list[Event] | None:
        """Wait without a thread until events are queued (or ``timeout`` passes)."""
        event = asyncio.Event()
        entry = (asyncio.get_running_loop(), event)
        with self._lock:
            if self._queue or self._ended:
                return self._take()
            self._waiters.append(entry)
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except asyncio.TimeoutError:  # not yet the builtin TimeoutError on Python 3.10
            pass
        finally:
            with self._lock:
                if entry in self._waiters:
                    self._waiters.remove(entry)
        with self._lock:
            return self._take()

    def close(self) -> None:
        self._hub._forget(self)
        self.end()

    def end(self) -> None:
        with self._lock:
            self._ended = True
            self._queue.clear()
            waiters = self._wake_all()
        _wake(waiters)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals (the caller holds the lock) -------------------------------------------------
    def _take(self) -> list[Event] | None:
        if self._ended:
            return None
        taken = list(self._queue)
        self._queue.clear()
        return taken

    def _shrink(self) -> None:
        """Coalesce by key; if the queue is still full, replace it with one reset event."""
        newest: dict[str, Event] = {}
        for event in self._queue:
            if event.key is not None:
                older = newest.get(event.key)
                newest[event.key] = event if older is None else event.superseding(older)
        kept = [newest[event.key] if event.key is not None else event for event in self._queue
                if event.key is None or newest[event.key].seq == event.seq]
        if len(kept) > self._hub.queue_limit // 2:
            last = self._queue[-1]
            kept = [self._hub._reset(last.seq, "this follower fell behind; events were dropped")]
        self._queue = deque(kept)

    def _wake_all(self) -> list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]:
        self._changed.notify_all()
        waiters, self._waiters = self._waiters, []
        return waiters


def _wake(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]) -> None:
    for loop, event in waiters:
        # The follower's loop may have closed (the server stopped): nothing to wake then.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(event.set)
