"""Metadata TSV with TensorBoard's header rule.

If the first line contains a tab it is a header of column names; a file with one column has no
header and its column is called ``label``. Empty cells are missing values. A column whose
present values all parse as numbers is numeric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from projector_core.errors import DataError

SEQUENCE_COLUMNS = ("__next__", "__seq_next__")
RESERVED_COLUMNS = ("__index__",)
DEFAULT_COLUMN = "label"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@dataclass
class Metadata:
    """Columns of strings ("" = missing), with numeric columns also kept as float arrays."""

    names: list[str]
    columns: dict[str, list[str]]
    has_header: bool
    text: str
    warnings: list[str] = field(default_factory=list)
    _numeric: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return len(self.columns[self.names[0]]) if self.names else 0

    def column(self, name: str) -> list[str]:
        return self.columns[name]

    def numeric(self, name: str) -> np.ndarray | None:
        """The column as float64 (NaN where missing), or None when it holds any non-number."""
        if name not in self._numeric:
            values = self.columns[name]
            present = [v for v in values if v != ""]
            if not present or not all(_is_number(v) for v in present):
                return None
            self._numeric[name] = np.array([float(v) if v != "" else math.nan for v in values])
        return self._numeric[name]

    def is_numeric(self, name: str) -> bool:
        return self.numeric(name) is not None

    @classmethod
    def from_columns(cls, columns: dict[str, list[str]]) -> Metadata:
        """Metadata that came with the vectors (a parquet table, .npz members), not from a TSV."""
        names = list(columns)
        rows = zip(*(columns[name] for name in names), strict=True)
        text = "\t".join(names) + "\n" + "".join("\t".join(row) + "\n" for row in rows)
        return cls(names=names, columns=dict(columns), has_header=True, text=text)

    def to_tsv(self) -> str:
        """Always with a header line; the file's own text when it had one."""
        if self.has_header:
            return self.text if self.text.endswith("\n") else self.text + "\n"
        return "\n".join([DEFAULT_COLUMN, *self.columns[DEFAULT_COLUMN]]) + "\n"


def _decode(raw: bytes, display: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"is not valid UTF-8 (byte {raw[exc.start]:#x})", file=display,
                        line=line) from None


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
    text = _decode(raw, display)
    lines = text.replace("\r\n", "\n").split("\n")
    while lines and lines[-1].strip() == "":
        lines.pop()
    if not lines:
        raise DataError("is empty", file=display)
    has_header = "\t" in lines[0]
    if has_header:
        names = lines[0].split("\t")
        body = lines[1:]
        seen: dict[str, int] = {}
        for col, name in enumerate(names, start=1):
            if name in seen:
                raise DataError(f"column {col} repeats the column name {name!r}", file=display,
                                line=1)
            if name in RESERVED_COLUMNS:
                raise DataError(f"column name {name!r} is reserved by the projector; rename it",
                                file=display, line=1)
            seen[name] = col
    else:
        names = [DEFAULT_COLUMN]
        body = lines
    width = len(names)
    columns: list[list[str]] = [[] for _ in names]
    first_data_line = 2 if has_header else 1
    for offset, line in enumerate(body):
        cells = line.split("\t") if has_header else [line]
        if len(cells) != width:
            raise DataError(f"has {len(cells)} cells, the header names {width} columns",
                            file=display, line=first_data_line + offset)
        for column, cell in zip(columns, cells, strict=True):
            column.append(cell)
    if n_points is not None and len(body) != n_points:
        raise _row_count_error(len(body), n_points, has_header, display)
    metadata = Metadata(names=names, columns=dict(zip(names, columns, strict=True)), has_header=has_header,
                        text=text)
    _check_columns(metadata, display, first_data_line)
    return metadata


def _check_columns(metadata: Metadata, display: str, first_data_line: int) -> None:
    """Sequence columns must hold point indices; near-numeric columns get a warning."""
    n = metadata.n_rows
    for name in metadata.names:
        values = metadata.columns[name]
        if name in SEQUENCE_COLUMNS:
            for row, value in enumerate(values):
                if value != "" and not (value.isdigit() and int(value) < n):
                    raise DataError(f"column {name!r} must hold point indices 0..{n - 1}, "
                                    f"found {value!r}", file=display, line=first_data_line + row)
            continue
        present = [(row, v) for row, v in enumerate(values) if v != ""]
        bad = [(row, v) for row, v in present if not _is_number(v)]
        if present and 0 < len(bad) <= max(1, len(present) // 100):
            row, value = bad[0]
            metadata.warnings.append(
                f"{display} line {first_data_line + row}: column {name!r} is numeric except for "
                f"{value!r}, so it is treated as text")
