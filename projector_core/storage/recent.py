"""The last few values by key, in memory: the one bounded cache of answers, indexes and held
data (answers of done jobs never change, so the newest few are worth keeping and the rest
are made again when asked for)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recent(Generic[K, V]):
    """The ``keep`` most recently used values by key; thread-safe.

    :meth:`get_or_compute` computes a missing value once even when callers race for the same
    key (the second waits for the first; other keys go on). ``on_drop`` receives each value
    pushed out (to cancel a future, forget a run), called outside the cache's lock.
    """

    def __init__(self, keep: int, on_drop: Callable[[V], object] | None = None) -> None:
        self.keep = keep
        self._on_drop = on_drop
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._computing: dict[K, threading.Lock] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __iter__(self) -> Iterator[K]:
        """The keys held now, oldest first (a snapshot: the cache may change meanwhile)."""
        with self._lock:
            return iter(list(self._items))

    def peek(self, key: K) -> V | None:
        """The value if it is there now (its place in the order unchanged), else None."""
        with self._lock:
            return self._items.get(key)

    def get(self, key: K) -> V | None:
        """The value if it is there now, made the most recent; else None."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            dropped = [self._items.popitem(last=False)[1]
                       for _ in range(max(0, len(self._items) - self.keep))]
        if self._on_drop is not None:
            for old in dropped:
                self._on_drop(old)

    def get_or_compute(self, key: K, compute: Callable[[], V]) -> V:
        """The value, computed by ``compute`` when missing (once, however many ask at once)."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            guard = self._computing.setdefault(key, threading.Lock())
        with guard:
            with self._lock:
                if key in self._items:
                    return self._items[key]
            try:
                value = compute()
                self.put(key, value)
            finally:
                with self._lock:
                    self._computing.pop(key, None)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
