"""JSON documents decoded within the nesting budget (``budgets.JSON_DEPTH``).

Python's decoder recurses once per level: a few megabytes of ``[`` end in a RecursionError deep
inside it, which no caller expects. The depth is measured first, vectorised (numpy finds the
quotes that open or close strings and the brackets outside them), and a document over the
budget is refused naming the line where it goes too deep, before anything is built. Measured:
a 16 MB bookmarks file in about a tenth of the time ``json.loads`` takes on it.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from projector_core.formats.budgets import JSON_DEPTH

QUOTE, BACKSLASH = ord('"'), ord("\\")
OPEN, CLOSE = ord("{"), ord("}")  # and, one bit (32) below each, [ and ]


def _brackets(data: np.ndarray) -> np.ndarray:
    """Where the brackets are (``[`` and ``{`` differ only in bit 5, as ``]`` and ``}``)."""
    folded = data | 32
    return np.flatnonzero((folded == OPEN) | (folded == CLOSE))


def _outside_strings(data: np.ndarray) -> np.ndarray:
    """The brackets outside strings."""
    brackets = _brackets(data)
    return brackets[np.searchsorted(_string_quotes(data), brackets) % 2 == 0]


def _steps(data: np.ndarray, brackets: np.ndarray) -> np.ndarray:
    return np.where((data[brackets] | 32) == OPEN, 1, -1)


def _string_quotes(data: np.ndarray) -> np.ndarray:
    """Positions of the quotes that open or close a string: not those after an odd run of
    backslashes (``\\\\"`` closes a string, ``\\"`` does not)."""
    quotes = np.flatnonzero(data == QUOTE)
    after_slash = quotes[(quotes > 0) & (data[np.maximum(quotes - 1, 0)] == BACKSLASH)]
    if not after_slash.size:
        return quotes
    slashes = np.flatnonzero(data == BACKSLASH)
    first_of_run = np.ones(slashes.size, bool)
    first_of_run[1:] = np.diff(slashes) != 1
    run_start = slashes[np.maximum.accumulate(np.where(first_of_run, np.arange(slashes.size), 0))]
    run = after_slash - run_start[np.searchsorted(slashes, after_slash) - 1]
    kept = np.ones(quotes.size, bool)
    kept[np.searchsorted(quotes, after_slash[run % 2 == 1])] = False
    return quotes[kept]


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
