"""Comparing two embeddings of the catalog: indexes chosen, neighbours compared, answers kept.

The kernel (:mod:`kernels.compare`) works on two indexes; this module picks them (the
cached exact index, or k-means cells (:mod:`kernels.cells`) when an exact all-kNN would be
slow) and keeps the last few answers, since the comparison view asks the same
question again for each step it shows.
"""

from __future__ import annotations

from typing import Any

from projector_core.data.model import Embedding
from projector_core.kernels.backend import Backend
from projector_core.kernels.cells import CellIndex
from projector_core.kernels.compare import Comparison, compare, needs_approximate
from projector_core.kernels.knn import exact_index
from projector_core.kernels.neighbor_index import Metric, NeighborIndex, Progress
from projector_core.storage.recent import Recent

KEPT = 8  # comparisons kept: the comparison view asks again for each step it shows


class RowCountMismatch(ValueError):
    """The two embeddings do not have the same rows, so they cannot be compared."""


def check_comparable(a: Embedding, b: Embedding, k: int) -> int:
    """The shared row count, or ValueError: :class:`RowCountMismatch` naming both counts,
    ``k`` not below it, or an unreadable tensor (DataError)."""
    a.vectors()
    b.vectors()
    rows_a, rows_b = (a.shape or (0, 0))[0], (b.shape or (0, 0))[0]
    if rows_a != rows_b:
        raise RowCountMismatch(
            f"cannot compare: {a.name!r} in run {a.run!r} has {rows_a} rows and "
            f"{b.name!r} in run {b.run!r} has {rows_b} rows; a comparison pairs rows")
    if k >= rows_a:
        raise ValueError(f"k {k} must be smaller than the number of points ({rows_a})")
    return rows_a


def _index(embedding: Embedding, backend: Backend, approximate: bool) -> NeighborIndex:
    exact = exact_index(embedding.fingerprint, embedding.vectors, backend)
    if not approximate or not backend.is_numpy or exact.n_valid < 2:
        return exact
    return CellIndex(exact)  # its cells are made inside compare, with progress


_answers: Recent[tuple[Any, ...], Comparison] = Recent(KEPT)


def compare_embeddings(a: Embedding, b: Embedding, k: int, metric: Metric, backend: Backend,
                       top: int = 100, progress: Progress | None = None) -> Comparison:
    """Per-point change of the ``k``-neighbourhoods from ``a`` to ``b`` (same rows)."""
    rows = check_comparable(a, b, k)
    key = (a.fingerprint, b.fingerprint, k, metric, top, backend.name, backend.device)
    cached = _answers.get(key)
    if cached is not None:
        return cached
    approximate = needs_approximate(rows, a.shape[1], b.shape[1])  # type: ignore[index]
    answer = compare(_index(a, backend, approximate), _index(b, backend, approximate),
                     k, metric, top, progress)
    _answers.put(key, answer)
    return answer
