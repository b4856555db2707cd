"""Write embeddings too large for one file or one process's memory: zarr arrays, .npy shards.

Both take either an array (anything sliceable by rows: numpy, a memory map, a torch tensor,
a dask array) or an iterable of row blocks, so a 4 GB matrix is written without ever being
in memory whole. Either is written into a temporary folder and renamed into place, so a
live reader never sees half an array. zarr is imported only by :func:`write_zarr`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

DEFAULT_CHUNK_BYTES = 64 * 2**20  # about what one Dask task reads


def _blocks(mat: Any, chunk_rows: int | None) -> Iterator[np.ndarray]:
    """Row blocks of ``mat`` as float32: slices of an array, or the blocks an iterable gives."""
    if hasattr(mat, "shape") and len(mat.shape) == 2:
        rows = chunk_rows or max(1, DEFAULT_CHUNK_BYTES // max(1, int(mat.shape[1]) * 4))
        for start in range(0, int(mat.shape[0]), rows):
            yield _float32(mat[start:start + rows])
        return
    for block in mat:
        yield _float32(block)


def _float32(block: Any) -> np.ndarray:
    if hasattr(block, "detach"):  # a torch tensor
        block = block.detach().cpu().numpy()
    array = np.ascontiguousarray(np.asarray(block), dtype="<f4")
    if array.ndim != 2:
        raise ValueError(f"row blocks must be 2-D (rows, D), got shape {list(array.shape)}")
    return array


def _replace_folder(temporary: Path, target: Path) -> None:
    """Rename a finished folder into place, moving an older one aside first."""
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.replace(target, old / target.name)
    os.replace(temporary, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def require_zarr() -> None:
    """An ImportError with the one-line install hint when zarr is missing (before any file
    is written)."""
    try:
        import zarr
    except ImportError:
        raise ImportError("writing zarr needs the zarr package: "
                          "pip install 'embedding-projector[zarr]' (Python 3.11 or later)") from None
    if int(zarr.__version__.split(".")[0]) < 3:  # zarr 2 lacks create_array (and resizes otherwise)
        raise ImportError(f"writing zarr needs zarr 3 (found {zarr.__version__}): "
                          "pip install -U 'zarr>=3' (Python 3.11 or later)")


def write_zarr(path: str | Path, mat: Any | Iterable[Any], chunk_rows: int | None = None,
               zarr_format: int = 3) -> Path:
    """Write an (N, D) float32 zarr array chunked by rows (all columns in each chunk).

    ``chunk_rows`` defaults to about 64 MiB of rows; blocks from an iterable are appended
    in order and may have any number of rows. Chunks are not compressed: float embeddings
    shrink by a few percent at most, and every query-time read would pay for decompressing.
    """
    require_zarr()
    import zarr

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        array = None
        written = 0
        for block in _blocks(mat, chunk_rows):
            if array is None:
                rows = chunk_rows or max(1, DEFAULT_CHUNK_BYTES // max(1, block.shape[1] * 4))
                array = zarr.create_array(store=str(temporary), shape=(0, block.shape[1]),
                                          chunks=(rows, block.shape[1]), dtype="<f4", compressors=None,
                                          zarr_format=zarr_format, overwrite=True)
            if block.shape[1] != array.shape[1]:
                raise ValueError(f"block has {block.shape[1]} columns, earlier ones "
                                 f"{array.shape[1]}")
            array.resize((written + block.shape[0], array.shape[1]))
            array[written:written + block.shape[0]] = block
            written += block.shape[0]
        if array is None:
            raise ValueError("no rows to write")
        _replace_folder(temporary, target)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return target


def write_npy_shards(folder: str | Path, mat: Any | Iterable[Any],
                     chunk_rows: int | None = None) -> Path:
    """Write row blocks as ``part-00000.npy``, ``part-00001.npy``, ... in ``folder``."""
    target = Path(folder)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        count = 0
        for count, block in enumerate(_blocks(mat, chunk_rows), start=1):
            np.save(temporary / f"part-{count - 1:05d}.npy", block, allow_pickle=False)
        if count == 0:
            raise ValueError("no rows to write")
        _replace_folder(temporary, target)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    return target
