"""The named phase a running job is in (neighbours, affinities, initial layout, optimisation,
placement), with how far along it is, so a long first step says what it does instead of
"iteration 0".

A kernel calls :func:`enter_phase` as it moves on; the job that the current worker thread
runs (:func:`phases_of`, set by the job manager) records it. Outside a job (tests, the MCP
server, benchmarks) the call does nothing, so kernels need no extra parameter for it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class PhaseSink(Protocol):
    def set_phase(self, name: str, fraction: float | None) -> None: ...


_current = threading.local()


@contextmanager
def phases_of(sink: PhaseSink) -> Iterator[None]:
    """Phases entered on this thread meanwhile go to ``sink`` (a job)."""
    previous = getattr(_current, "sink", None)
    _current.sink = sink
    try:
        yield
    finally:
        _current.sink = previous


def enter_phase(name: str, fraction: float | None = None) -> None:
    """This thread's job is in phase ``name``, ``fraction`` (0..1, None: unknown) through it."""
    sink = getattr(_current, "sink", None)
    if sink is not None:
        sink.set_phase(name, None if fraction is None else min(1.0, max(0.0, fraction)))
