"""Every door that offers an operation gives the same answer to the same request.

The table is ``projector_core.operations`` x ``cases.py``: each cell asks one door on its own
server and cache, and compares what the door said with the reference (``reference.py``).
A cell marked xfail disagrees today; its reason names the item of issue 33 that fixes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from sklearn.decomposition import PCA

from tests.conformance.answers import Refused, assert_same
from tests.conformance.cases import request_of
from tests.conformance.reference import Reference
from tests.conformance.table import Cell, check_askable, params


@pytest.mark.parametrize("cell", params())
def test_the_door_answers_as_every_door(cell: Cell, door: Callable[[str], Any],
                                        reference: Reference) -> None:
    case = check_askable(cell)
    expected = reference.answer(case)
    adapter = door(cell.door)
    try:
        got = getattr(adapter, cell.operation)(request_of(case))
    except Refused as refused:
        got = refused
    assert_same(expected, got, f"{cell.door}: {case.id}")


def test_the_reference_pca_is_scikit_learns(reference: Reference) -> None:
    """The reference's PCA is no door's opinion: the principal components, up to their signs."""
    from tests.conformance.cases import Case

    ours = reference.answer(Case("pca_3d", "answer", {"params": {"spherize": False}}))
    theirs = PCA(n_components=3).fit_transform(reference.blobs.vectors.astype(np.float64))
    signs = np.sign((ours * theirs).sum(axis=0))
    np.testing.assert_allclose(ours, theirs * signs, rtol=1e-3, atol=1e-3 * np.abs(theirs).max())
