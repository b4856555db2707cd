"""Whom a computation tells how far it is: a job's context (``JobContext``), or nobody.

A projection method, a sampled fit and a cluster's placing tasks report each step's progress
(0..1) and, when they have one, a frame (the live layout, made only if someone reads it) to a
:class:`Reporter`; the job engine's context streams it, pauses or cancels the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np


class Reporter(Protocol):
    def step(self, iteration: int | None, progress: float,
             frame: Callable[[], np.ndarray] | None = None, stride: int = 1) -> None: ...


class Silent:
    """A reporter for runs nobody follows (the MCP server, benchmarks)."""

    def step(self, iteration: int | None, progress: float,
             frame: Callable[[], np.ndarray] | None = None, stride: int = 1) -> None:
        return None
