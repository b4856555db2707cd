"""Chunked on-disk embeddings: a zarr array or a folder of ``.npy`` row shards, opened lazily.

100M x 768 float32 is 300 GB, so such an input is never read whole. :class:`ChunkedVectors`
answers ``shape``, ``dtype`` and row reads (only the chunks touched are read), which is all
that code scanning rows in chunks asks of a read-only numpy array; :meth:`ChunkedVectors.shards`
cuts the rows into ranges that any process (a Dask worker) can read by itself from the path.

Rows are read with plain file reads, never memory-mapped: a user's file rewritten while we
serve it must not kill the server with SIGBUS. zarr is imported only when a zarr is opened.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.errors import DataError
from projector_core.formats.npy_files import read_npy_header
from projector_core.storage.fingerprint import fingerprint

ZARR_MARKERS = ("zarr.json", ".zarray")  # zarr v3, zarr v2
SHARD_BYTES = 64 * 2**20  # rows per shard: one worker task reads about this much
_NUMERIC_KINDS = "fiu"


def is_zarr(path: Path) -> bool:
    return path.is_dir() and any((path / marker).is_file() for marker in ZARR_MARKERS)


def is_chunked(path: Path) -> bool:
    """A zarr array, or a folder given as a tensor (its ``.npy`` files are row shards)."""
    return path.is_dir()


def _check_dtype(dtype: Any, display: str) -> np.dtype:
    try:
        found: np.dtype | None = np.dtype(dtype)
    except TypeError:
        found = None
    if found is None or found.kind not in _NUMERIC_KINDS:
        raise DataError(f"holds {dtype} values; an embedding needs numbers (float or int)",
                        file=display)
    return found


@lru_cache(maxsize=16)
def _open_zarr(path: str, version: str = "") -> Any:
    """One open array per process and version of the store (``version``: its fingerprint)."""
    import zarr

    return zarr.open_array(store=path, mode="r")


@dataclass(frozen=True)
class ZarrSource:
    """A 2-D zarr array; each process opens it once."""

    path: str
    version: str = ""

    def read(self, start: int, stop: int) -> np.ndarray:
        return np.asarray(_open_zarr(self.path, self.version)[start:stop], dtype="<f4")

    def take(self, rows: np.ndarray) -> np.ndarray:
        array = _open_zarr(self.path, self.version)
        return np.asarray(array.get_orthogonal_selection((rows, slice(None))), dtype="<f4")


@dataclass(frozen=True)
class NpyPiece:
    """One ``.npy`` shard: where its C-ordered data starts in the file, and its layout."""

    path: str
    offset: int
    rows: int
    dim: int
    dtype: str

    def read(self, start: int, stop: int) -> np.ndarray:
        dtype = np.dtype(self.dtype)
        with open(self.path, "rb") as handle:
            handle.seek(self.offset + start * self.dim * dtype.itemsize)
            flat = np.fromfile(handle, dtype, count=(stop - start) * self.dim)
        if flat.size != (stop - start) * self.dim:
            raise DataError(f"shorter than its header says ({self.rows} rows)", file=self.path)
        return flat.reshape(stop - start, self.dim).astype("<f4", copy=False)


@dataclass(frozen=True)
class NpyShardsSource:
    """``.npy`` files holding consecutive rows of one embedding, in file-name order."""

    pieces: tuple[NpyPiece, ...]
    starts: tuple[int, ...]  # first row of each piece, plus the total at the end

    def read(self, start: int, stop: int) -> np.ndarray:
        parts = []
        first = int(np.searchsorted(self.starts, start, side="right")) - 1
        for index in range(max(first, 0), len(self.pieces)):
            begin = self.starts[index]
            if begin >= stop:
                break
            piece = self.pieces[index]
            parts.append(piece.read(max(start, begin) - begin, min(stop, begin + piece.rows) - begin))
        dim = self.pieces[0].dim
        return np.concatenate(parts) if parts else np.zeros((0, dim), "<f4")

    def take(self, rows: np.ndarray) -> np.ndarray:
        return np.concatenate([self.read(int(r), int(r) + 1) for r in rows]) if rows.size else \
            np.zeros((0, self.pieces[0].dim), "<f4")


Source = ZarrSource | NpyShardsSource


@dataclass(frozen=True)
class Shard:
    """Rows [start, stop) of a chunked embedding, readable in any process from its path."""

    source: Source
    start: int
    stop: int

    def read(self) -> np.ndarray:
        return self.source.read(self.start, self.stop)


class ChunkedVectors:
    """A read-only float32 (N, D) matrix on disk, read by rows on demand.

    Slicing rows (``v[a:b]``, ``v[[i, j]]``, ``v[a:b, cols]``) returns a numpy array of just
    those rows. ``np.asarray(v)`` reads everything: only for kernels that need the whole
    matrix in memory, which the cluster path avoids.
    """

    dtype = np.dtype("<f4")
    ndim = 2
    itemsize = 4
    lazy = True

    def __init__(self, source: Source, shape: tuple[int, int], display: str,
                 chunk_rows: int, fingerprint: str) -> None:
        self.source = source
        self.shape = shape
        self.display = display
        self.chunk_rows = chunk_rows  # the storage's own row chunking
        self.fingerprint = fingerprint

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def nbytes(self) -> int:
        return self.shape[0] * self.shape[1] * 4

    def __repr__(self) -> str:
        return f"ChunkedVectors({self.display!r}, shape={self.shape})"

    def __getitem__(self, key: Any) -> np.ndarray:
        columns: Any = slice(None)
        if isinstance(key, tuple):
            key, columns = key
        if isinstance(key, slice):
            start, stop, step = key.indices(self.shape[0])
            rows = self.source.read(start, max(start, stop)) if step == 1 else \
                self._take(np.arange(start, stop, step))
        elif isinstance(key, int | np.integer):
            index = int(key) + (self.shape[0] if key < 0 else 0)
            if not 0 <= index < self.shape[0]:
                raise IndexError(f"row {key} out of range for {self.shape[0]} rows")
            return np.asarray(self.source.read(index, index + 1)[0][columns])
        else:
            rows = self._take(np.asarray(key))
        return rows if isinstance(columns, slice) and columns == slice(None) else rows[:, columns]

    def _take(self, rows: np.ndarray) -> np.ndarray:
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        rows = rows.astype(np.int64).reshape(-1)
        rows = np.where(rows < 0, rows + self.shape[0], rows)
        if rows.size and (rows.min() < 0 or rows.max() >= self.shape[0]):
            raise IndexError(f"row index out of range for {self.shape[0]} rows")
        unique, inverse = np.unique(rows, return_inverse=True)
        return self.source.take(unique)[inverse]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        whole = self.source.read(0, self.shape[0])
        return whole if dtype is None else whole.astype(dtype, copy=False)

    def shards(self, shard_bytes: int | None = None) -> list[Shard]:
        """Row ranges of about ``shard_bytes`` (SHARD_BYTES), aligned to the storage's chunks."""
        n, dim = self.shape
        rows = max(1, (shard_bytes or SHARD_BYTES) // max(1, dim * 4))
        rows = max(self.chunk_rows, rows // self.chunk_rows * self.chunk_rows)
        return [Shard(self.source, start, min(n, start + rows)) for start in range(0, n, rows)]


def chunked_fingerprint(path: Path) -> str:
    """Changes whenever a file of the array is added, rewritten or removed."""
    entries = []
    for folder, dirs, files in os.walk(path):
        dirs.sort()
        for name in sorted(files):
            stat = os.stat(os.path.join(folder, name))
            entries.append(f"{os.path.relpath(os.path.join(folder, name), path)}|{stat.st_size}|"
                           f"{stat.st_mtime_ns}")
    return fingerprint("chunked", path.resolve(), *entries)


def open_chunked(path: Path, display: str) -> ChunkedVectors:
    """The zarr array or the folder of ``.npy`` shards at ``path``; DataError names the file."""
    path = Path(path)
    fingerprint = chunked_fingerprint(path)
    if is_zarr(path):
        return _open_zarr_vectors(path, display, fingerprint)
    return _open_npy_shards(path, display, fingerprint)


def _open_zarr_vectors(path: Path, display: str, fingerprint: str) -> ChunkedVectors:
    try:
        import zarr  # noqa: F401
    except ImportError:
        raise DataError("reading zarr needs the zarr package: pip install 'embedding-projector[zarr]'",
                        file=display) from None
    try:
        array = _open_zarr(str(path.resolve()), fingerprint)
    except Exception as error:  # zarr raises many kinds for a damaged store
        _open_zarr.cache_clear()
        raise DataError(f"is not a readable zarr array: {error}", file=display) from None
    _check_dtype(array.dtype, display)
    if array.ndim != 2 or 0 in array.shape:
        raise DataError(f"has shape {list(array.shape)}; an embedding is 2-D (N, D) with rows",
                        file=display)
    n, dim = (int(s) for s in array.shape)
    chunk_rows = int(array.chunks[0])
    return ChunkedVectors(ZarrSource(str(path.resolve()), fingerprint), (n, dim), display, chunk_rows,
                          fingerprint)


def _npy_piece(path: Path, display: str) -> NpyPiece:
    try:
        with path.open("rb") as handle:
            shape, fortran_order, dtype, offset = read_npy_header(handle)
    except (OSError, ValueError) as error:
        raise DataError(f"is not a valid .npy file: {error}", file=display) from None
    if dtype.hasobject:
        raise DataError("holds Python objects (pickled); only numeric arrays are read",
                        file=display)
    _check_dtype(dtype, display)
    if len(shape) != 2:
        raise DataError(f"has shape {list(shape)}; a shard is 2-D (rows, D)", file=display)
    if fortran_order and shape[0] > 1 and shape[1] > 1:
        raise DataError("is stored column-major (Fortran order); save shards with "
                        "np.save(np.ascontiguousarray(rows))", file=display)
    needed = offset + shape[0] * shape[1] * dtype.itemsize
    if path.stat().st_size < needed:
        raise DataError(f"is truncated: its header says shape {list(shape)}", file=display)
    return NpyPiece(str(path.resolve()), offset, int(shape[0]), int(shape[1]), dtype.str)


def _open_npy_shards(path: Path, display: str, fingerprint: str) -> ChunkedVectors:
    files = sorted(p for p in path.iterdir() if p.suffix.lower() == ".npy" and p.is_file())
    if not files:
        raise DataError("is a folder without .npy shards (or a zarr array)", file=display)
    pieces: list[NpyPiece] = []
    for file in files:
        piece = _npy_piece(file, f"{display}/{file.name}")
        if pieces and piece.dim != pieces[0].dim:
            raise DataError(f"has {piece.dim} columns but {files[0].name} has {pieces[0].dim}: "
                            "every shard needs the same D", file=f"{display}/{file.name}")
        if piece.rows:
            pieces.append(piece)
    if not pieces:
        raise DataError("has only empty .npy shards", file=display)
    starts = tuple(int(s) for s in np.cumsum([0] + [p.rows for p in pieces]))
    source = NpyShardsSource(tuple(pieces), starts)
    return ChunkedVectors(source, (starts[-1], pieces[0].dim), display,
                          min(p.rows for p in pieces), fingerprint)
