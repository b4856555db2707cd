"""Answers as every door is compared: plain values, arrays, and a refusal's sentence.

Each door adapter turns what its door said into these forms (a float32 array of coordinates,
a dict of plain numbers and strings, :class:`Refused` for an error), so one comparison,
:func:`assert_same`, holds every door to the same answer. Numbers keep their kind (an int
is not a float): metadata written as integers must come back as integers.
"""

from __future__ import annotations

import csv
import io
import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
from PIL import Image

RTOL = 1e-4  # MCP rounds coordinates to 4 decimals, distances to 5
ATOL = 1e-4  # times the largest magnitude of the expected array (at least 1)


class Refused(Exception):
    """A door refused the request; ``sentence`` is what it told the user, as it told it."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence

    def __repr__(self) -> str:
        return f"Refused({self.sentence!r})"


def typed_table(text: str) -> dict[str, list[Any]]:
    """A TSV's columns as a reader of the wire gets them (pandas, as ``Client.metadata`` reads
    ``GET /api/metadata``): integers, floats or strings by column."""
    import pandas as pd

    frame = pd.read_csv(io.StringIO(text), sep="\t", quoting=csv.QUOTE_NONE,
                        keep_default_na=False, na_values=[""])
    return frame_columns(frame)


def frame_columns(frame: Any) -> dict[str, list[Any]]:
    """A DataFrame's columns as lists of plain Python values (numpy scalars made plain)."""
    return {str(name): [plain(v) for v in frame[name].tolist()] for name in frame.columns}


def plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


def assert_same(expected: Any, got: Any, where: str = "answer") -> None:
    """``got`` is ``expected``: same structure, same kinds, numbers within the tolerance,
    the same sentence for a refusal."""
    if isinstance(expected, Refused) or isinstance(got, Refused):
        assert isinstance(got, Refused), f"{where}: expected the refusal {expected!r}, got an answer"
        assert isinstance(expected, Refused), f"{where}: refused ({got.sentence!r}), expected an answer"
        assert got.sentence == expected.sentence, (f"{where}: refused with {got.sentence!r}, "
                                                   f"expected {expected.sentence!r}")
        return
    if isinstance(expected, np.ndarray):
        got = np.asarray(got)
        assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
        if expected.dtype.kind in "iub":
            np.testing.assert_array_equal(got, expected, err_msg=where)
        else:
            scale = max(1.0, float(np.nanmax(np.abs(expected)))) if expected.size else 1.0
            np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL * scale, err_msg=where)
        return
    if isinstance(expected, dict):
        assert isinstance(got, dict), f"{where}: {type(got).__name__}, expected a dict"
        assert sorted(got) == sorted(expected), f"{where}: keys {sorted(got)}, expected {sorted(expected)}"
        for key in expected:
            assert_same(expected[key], got[key], f"{where}[{key!r}]")
        return
    if isinstance(expected, list | tuple):
        assert isinstance(got, list | tuple), f"{where}: {type(got).__name__}, expected a list"
        assert len(got) == len(expected), f"{where}: {len(got)} items, expected {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            assert_same(e, g, f"{where}[{i}]")
        return
    expected, got = plain(expected), plain(got)
    assert type(got) is type(expected), (f"{where}: {got!r} ({type(got).__name__}), expected "
                                         f"{expected!r} ({type(expected).__name__})")
    if isinstance(expected, float) and not math.isnan(expected):
        assert math.isclose(got, expected, rel_tol=RTOL, abs_tol=ATOL), f"{where}: {got} != {expected}"
    elif isinstance(expected, float):
        assert math.isnan(got), f"{where}: {got}, expected NaN"
    else:
        assert got == expected, f"{where}: {got!r}, expected {expected!r}"


def png_pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGBA"))


def clusters_answer(found: dict[str, Any]) -> dict[str, Any]:
    """A clusters answer as compared: assignment, and each cluster but its centroid (its
    ``point``'s coordinates, which the comparison of ``point`` covers)."""
    return {"assignment": [int(a) for a in found["assignment"]],
            "clusters": [{k: v for k, v in c.items() if k != "centroid"} for c in found["clusters"]],
            "min_cluster_size": int(found["min_cluster_size"])}


def quality_answer(found: dict[str, Any]) -> dict[str, Any]:
    return {name: found[name] for name in ("mean", "trustworthiness", "continuity", "k")}


def column_answer(changed: list[int], values: list[Any],
                  counts: Mapping[str, int] | None = None) -> dict[str, Any]:
    """An annotate answer: the rows each edit changed, the column's value per row ("" where
    none is set: a reader's NaN or None too) and each value's count (default: counted here)."""
    values = ["" if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in values]
    if counts is None:
        counts = Counter(v for v in values if v)
    return {"changed": changed, "values": values, "counts": dict(counts)}


def edit_answer(edit: Mapping[str, Any], caller: str) -> dict[str, Any]:
    """A history entry as compared: its ids left out (each door numbers its own store's
    edits), its author as whose it is: the ``caller``'s (the name the door records its user
    under: "local", an assistant's "assistant") or another's."""
    return {**{key: edit[key] for key in ("column", "action", "rows", "value", "undone")},
            "author": "caller" if edit["author"] == caller else "another"}
