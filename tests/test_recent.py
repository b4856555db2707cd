"""The one bounded cache: the newest few kept, each value computed once however many ask."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from projector_core.storage.recent import Recent


def test_the_least_recently_used_goes_first_and_is_handed_to_on_drop() -> None:
    dropped: list[str] = []
    recent: Recent[str, str] = Recent(2, on_drop=dropped.append)
    recent.put("a", "A")
    recent.put("b", "B")
    assert recent.get("a") == "A"  # now "b" is the oldest
    recent.put("c", "C")
    assert dropped == ["B"] and recent.peek("b") is None and len(recent) == 2
    assert recent.peek("a") == "A"  # peeking does not make "a" newer
    recent.put("d", "D")
    assert dropped == ["B", "A"] and list(recent) == ["c", "d"]


def test_racing_askers_of_one_key_compute_it_once() -> None:
    """Four threads ask at once; the first one's computation is held until every other one
    has asked, so they race it, and it still runs once."""
    calls: list[int] = []
    asked = threading.Semaphore(0)

    class Counted(Recent[str, int]):  # each asker says so as it asks
        def get_or_compute(self, key: str, compute: Callable[[], int]) -> int:
            asked.release()
            return super().get_or_compute(key, compute)

    recent = Counted(4)

    def compute() -> int:
        calls.append(1)
        for _ in range(4):  # every asker, this one included, has asked
            assert asked.acquire(timeout=30)
        return 42

    answers: list[int] = []
    start = threading.Barrier(4)

    def ask() -> None:
        start.wait(30)
        answers.append(recent.get_or_compute("k", compute))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert answers == [42] * 4 and len(calls) == 1


def test_a_failed_computation_is_not_kept_and_is_tried_again() -> None:
    recent: Recent[str, int] = Recent(4)

    def fail() -> int:
        raise ValueError("unreadable")

    with pytest.raises(ValueError):
        recent.get_or_compute("k", fail)
    assert recent.peek("k") is None
    assert recent.get_or_compute("k", lambda: 7) == 7
