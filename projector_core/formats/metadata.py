"""Metadata TSV with TensorBoard's header rule.

If the first line contains a tab it is a header of column names; a file with one column has no
header and its column is called ``label``. Empty cells are missing values. A column whose
present values all parse as numbers is numeric.

Big files in bounded memory: the file is read in chunks, and a line over its budget
(``budgets.METADATA_ROW_BYTES``) is refused (naming it) as soon as it is seen, without reading
on; UTF-8 is checked chunk by chunk. A header naming more columns than
``budgets.METADATA_COLUMNS`` is refused before a column is built.
The rows are split by pyarrow's multi-threaded CSV reader (quoting off: a TSV cell is taken as
written) into Arrow string columns, a few bytes a cell instead of a Python string each; the
per-column checks run vectorised over those.

Start-up: pyarrow is imported where metadata is read (a LOGDIR without any never pays for it),
and no Python object is ever handed to pyarrow nor a result taken out by its ``to_numpy``:
either makes pyarrow import pandas, when installed, which cost 0.3 s of every start with the
sample data.
"""

from __future__ import annotations

import codecs
import io
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from projector_core.errors import DataError
from projector_core.formats.arrow_columns import (
    NUMBER,
    as_floats,
    bad_numbers,
    buffer_values,
    dictionary_codes,
    mask,
    string_scalar,
)
from projector_core.formats.budgets import METADATA_COLUMNS, METADATA_ROW_BYTES
from projector_core.storage.fingerprint import fingerprint

if TYPE_CHECKING:
    import pyarrow as pa

SEQUENCE_COLUMNS = ("__next__", "__seq_next__")
RESERVED_COLUMNS = ("__index__",)
DEFAULT_COLUMN = "label"
READ_CHUNK_BYTES = 8 * 2**20
@dataclass
class Metadata:
    """Columns of strings as Arrow arrays ("" = missing); numeric ones also as float arrays."""

    names: list[str]
    arrays: dict[str, pa.Array | pa.ChunkedArray]
    has_header: bool
    raw: bytes | bytearray
    warnings: list[str] = field(default_factory=list)
    _numeric: dict[str, np.ndarray | None] = field(default_factory=dict)
    _codes: dict[str, tuple[list[str], np.ndarray]] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return len(self.arrays[self.names[0]]) if self.names else 0

    def column(self, name: str) -> list[str]:
        values: list[str] = self.arrays[name].to_pylist()
        return values

    def numeric(self, name: str) -> np.ndarray | None:
        """The column as float64 (NaN where missing), or None when it holds any non-number."""
        if name not in self._numeric:
            self._numeric[name] = as_floats(self.arrays[name])
        return self._numeric[name]

    def categorical(self, name: str) -> tuple[list[str], np.ndarray]:
        """The column as its distinct values (in order of first appearance) and one int32
        code per row into them: made once by Arrow's hash encoder and kept, so a colour
        column costs one pass however often a page asks for it (10M rows in about 1 s,
        where a Python dict took 5)."""
        if name not in self._codes:
            self._codes[name] = dictionary_codes(self.arrays[name])
        return self._codes[name]

    def is_numeric(self, name: str) -> bool:
        return self.numeric(name) is not None

    @cached_property
    def digest(self) -> str:
        """What changes when the metadata does (part of the embedding's fingerprint)."""
        return fingerprint(self.raw)

    @classmethod
    def from_columns(cls, columns: dict[str, list[str]], display: str = "") -> Metadata:
        """Metadata that came with the vectors (a parquet table, .npz members, data in memory),
        not from a TSV; checked as a TSV's columns are, lines counted in the TSV it is served as."""
        import pyarrow as pa

        names = list(columns)
        for name in names:
            if name in RESERVED_COLUMNS:
                raise _reserved_name(name, display, field=name)
        rows = zip(*(columns[name] for name in names), strict=True)
        text = "\t".join(names) + "\n" + "".join("\t".join(row) + "\n" for row in rows)
        arrays = {name: pa.array(list(values), pa.string()) for name, values in columns.items()}
        metadata = cls(names=names, arrays=arrays, has_header=True, raw=text.encode())
        _check_columns(metadata, display, 2)
        return metadata

    def to_tsv(self) -> str:
        """Always with a header line; the file's own text when it had one."""
        if self.has_header:
            text = self.raw.decode("utf-8-sig")
            return text if text.endswith("\n") else text + "\n"
        return "\n".join([DEFAULT_COLUMN, *self.column(DEFAULT_COLUMN)]) + "\n"


def _scan(stream: BinaryIO, display: str) -> bytearray:
    """The stream's bytes, read a chunk at a time: a line over
    ``METADATA_ROW_BYTES`` or a byte sequence that is not UTF-8 is refused, naming the line, when
    its chunk is read, so a file with one enormous line costs one chunk of memory."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    out = bytearray()
    line, run = 1, 0  # line number at the chunk's start; bytes of that line before the chunk
    while chunk := stream.read(READ_CHUNK_BYTES):
        try:
            decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            bad = line + chunk.count(b"\n", 0, max(0, exc.start))
            raise DataError(f"is not valid UTF-8 (byte {chunk[max(0, exc.start)]:#x})",
                            file=display, line=bad) from None
        newlines = np.flatnonzero(np.frombuffer(chunk, np.uint8) == 10)
        lengths = np.diff(newlines, prepend=-1 - run) - 1 if newlines.size else np.empty(0)
        tail = run + len(chunk) if not newlines.size else len(chunk) - 1 - int(newlines[-1])
        over = np.flatnonzero(lengths > METADATA_ROW_BYTES.limit)
        if over.size or tail > METADATA_ROW_BYTES.limit:
            index = int(over[0]) if over.size else newlines.size
            size = f"{int(lengths[index]):,} bytes" if over.size else f"over {tail:,} bytes"
            raise METADATA_ROW_BYTES.exceeded(f"line is {size}", file=display,
                                              line=line + index)
        line += newlines.size
        run = tail
        out += chunk
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise DataError("is not valid UTF-8 (the file ends inside a character)", file=display,
                        line=line) from None
    return out  # a bytearray: bytes(out) would copy the whole file


def read_metadata(path: Path, display: str, n_points: int | None) -> Metadata:
    """Read and parse a metadata file in bounded memory (see the module's docstring)."""
    try:
        with path.open("rb") as handle:
            raw = _scan(handle, display)
    except FileNotFoundError:
        raise DataError("file not found", file=display) from None
    except OSError as exc:
        raise DataError(f"cannot be read: {exc.strerror}", file=display) from None
    return _parse(raw, display, n_points)


def _row_count_error(rows: int, n_points: int, has_header: bool, display: str) -> DataError:
    if rows == n_points - 1 and has_header:
        hint = ("its first line contains a tab, so it was read as a header of column names. "
                "A multi-column metadata file needs a header line; if the first line is data, "
                "add a header line above it")
    elif rows == n_points + 1 and not has_header:
        hint = ("a single-column metadata file has no header, so its first line counts as a data "
                "row. Remove that first line (a one-column file needs no header)")
    elif abs(rows - n_points) == 1:
        hint = "a header line miscounted is the usual cause (see the header rule)"
    else:
        hint = "each point needs exactly one metadata row"
    return DataError(f"has {rows} data rows but the tensor has {n_points} points: {hint}",
                     file=display)


def parse_metadata(raw: bytes, display: str, n_points: int | None) -> Metadata:
    """Parse metadata bytes; ``n_points`` (when known) must equal the number of data rows."""
    return _parse(_scan(io.BytesIO(raw), display), display, n_points)


def _bounds(raw: bytes | bytearray) -> tuple[int, int, int]:
    """Where the text starts (after a BOM), where its last non-blank character ends, and where
    that character's line ends: trailing blank lines are not rows."""
    start = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    last = len(raw)
    while last > start and raw[last - 1] in b" \t\r\n\x0b\x0c":
        last -= 1
    end = raw.find(b"\n", last)
    return start, last, len(raw) if end < 0 else end


def _lines_as_strings(content: memoryview) -> pa.ChunkedArray:
    """Each line whole (no header: a tab inside is part of the label), as one Arrow array
    built from the file's bytes without a Python string per line."""
    import pyarrow as pa

    buf = np.frombuffer(content, np.uint8)
    newlines = np.flatnonzero(buf == 10)
    starts = np.concatenate([[0], newlines + 1])
    ends = np.concatenate([newlines, [len(buf)]])
    carriage = (ends > starts) & (buf[np.maximum(ends - 1, 0)] == 13)  # CRLF line ends
    ends = ends - carriage
    data = np.delete(buf, np.concatenate([newlines, ends[carriage]]))
    offsets = np.concatenate([[0], np.cumsum(ends - starts)]).astype(np.int64)
    return pa.chunked_array([pa.LargeStringArray.from_buffers(
        len(starts), pa.py_buffer(offsets), pa.py_buffer(data))])


def _split_columns(body: memoryview, width: int, display: str,
                   empty_line: bool) -> list[pa.ChunkedArray]:
    """The data rows split at tabs by pyarrow's CSV reader, every cell a string as written."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not body:
        return [pa.chunked_array([], pa.string()) for _ in range(width)]
    names = [f"c{i}" for i in range(width)]
    invalid: list[int] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        invalid.append(row.actual_columns)
        return "skip"

    table = pacsv.read_csv(
        pa.py_buffer(body),
        read_options=pacsv.ReadOptions(column_names=names,
                                       block_size=4 * METADATA_ROW_BYTES.limit),
        parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, double_quote=False,
                                         escape_char=False, newlines_in_values=False,
                                         ignore_empty_lines=False, invalid_row_handler=on_invalid),
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=False,
            null_values=[], quoted_strings_can_be_null=False, check_utf8=False))
    if invalid or empty_line:  # pyarrow reads an empty line as a row of empty cells
        raise _bad_row(body, width, display)
    return [table.column(name) for name in names]  # kept in pyarrow's blocks: no second copy


def _bad_row(body: memoryview, width: int, display: str) -> DataError:
    """The first data line whose cell count is not ``width`` (pyarrow does not say which)."""
    buf = np.frombuffer(body, np.uint8)
    tabs = np.cumsum(buf == 9)
    per_line = np.diff(np.concatenate([[0], tabs[buf == 10], [tabs[-1]]]))
    wrong = np.flatnonzero(per_line != width - 1)
    index = int(wrong[0]) if wrong.size else 0
    return DataError(f"has {int(per_line[index]) + 1} cells, the header names {width} columns",
                     file=display, line=2 + index)


def _reserved_name(name: str, display: str, line: int | None = None,
                   field: str | None = None) -> DataError:
    return DataError(f"column name {name!r} is reserved by the projector; rename it",
                     file=display or None, line=line, field=field)


def _parse(raw: bytes | bytearray, display: str, n_points: int | None) -> Metadata:
    start, last, end = _bounds(raw)
    if last == start:
        raise DataError("is empty", file=display)
    first_end = raw.find(b"\n", start, end)
    first = bytes(raw[start:end if first_end < 0 else first_end])
    has_header = b"\t" in first
    if has_header:
        if (width := first.count(b"\t") + 1) > METADATA_COLUMNS.limit:
            raise METADATA_COLUMNS.exceeded(f"its header names {width:,} columns", file=display,
                                            line=1)
        names = first.rstrip(b"\r").decode("utf-8").split("\t")
        seen: dict[str, int] = {}
        for col, name in enumerate(names, start=1):
            if name in seen:
                raise DataError(f"column {col} repeats the column name {name!r}", file=display,
                                line=1)
            if name in RESERVED_COLUMNS:
                raise _reserved_name(name, display, line=1)
            seen[name] = col
        body = end if first_end < 0 else first_end + 1
        empty_line = (raw.startswith((b"\n", b"\r\n"), body, end)
                      or raw.find(b"\n\n", body, end) >= 0 or raw.find(b"\n\r\n", body, end) >= 0)
        arrays = _split_columns(memoryview(raw)[body:end], len(names), display, empty_line)
    else:
        names = [DEFAULT_COLUMN]
        arrays = [_lines_as_strings(memoryview(raw)[start:end])]
    rows = len(arrays[0])
    if n_points is not None and rows != n_points:
        raise _row_count_error(rows, n_points, has_header, display)
    metadata = Metadata(names=names, arrays=dict(zip(names, arrays, strict=True)),
                        has_header=has_header, raw=raw)
    _check_columns(metadata, display, 2 if has_header else 1)
    return metadata


def _check_columns(metadata: Metadata, display: str, first_data_line: int) -> None:
    """Sequence cells that are not point indices and near-numeric columns get a warning."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = metadata.n_rows
    for name in metadata.names:
        values = metadata.arrays[name]
        present = mask(pc.not_equal(values, string_scalar("")))
        if name in SEQUENCE_COLUMNS:  # the rule of frontend/js/sequences.js, which draws them
            cells = pc.utf8_trim_whitespace(values)
            short = pc.if_else(pc.match_substring_regex(cells, r"^[0-9]{1,18}$"), cells,
                               string_scalar("-1"))
            index = buffer_values(pc.cast(short, pa.int64()), "<i8")
            linked = mask(pc.not_equal(cells, string_scalar("")))
            bad = np.flatnonzero(linked & ((index < 0) | (index >= n) | (index == np.arange(n))))
            if bad.size:  # one bad link must not hide the embedding: the plot skips it
                row = int(bad[0])
                metadata.warnings.append(
                    f"{display} line {first_data_line + row}: column {name!r} must hold point "
                    f"indices 0..{n - 1}, found {cells[row].as_py()!r}; {bad.size} such "
                    f"cell{'s' if bad.size > 1 else ''} not drawn as sequence links")
            continue
        limit = max(1, int(present.sum()) // 100)
        if metadata.numeric(name) is not None or bad_numbers(values[:2 * limit + 1000]) > limit:
            continue  # all numbers, or plainly text (decided on a sample, many times faster)
        bad = np.flatnonzero(present & ~mask(pc.match_substring_regex(values, NUMBER)))
        if present.any() and 0 < bad.size <= limit:
            row = int(bad[0])
            metadata.warnings.append(
                f"{display} line {first_data_line + row}: column {name!r} is numeric except for "
                f"{values[row].as_py()!r}, so it is treated as text")
