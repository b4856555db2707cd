"""What a :class:`projector.client.api.ProjectorClient` call gives back: a refusal
(:class:`ProjectorError`), a done projection, a neighbours pair, and the callbacks it calls."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np


class ProjectorError(RuntimeError):
    """The server refused a request; ``status`` is the HTTP status, the message its detail,
    ``body`` its whole JSON answer (a 503's job and progress), if any."""

    def __init__(self, status: int, detail: str, body: Any = None) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail
        self.body = body


@dataclass(frozen=True)
class Projection:
    """A done projection: its coordinates, the job's ``info`` (method, parameters, sampling) and
    the job id, which the structure calls (``clusters``, ``quality``, ``pick``) take."""

    coordinates: np.ndarray  # float32 [N, k]
    info: dict[str, Any]
    job: str


class Neighbors(NamedTuple):
    """Nearest points, nearest first: ``indices, distances = client.neighbors(...)``. Note the
    order: the reverse of scikit-learn's ``kneighbors`` (distances, indices), so the fields
    are named."""

    indices: np.ndarray  # int64 [k]
    distances: np.ndarray  # float64 [k], ascending


FrameCallback = Callable[[np.ndarray, "int | None"], Any]
DoneCallback = Callable[[Projection], Any]
ProgressCallback = Callable[[dict[str, Any]], Any]
