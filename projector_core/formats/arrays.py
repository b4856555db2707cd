"""Plain array files served without a projector config: `.npy`, `.npz`, `.parquet`, folders.

Nothing is ever unpickled. `.npy` files and the uncompressed members of `.npz` files (what
`np.savez` writes) are memory-mapped, so even a large file opens at once. A parquet file needs
a list column of numbers (`vector_column`, found by itself when there is only one); its other
scalar columns become metadata. pyarrow is an optional dependency, imported only for parquet.
"""

from __future__ import annotations

import struct
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.errors import DataError
from projector_core.formats.npy_files import read_npy

PLAIN_SUFFIXES = (".npy", ".npz", ".parquet")
_ZIP_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... name length, extra length


@dataclass
class PlainEmbedding:
    """One matrix from a plain file; metadata columns come from the same file when it has any."""

    name: str
    vectors: np.ndarray  # float32 (N, D), C-contiguous, maybe a read-only memmap
    metadata_columns: dict[str, list[str]] | None
    path: Path | None = None  # the file it was read from (messages name it)


def plain_array_files(folder: Path) -> list[Path]:
    """The plain array files directly inside `folder`, sorted by name."""
    return sorted(
        path
        for path in Path(folder).iterdir()
        if path.suffix.lower() in PLAIN_SUFFIXES and path.is_file()
    )


def read_plain_array(path: Path, vector_column: str | None = None) -> list[PlainEmbedding]:
    """The embeddings in a plain file, or in every plain file directly inside a folder.

    Names are the file stem, `stem/key` for `.npz` members. Raises DataError naming the file.
    """
    path = Path(path)
    if path.is_dir():
        files = plain_array_files(path)
        if not files:
            raise DataError("holds no .npy, .npz or .parquet files", file=str(path))
        return [found for file in files for found in read_plain_array(file, vector_column)]
    suffix = path.suffix.lower()
    if suffix == ".npy":
        return [PlainEmbedding(path.stem, read_npy(path, str(path)), None, path)]
    if suffix == ".npz":
        return _read_npz(path)
    if suffix == ".parquet":
        return [_read_parquet(path, vector_column)]
    raise DataError("is not a .npy, .npz or .parquet file", file=str(path))


# -- .npz -------------------------------------------------------------------------------------


def _read_npz(path: Path) -> list[PlainEmbedding]:
    """Each 2-D float member is an embedding; 1-D members of matching length are its metadata.

    Members holding Python objects are skipped, never unpickled.
    """
    display = str(path)
    try:
        with zipfile.ZipFile(path) as archive:
            arrays = {
                info.filename[: -len(".npy")]: _npz_member(path, archive, info)
                for info in archive.infolist()
                if info.filename.endswith(".npy")
            }
    except DataError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
        raise DataError(f"is not a readable .npz archive: {error}", file=display) from None
    matrices = {
        key: array
        for key, array in arrays.items()
        if isinstance(array, np.ndarray)
        and array.ndim == 2
        and np.issubdtype(array.dtype, np.floating)
        and 0 not in array.shape
    }
    if not matrices:
        found = ", ".join(
            f"{key} {array.dtype} {list(array.shape)}"
            if isinstance(array, np.ndarray)
            else f"{key} ({array})"
            for key, array in arrays.items()
        )
        raise DataError(
            f"has no 2-D float array to show (members: {found or 'none'})", file=display
        )
    columns = {
        key: array
        for key, array in arrays.items()
        if isinstance(array, np.ndarray) and array.ndim == 1 and array.dtype.kind in "biufUS"
    }
    embeddings = []
    for key, matrix in matrices.items():
        matching = {
            name: _as_strings(values)
            for name, values in columns.items()
            if len(values) == len(matrix)
        }
        if matrix.dtype != np.dtype("<f4") or not matrix.flags.c_contiguous:
            matrix = np.ascontiguousarray(matrix, dtype="<f4")
        embeddings.append(PlainEmbedding(f"{path.stem}/{key}", matrix, matching or None, path))
    return embeddings


def _npz_member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray | str:
    """A member, memory-mapped when stored uncompressed; for Python objects, why it is skipped."""
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        shape, fortran_order, dtype = _read_header(member, version, path, info.filename)
        header_size = member.tell()
    if dtype.hasobject:
        return "Python objects, skipped: they would need unpickling"
    if info.compress_type == zipfile.ZIP_STORED and 0 not in shape:
        with open(path, "rb") as handle:
            handle.seek(info.header_offset)
            signature, name_size, extra_size = _ZIP_LOCAL_HEADER.unpack(
                handle.read(_ZIP_LOCAL_HEADER.size)
            )
        if signature != b"PK\x03\x04":
            raise DataError("corrupt zip entry", file=str(path), field=info.filename)
        offset = info.header_offset + _ZIP_LOCAL_HEADER.size + name_size + extra_size + header_size
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape,
                         order="F" if fortran_order else "C")
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def _read_header(member: Any, version: tuple[int, int], path: Path,
                 name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    try:
        if version == (1, 0):
            return np.lib.format.read_array_header_1_0(member)
        return np.lib.format.read_array_header_2_0(member)
    except ValueError as error:
        raise DataError(f"corrupt .npy header: {error}", file=str(path), field=name) from None


def _as_strings(values: np.ndarray) -> list[str]:
    if values.dtype.kind == "S":
        return [_clean(v.decode("utf-8", errors="replace")) for v in values.tolist()]
    return [_clean(str(v)) for v in values.tolist()]


def _clean(text: str) -> str:
    """A metadata cell cannot hold tabs or line breaks (the metadata is served as TSV)."""
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


# -- .parquet ---------------------------------------------------------------------------------


def _read_parquet(path: Path, vector_column: str | None) -> PlainEmbedding:
    display = str(path)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(
            "reading parquet needs pyarrow: pip install 'embedding-projector[parquet]'", file=display
        ) from None
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as error:
        raise DataError(f"is not a readable parquet file: {error}", file=display) from None
    return replace(embedding_from_table(table, path.stem, vector_column, display), path=path)


def embedding_from_table(table: Any, name: str, vector_column: str | None, display: str) -> PlainEmbedding:
    """An Arrow table's list column of numbers as the vectors, its scalar columns as metadata
    (a parquet file, or a table handed over in Python)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def is_vector(field: pa.Field) -> bool:
        kind = field.type
        listed = (pa.types.is_list(kind) or pa.types.is_large_list(kind)
                  or pa.types.is_fixed_size_list(kind))
        return bool(listed and (pa.types.is_floating(kind.value_type)
                                or pa.types.is_integer(kind.value_type)))

    vector_fields = [field.name for field in table.schema if is_vector(field)]
    if vector_column is None:
        if len(vector_fields) != 1:
            choice = ", ".join(vector_fields) if vector_fields else "none"
            raise DataError(
                f"choose the column of vectors with --vector-column (list columns: {choice})",
                file=display,
            )
        vector_column = vector_fields[0]
    if vector_column not in table.column_names:
        raise DataError(
            f"has no column {vector_column!r} (columns: {', '.join(table.column_names)})",
            file=display,
            field=vector_column,
        )
    if vector_column not in vector_fields:
        raise DataError(
            f"column is {table.schema.field(vector_column).type}, not a list of numbers",
            file=display,
            field=vector_column,
        )

    column = table.column(vector_column).combine_chunks()
    if table.num_rows == 0:
        raise DataError("has no rows", file=display)
    if column.null_count:
        row = pc.index(pc.is_null(column), True).as_py()
        raise DataError(f"row {row} has no vector (null)", file=display, field=vector_column)
    lengths = pc.list_value_length(column).to_numpy(zero_copy_only=False)
    if lengths.min() != lengths.max() or lengths[0] == 0:
        row = int(np.argmax(lengths != lengths[0])) if lengths[0] else 0
        raise DataError(
            f"vectors must all have the same length: row 0 has {lengths[0]}, row {row} has "
            f"{lengths[row]}",
            file=display,
            field=vector_column,
        )
    values = pc.list_flatten(column).cast(pa.float32())
    vectors = values.to_numpy(zero_copy_only=False).reshape(table.num_rows, int(lengths[0]))

    metadata = {}
    for field in table.schema:
        kind = field.type
        if field.name == vector_column or pa.types.is_nested(kind) or pa.types.is_binary(kind):
            continue
        metadata[field.name] = [
            "" if value is None else _clean(str(value))
            for value in table.column(field.name).to_pylist()
        ]
    return PlainEmbedding(name, np.ascontiguousarray(vectors, dtype="<f4"), metadata or None)
