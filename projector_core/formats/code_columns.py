"""Categorical columns of a chunked embedding, stored beside it as int32 codes.

At 100M points a metadata TSV is gigabytes of strings the server would parse and hold, only
for the map to be coloured by a column of a dozen classes. So a chunked embedding may carry
its categorical columns as columnar arrays in a folder beside it: for ``v.zarr`` (or a
folder of ``.npy`` shards ``v``) the folder ``v.columns``, holding one zarr array per
column, named after it: N int32 codes, their categories in the array's ``dictionary``
attribute. The workers that build the tiles read the codes of their shards from it, and the
tiles carry ``codes/<column>`` (colour and search over every point), while the server reads
only each array's metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.errors import DataError
from projector_core.formats.chunked import ChunkedVectors, NpyShardsSource, ZarrSource
from projector_core.storage.fingerprint import fingerprint

FOLDER_SUFFIX = ".columns"


def columns_folder(embedding: Path) -> Path:
    """Where the columns of the chunked embedding at ``embedding`` are stored."""
    embedding = Path(embedding)
    stem = embedding.name[:-len(".zarr")] if embedding.name.endswith(".zarr") else embedding.name
    return embedding.with_name(stem + FOLDER_SUFFIX)


def write_code_column(embedding: Path, name: str, codes: np.ndarray | Iterable[np.ndarray],
                      dictionary: list[str], rows: int, chunk_rows: int = 1 << 20) -> Path:
    """Write column ``name`` of the embedding at ``embedding``: ``rows`` int32 codes into
    ``dictionary``, from an array or consecutive blocks (never whole in memory). Its path."""
    import zarr

    path = columns_folder(embedding) / name
    array = zarr.create_array(store=str(path), shape=(rows,), chunks=(min(chunk_rows, rows),),
                              dtype="<i4", compressors=None, overwrite=True, zarr_format=3)
    array.attrs["dictionary"] = list(dictionary)
    start = 0
    for block in ([codes] if isinstance(codes, np.ndarray) else codes):
        block = np.asarray(block, np.int32)
        array[start:start + block.shape[0]] = block
        start += block.shape[0]
    if start != rows:
        raise ValueError(f"column {name!r}: {start} codes written for {rows} rows")
    return path


def _embedding_path(vectors: ChunkedVectors) -> Path:
    source = vectors.source
    if isinstance(source, ZarrSource):
        return Path(source.path)
    assert isinstance(source, NpyShardsSource)
    return Path(source.pieces[0].path).parent


def code_columns(vectors: ChunkedVectors) -> dict[str, tuple[str, list[str]]]:
    """name -> (path of its N int32 codes, dictionary) of the columns stored beside
    ``vectors`` (none when there is no such folder); DataError naming a broken one."""
    import zarr

    folder = columns_folder(_embedding_path(vectors))
    found: dict[str, tuple[str, list[str]]] = {}
    if not folder.is_dir():
        return found
    for path in sorted(p for p in folder.iterdir() if p.is_dir()):
        try:
            array: Any = zarr.open_array(store=str(path), mode="r")
        except Exception as error:  # zarr raises many kinds for a damaged store
            raise DataError(f"is not a readable zarr array: {error}", file=str(path)) from None
        dictionary = array.attrs.get("dictionary")
        if array.shape != (vectors.shape[0],) or array.dtype.kind not in "iu":
            raise DataError(f"has shape {list(array.shape)} and dtype {array.dtype}; a column "
                            f"is {vectors.shape[0]} integer codes, one per row", file=str(path))
        if not isinstance(dictionary, list):
            raise DataError("has no 'dictionary' attribute (the categories its codes index)",
                            file=str(path))
        found[path.name] = (str(path), [str(value) for value in dictionary])
    return found


class CodeColumn:
    """One stored column as the server answers it: its dictionary (from the array's
    attribute), its codes a zarr chunk at a time (counted, searched, streamed: never all N
    at once) and, for in-memory tiles on one machine only, read whole (4 bytes a row)."""

    def __init__(self, name: str, path: str, dictionary: list[str]) -> None:
        self.name, self.path, self.dictionary = name, path, dictionary

    @cached_property
    def digest(self) -> str:
        """What changes when the column is rewritten (its metadata file's size and time)."""
        meta = Path(self.path) / "zarr.json"
        stat = meta.stat() if meta.exists() else Path(self.path).stat()
        return fingerprint(self.path, stat.st_size, stat.st_mtime_ns)

    @property
    def rows(self) -> int:
        """How many rows the column holds (one code each)."""
        return int(self._array().shape[0])

    def blocks(self) -> Iterator[np.ndarray]:
        """The int32 codes, one zarr chunk after another; a code outside the dictionary is a
        DataError naming the row (checked by :attr:`counts` once: ask it first)."""
        array = self._array()
        step = max(int(array.chunks[0]), 1)
        for start in range(0, int(array.shape[0]), step):
            yield self._checked(np.asarray(array[start:start + step], np.int32), start)

    @cached_property
    def counts(self) -> np.ndarray:
        """int64 rows holding each dictionary value (one pass, kept)."""
        counts = np.zeros(len(self.dictionary), np.int64)
        for block in self.blocks():
            counts += np.bincount(block, minlength=len(self.dictionary))
        return counts

    def rows_with(self, wanted: np.ndarray) -> np.ndarray:
        """int64 rows whose code is marked in ``wanted`` (bool, one per dictionary value)."""
        found, start = [], 0
        for block in self.blocks():
            found.append(np.flatnonzero(wanted[block]) + start)
            start += block.size
        return np.concatenate(found) if found else np.zeros(0, np.int64)

    @cached_property
    def codes(self) -> np.ndarray:
        """Every row's int32 code, kept: what in-memory tiles carry (one machine)."""
        return self._checked(np.asarray(self._array()[:], np.int32), 0)

    def _array(self) -> Any:
        import zarr

        return zarr.open_array(store=self.path, mode="r")

    def _checked(self, block: np.ndarray, start: int) -> np.ndarray:
        bad = np.flatnonzero((block < 0) | (block >= len(self.dictionary)))
        if bad.size:
            raise DataError(f"row {start + int(bad[0])} holds code {int(block[bad[0]])}, "
                            f"outside its dictionary of {len(self.dictionary)} values",
                            file=self.path)
        return block


def open_code_columns(vectors: ChunkedVectors) -> dict[str, CodeColumn]:
    """The columns stored beside ``vectors`` (:func:`code_columns`), ready to answer."""
    return {name: CodeColumn(name, path, dictionary)
            for name, (path, dictionary) in code_columns(vectors).items()}
