"""A column read back from a file (one a training script wrote, or an export edited by hand):
a metadata TSV (TensorBoard's header rule), a CSV with a header line, or parquet, one row per
point. A bad row is refused naming its line; a value the column's kind cannot hold, naming
its line too.
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

import numpy as np

from projector_core.annotations.export import Format, check_format
from projector_core.annotations.kinds import Kind, stored_value
from projector_core.errors import DataError
from projector_core.formats.metadata import parse_metadata

if TYPE_CHECKING:
    import pyarrow as pa


def format_of(display: str, fmt: str | None) -> Format:
    """``fmt``, else the file name's suffix (``.tsv``/``.txt``, ``.csv``, ``.parquet``)."""
    if fmt is not None:
        return check_format(fmt)
    suffix = display.rsplit(".", 1)[-1].lower() if "." in display else ""
    found = {"tsv": "tsv", "txt": "tsv", "csv": "csv", "parquet": "parquet"}.get(suffix)
    if found is None:
        raise ValueError(f"{display}: say its format (tsv, csv or parquet): the name does not")
    return check_format(found)


def read_column(raw: bytes, display: str, fmt: Format, column: str, n: int,
                kind: Kind) -> tuple[list[str], np.ndarray]:
    """Column ``column`` of the file (its only column, when it has one), checked to hold
    ``n`` rows of values of ``kind``: the values (checked, as stored) and a code per row."""
    values, first_line = _values(raw, display, fmt, column, n)
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(pc.fill_null(values.cast(pa.string()), ""))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), np.int32)
    dictionary: list[str] = []
    for code, value in enumerate(encoded.dictionary.to_pylist()):
        try:
            dictionary.append(stored_value(kind, value, column))
        except ValueError as error:
            row = int(np.flatnonzero(codes == code)[0])
            where = ({"line": first_line + row} if first_line is not None
                     else {"field": f"row {row}"})
            raise DataError(str(error), file=display, **where) from None
    return dictionary, codes


def _values(raw: bytes, display: str, fmt: Format, column: str,
            n: int) -> tuple[pa.Array | pa.ChunkedArray, int | None]:
    """The column's cells and the line of its first row (None in parquet)."""
    if fmt == "tsv":
        metadata = parse_metadata(raw, display, n)  # names the line of a bad row
        return metadata.arrays[_pick(metadata.names, column, display)], (
            2 if metadata.has_header else 1)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(io.BytesIO(raw))
        except Exception as error:  # pyarrow raises several kinds for a damaged file
            raise DataError(f"is not a readable parquet file: {error}", file=display) from None
        values, first_line = table.column(_pick(table.column_names, column, display)), None
    else:
        values, first_line = _csv_column(raw, display, column), 2
    if len(values) != n:
        raise DataError(f"has {len(values):,} rows but the embedding has {n:,} points: each "
                        "point needs exactly one row", file=display)
    return values, first_line


def _csv_column(raw: bytes, display: str, column: str) -> pa.ChunkedArray:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    text = raw.decode("utf-8-sig", errors="replace")
    header = next(csv.reader(io.StringIO(text.split("\n", 1)[0])), [])
    name = _pick(header, column, display)
    bad: list[tuple[int | None, str]] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        bad.append((row.number, row.text))
        return "error"

    try:
        table = pacsv.read_csv(
            io.BytesIO(raw), read_options=pacsv.ReadOptions(use_threads=False),
            parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(
                column_types={h: pa.string() for h in header}, include_columns=[name],
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, UnicodeDecodeError) as error:
        if bad:
            line, cells = bad[0]
            raise DataError(f"has a row of another number of cells than the header's "
                            f"{len(header)}: {cells[:80]!r}", file=display, line=line) from None
        raise DataError(f"is not a readable CSV file: {error}", file=display) from None
    return table.column(name)


def _pick(names: list[str], column: str, display: str) -> str:
    if column in names:
        return column
    if len(names) == 1:
        return names[0]
    raise DataError(f"has no column {column!r}; columns: {', '.join(names) or 'none'}",
                    file=display)
