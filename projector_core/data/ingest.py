"""A user's tensor file turned into a float32 matrix the server can keep: a cache entry.

Never a memory map of the user's file (a rewrite truncates it, and the next read of the map is
SIGBUS for the whole server). A TSV is parsed block by block straight into a new cache entry;
a ``.bytes`` or float32 ``.npy`` file is copied into one by the kernel (``copy_file_range``: a
reflink, free, on filesystems with shared extents); other ``.npy`` files are converted by plain
reads. Without a usable cache the matrix is read into memory, by reads too.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from projector_core.errors import DataError
from projector_core.formats.npy_files import npy_blocks, npy_layout
from projector_core.formats.tensor_files import Progress, bytes_shape, looks_binary, tsv_blocks
from projector_core.kernels.finite import finite_rows
from projector_core.storage.fingerprint import fingerprint
from projector_core.storage.tensor_cache import TensorCache, file_fingerprint, npy_header


def tensor_key(path: Path, tensor_shape: tuple[int, ...]) -> tuple[str, str]:
    """(cache key, kind) of a tensor file: kind is "bytes" (raw float32), "npy" or "tsv"."""
    key = file_fingerprint(path)
    suffix = path.suffix.lower()
    if suffix == ".bytes" or (suffix != ".npy" and bool(tensor_shape) and looks_binary(path)):
        # the same bytes read with another tensor_shape are another tensor
        return fingerprint(key, tuple(tensor_shape)), "bytes"
    return key, "npy" if suffix == ".npy" else "tsv"


def rows_with_nan_or_inf(vectors: np.ndarray) -> int:
    return int(vectors.shape[0] - np.count_nonzero(finite_rows(vectors)))


def ingest(cache: TensorCache, fingerprint: str, path: Path, display: str, kind: str,
           tensor_shape: tuple[int, ...], progress: Progress | None) -> np.ndarray:
    """``kind`` is "tsv", "bytes" or "npy"; ``tensor_shape`` is the config's (for .bytes)."""
    if kind == "tsv":
        return cache.store_blocks(fingerprint, tsv_blocks(path, display, progress))
    if kind == "bytes":
        shape = bytes_shape(path, display, tensor_shape)
        return _copy_in(cache, fingerprint, path, display, shape, npy_header(shape), 0, progress)
    layout = npy_layout(path, display)
    if layout.is_float32_rows:
        return _copy_in(cache, fingerprint, path, display, layout.shape, None, layout.offset,
                        progress)
    return cache.store_blocks(fingerprint, npy_blocks(path, display, layout, progress))


def _copy_in(cache: TensorCache, fingerprint: str, path: Path, display: str,
             shape: tuple[int, int], header: bytes | None, offset: int,
             progress: Progress | None) -> np.ndarray:
    """Raw rows after ``header``, or (no header) a file that already is a float32 .npy whose
    data starts at ``offset``; checked afterwards against a rewrite during the copy."""
    data_bytes = shape[0] * shape[1] * 4
    with path.open("rb") as handle:
        before = os.fstat(handle.fileno())
        size = data_bytes if header is not None else offset + data_bytes
        vectors = cache.store_copy(fingerprint, handle.fileno(), size, header, progress)
        if vectors is None:  # no usable cache: into memory, by reads
            handle.seek(offset)
            vectors = np.fromfile(handle, "<f4", shape[0] * shape[1])
            if vectors.size == shape[0] * shape[1]:
                vectors = vectors.reshape(shape)
    after = path.stat()
    unchanged = ((before.st_size, before.st_mtime_ns, before.st_ino)
                 == (after.st_size, after.st_mtime_ns, after.st_ino))
    if not unchanged or vectors.shape != shape or vectors.dtype != np.dtype("<f4"):
        cache.discard(fingerprint)
        raise DataError("changed while being read; it is read again once it settles",
                        file=display)
    return vectors
