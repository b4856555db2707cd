"""Why a cluster could not answer: the server turns this into a 503 with the message."""

from __future__ import annotations


class ClusterUnavailable(RuntimeError):
    """The Dask scheduler or its workers are gone, or did not answer in time."""
