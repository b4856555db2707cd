"""``.npy`` tensors: the header read and checked alone (objects refused, never unpickled; a
truncated file said as such), the rows read as float32 blocks by plain reads, or the whole
array memory-mapped; and the one check that an array is a numeric matrix, which every
in-memory input passes too (``inputs.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from projector_core.errors import DataError
from projector_core.formats.tensor_files import Progress


@dataclass(frozen=True)
class NpyLayout:
    """What a ``.npy`` header says, checked: enough to read the data without mapping the file."""

    shape: tuple[int, int]  # a 1-D array is read as one column
    dtype: np.dtype
    fortran_order: bool
    offset: int  # where the data starts
    ndim: int

    @property
    def is_float32_rows(self) -> bool:
        """The file already is what the cache holds: float32 little-endian, row-major."""
        return self.dtype == np.dtype("<f4") and not self.fortran_order and self.ndim == 2

    @property
    def nbytes(self) -> int:
        return self.shape[0] * self.shape[1] * self.dtype.itemsize


def read_npy_header(handle: BinaryIO) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """(shape, fortran_order, dtype, data offset) of the ``.npy`` open in ``handle``, from its
    header alone (ValueError for a file that is not one)."""
    version = np.lib.format.read_magic(handle)
    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                   else np.lib.format.read_array_header_2_0)
    shape, fortran_order, dtype = read_header(handle)
    return shape, fortran_order, dtype, handle.tell()


def npy_layout(path: Path, display: str) -> NpyLayout:
    """Read and check only the header of a ``.npy``: objects refused (never unpickled), the
    array 1-D or 2-D, numeric, non-empty, and all its data present."""
    try:
        with path.open("rb") as handle:
            shape, fortran_order, dtype, offset = read_npy_header(handle)
    except ValueError as exc:
        raise DataError(f"is not a valid .npy file: {exc}", file=display) from None
    except OSError as exc:
        raise DataError(f"cannot be read: {exc}", file=display) from None
    if dtype.hasobject:
        raise DataError("holds Python objects (pickled); only numeric arrays are read",
                        file=display)
    if len(shape) not in (1, 2):
        raise DataError(f"must be a 2-D array [N, D], found shape {list(shape)}", file=display)
    if not (np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer)):
        raise DataError(f"has dtype {dtype}; a numeric array is needed", file=display)
    if 0 in shape:
        raise DataError(f"is empty (shape {list(shape)})", file=display)
    truncation = _npy_truncation(path)
    if truncation:
        raise DataError(f"is not a valid .npy file: {truncation}", file=display)
    rows_cols = (int(shape[0]), int(shape[1]) if len(shape) == 2 else 1)
    return NpyLayout(rows_cols, dtype, bool(fortran_order and len(shape) == 2), offset,
                     len(shape))


def npy_blocks(path: Path, display: str, layout: NpyLayout, progress: Progress | None = None,
               block_bytes: int = 32 * 2**20) -> Iterator[np.ndarray]:
    """The rows of any numeric ``.npy`` as float32 blocks, by plain reads (a file rewritten
    meanwhile gives a clear error, never SIGBUS); column-major files are read whole."""
    rows, cols = layout.shape
    with path.open("rb") as handle:
        if layout.fortran_order:
            handle.seek(layout.offset)
            data = np.fromfile(handle, layout.dtype, rows * cols)
            if data.size != rows * cols:
                raise DataError("changed while being read", file=display)
            yield np.ascontiguousarray(data.reshape((rows, cols), order="F"), "<f4")
            return
        step = max(1, block_bytes // (cols * layout.dtype.itemsize))
        handle.seek(layout.offset)
        for start in range(0, rows, step):
            count = min(step, rows - start)
            block = np.fromfile(handle, layout.dtype, count * cols)
            if block.size != count * cols:
                raise DataError("changed while being read", file=display)
            if progress:
                progress((start + count) * cols * layout.dtype.itemsize, layout.nbytes)
            yield block.reshape(count, cols).astype("<f4", copy=False)


def read_npy(path: Path, display: str) -> np.ndarray:
    """Memory-map a ``.npy``; object arrays are refused (they would need unpickling)."""
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc).lower() or "object" in str(exc).lower():
            raise DataError("holds Python objects (pickled); only numeric arrays are read",
                            file=display) from None
        raise DataError(f"is not a valid .npy file: {_npy_truncation(path) or exc}",
                        file=display) from None
    except OSError as exc:
        raise DataError(f"cannot be read: {exc}", file=display) from None
    return as_vectors(array, display)


def _npy_truncation(path: Path) -> str | None:
    """Say how much of the data a truncated ``.npy`` lacks (numpy only says "mmap length")."""
    try:
        with path.open("rb") as handle:
            shape, _, dtype, start = read_npy_header(handle)
    except (OSError, ValueError):
        return None
    needed = int(np.prod(shape)) * dtype.itemsize
    present = path.stat().st_size - start
    if present >= needed:
        return None
    return (f"truncated: its header says shape {list(shape)} of {dtype} ({needed} bytes of data) "
            f"but only {present} bytes follow the header")


def as_vectors(array: np.ndarray, display: str) -> np.ndarray:
    """Check an array is a 2-D numeric matrix and give it as float32 (a view when it already is)."""
    if array.dtype.hasobject:
        raise DataError("holds Python objects; only numeric arrays are read", file=display)
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    if array.ndim != 2:
        raise DataError(f"must be a 2-D array [N, D], found shape {list(array.shape)}", file=display)
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise DataError(f"has dtype {array.dtype}; a numeric array is needed", file=display)
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise DataError(f"is empty (shape {list(array.shape)})", file=display)
    if array.dtype == np.dtype("<f4") and array.flags.c_contiguous:
        return array
    with np.errstate(over="ignore"):  # beyond float32's range is inf, as a TSV reads it
        return np.ascontiguousarray(array, dtype="<f4")
