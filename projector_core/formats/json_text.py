"""JSON documents decoded within the nesting budget (``budgets.JSON_DEPTH``).

Python's decoder recurses once per level: a few megabytes of ``[`` end in a RecursionError deep
inside it, which no caller expects. The depth is measured first, vectorised (numpy finds the
quotes that open or close strings and the brackets outside them), and a document over the
budget is refused naming the line where it goes too deep, before anything is built. Measured:
a 16 MB bookmarks file in about half the time ``json.loads`` takes to decode it.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from projector_core.formats.budgets import JSON_DEPTH

QUOTE, BACKSLASH = ord('"'), ord("\\")
OPEN, CLOSE = ord("{"), ord("}")  # and, one bit (32) below each, [ and ]


def _outside_strings(data: np.ndarray) -> np.ndarray:
    """Positions of the brackets outside strings: those after an even number of the quotes
    that open or close strings (``[`` and ``{`` differ only in bit 5, as ``]`` and ``}``)."""
    quotes = (data == QUOTE).view(np.uint8)
    quotes[_escaped_quotes(data)] = 0
    outside = (np.cumsum(quotes, dtype=np.uint8) & 1) == 0  # the count's parity survives wrapping
    folded = data | 32
    return np.flatnonzero(((folded == OPEN) | (folded == CLOSE)) & outside)


def _escaped_quotes(data: np.ndarray) -> np.ndarray:
    """Positions of the quotes inside strings: after an odd run of backslashes (``\\\\"``
    closes a string, ``\\"`` does not)."""
    after_slash = np.flatnonzero((data[1:] == QUOTE) & (data[:-1] == BACKSLASH)) + 1
    if not after_slash.size:
        return after_slash
    slashes = np.flatnonzero(data == BACKSLASH)
    first_of_run = np.ones(slashes.size, bool)
    first_of_run[1:] = np.diff(slashes) != 1
    run_start = slashes[np.maximum.accumulate(np.where(first_of_run, np.arange(slashes.size), 0))]
    run = after_slash - run_start[np.searchsorted(slashes, after_slash) - 1]
    return np.asarray(after_slash[run % 2 == 1])


def _steps(data: np.ndarray, brackets: np.ndarray) -> np.ndarray:
    return np.where((data[brackets] | 32) == OPEN, 1, -1)


def nesting(data: bytes) -> tuple[int, int]:
    """How deep the brackets of a JSON text nest outside its strings, and the offset of the
    bracket where it is deepest first."""
    array = np.frombuffer(data, np.uint8)
    brackets = _outside_strings(array)
    if not brackets.size:
        return 0, 0
    depth = np.cumsum(_steps(array, brackets), dtype=np.int64)
    deepest = int(np.argmax(depth))
    return int(depth[deepest]), int(brackets[deepest])


def loads(text: str, display: str) -> Any:
    """``json.loads`` after the nesting check (a DataError naming the file and line); the
    decoder's own JSONDecodeError is left to the caller, whose message says what it reads."""
    data = text.encode("utf-8", "surrogatepass")
    depth, at = nesting(data)
    if depth > JSON_DEPTH.limit:
        array = np.frombuffer(data, np.uint8)[:at + 1]
        outside = _outside_strings(array)
        first = int(outside[np.argmax(np.cumsum(_steps(array, outside)) > JSON_DEPTH.limit)])
        raise JSON_DEPTH.exceeded(f"nested {depth:,} levels deep", file=display,
                                  line=data.count(b"\n", 0, first) + 1)
    return json.loads(text)
