"""Why a cluster could not answer: the server turns these into a 503 and a 413 with the message."""

from __future__ import annotations


class ClusterUnavailable(RuntimeError):
    """The Dask scheduler or its workers are gone, or did not answer in time."""


class TooLarge(ValueError):
    """A whole array was asked of a result that stays on disk (tiles serve it instead)."""
