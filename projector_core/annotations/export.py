"""The metadata with the annotation columns beside the original ones, as a file to take back
to training: TSV in TensorBoard's metadata format (so TensorBoard shows it), CSV or parquet.

TensorBoard's TSV has no quoting: a cell is the text between tabs, so a tab or a line break
inside a note is written as a space (notes are the only values that may hold them). A file
of one column has no header line (TensorBoard's rule), any other has one. In parquet an
unlabelled row is null; in the text formats an empty cell, as in a metadata TSV.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, BinaryIO, Literal, get_args

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

Format = Literal["tsv", "csv", "parquet"]
FORMATS: tuple[Format, ...] = get_args(Format)
MEDIA_TYPES: dict[Format, str] = {
    "tsv": "text/tab-separated-values; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "parquet": "application/vnd.apache.parquet",
}
TSV_ROWS = 1 << 18  # rows joined into text at a time: memory stays bounded at 10M rows


def check_format(fmt: str) -> Format:
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}: one of {', '.join(FORMATS)}")
    return fmt


def coded(dictionary: list[str], codes: np.ndarray, empty_is_null: bool = False) -> pa.Array:
    """A categorical column as Arrow: its codes into its dictionary (code 0, "", as null
    when ``empty_is_null``)."""
    import pyarrow as pa

    indices = pa.array(np.asarray(codes, np.int32),
                       mask=(np.asarray(codes) == 0) if empty_is_null else None)
    return pa.DictionaryArray.from_arrays(indices, pa.array(dictionary, pa.string()))


def write_table(columns: dict[str, pa.Array], fmt: Format, sink: BinaryIO) -> None:
    """Write ``columns`` (of equal length; strings or dictionaries of them) as ``fmt``."""
    import pyarrow as pa

    table = pa.table(columns)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        pq.write_table(table, sink)
    elif fmt == "csv":
        import pyarrow.csv as pacsv

        pacsv.write_csv(_as_text(table, False), sink)
    else:
        _write_tsv(_as_text(table, True), sink)


def _as_text(table: pa.Table, one_line: bool) -> pa.Table:
    """Every column as plain strings, null as "" (and, for the TSV, a tab or line break as a
    space)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = []
    for column in table.columns:
        text = pc.fill_null(column.cast(pa.string()), "")
        columns.append(pc.replace_substring_regex(text, "[\t\r\n]", " ") if one_line else text)
    return pa.table(columns, names=table.column_names)


def _write_tsv(table: pa.Table, sink: BinaryIO) -> None:
    """Rows joined by Arrow, a block at a time, written as the bytes of the joined strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.num_columns > 1:
        sink.write(("\t".join(table.column_names) + "\n").encode())
    tab, newline, end = (pa.scalar(text, pa.large_string()) for text in ("\t", "\n", ""))
    for start in range(0, table.num_rows, TSV_ROWS):
        block = [c.cast(pa.large_string()) for c in table.slice(start, TSV_ROWS).columns]
        line = pc.binary_join_element_wise(*block, tab) if len(block) > 1 else block[0]
        lines = pc.binary_join_element_wise(line, end, newline)
        for chunk in (lines.chunks if isinstance(lines, pa.ChunkedArray) else [lines]):
            if len(chunk):
                offsets = np.frombuffer(chunk.buffers()[1], np.int64)
                first, last = offsets[chunk.offset], offsets[chunk.offset + len(chunk)]
                sink.write(memoryview(chunk.buffers()[2])[first:last])
