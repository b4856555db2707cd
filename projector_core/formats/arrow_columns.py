"""Arrow string columns read as numpy without pandas: the values, validity and booleans taken
from the arrays' buffers, number strings told and cast (correctly rounded, like ``float()``),
and distinct values as int32 dictionary codes, chunk by chunk. The metadata reader's columns
(``metadata.py``) are such columns; nothing here hands pyarrow a Python object nor calls its
``to_numpy``, either of which would import pandas (0.3 s of a start).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

NUMBER = r"(?i)^\s*[+-]?((\d+\.?\d*|\.\d+)(e[+-]?\d+)?|inf|infinity|nan)\s*$"


@functools.lru_cache(maxsize=4)
def string_scalar(text: str) -> pa.Scalar:
    """A string scalar built from buffers (``pa.scalar(text)`` would import pandas)."""
    import pyarrow as pa

    data = text.encode()
    offsets = np.array([0, len(data)], np.int32).tobytes()
    return pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(offsets),
                                                   pa.py_buffer(data)])[0]


def _chunks(array: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    import pyarrow as pa

    return [c for c in (array.chunks if isinstance(array, pa.ChunkedArray) else [array]) if len(c)]


def buffer_values(array: pa.Array | pa.ChunkedArray, dtype: str) -> np.ndarray:
    """Numbers as numpy, read from the arrays' buffers (what a null holds is undefined)."""
    size = np.dtype(dtype).itemsize
    parts = [np.frombuffer(c.buffers()[1], dtype, len(c), c.offset * size) for c in _chunks(array)]
    return np.concatenate(parts) if parts else np.empty(0, dtype)


def valid(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Where the array is not null, read from its validity bitmaps."""
    parts = [np.ones(len(c), bool) if c.buffers()[0] is None else
             np.unpackbits(np.frombuffer(c.buffers()[0], np.uint8), bitorder="little")
             [c.offset:c.offset + len(c)].astype(bool) for c in _chunks(array)]
    return np.concatenate(parts) if parts else np.empty(0, bool)


def mask(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean array as numpy; null is False."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return np.asarray(buffer_values(pc.cast(array, pa.uint8()), "u1").astype(bool) & valid(array))


def bad_numbers(values: pa.Array | pa.ChunkedArray) -> int:
    """How many present cells are not numbers."""
    import pyarrow.compute as pc

    present = pc.not_equal(values, string_scalar(""))
    return int(pc.sum(pc.and_(present, pc.invert(pc.match_substring_regex(values, NUMBER))))
               .as_py() or 0)


def dictionary_codes(values: pa.Array | pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    """Distinct values in order of first appearance and int32 codes into them (chunk by
    chunk, dictionaries then unified: no 2 GB string array is ever combined)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = _chunks(values)
    if not chunks:
        return [], np.empty(0, np.int32)
    encoded = pa.chunked_array([pc.dictionary_encode(c) for c in chunks]).unify_dictionaries()
    codes = np.concatenate([buffer_values(c.indices, "<i4") for c in encoded.chunks])
    return encoded.chunks[0].dictionary.to_pylist(), codes


def as_floats(values: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """float64 of a column of number strings ("" = NaN), or None if any other text is in it.
    Arrow's cast is correctly rounded, like float(), but slow to fail, so a column of text is
    told by its first rows first."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if bad_numbers(values[:1000]):
        return None
    trimmed = pc.utf8_trim_whitespace(values)
    if not pc.any(pc.not_equal(trimmed, string_scalar(""))).as_py():
        return None
    try:
        cast = pc.cast(pc.if_else(pc.equal(trimmed, string_scalar("")), pa.nulls(1, pa.string())[0],
                                  trimmed), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    floats = buffer_values(cast, "<f8").copy()
    floats[~valid(cast)] = np.nan
    return floats
