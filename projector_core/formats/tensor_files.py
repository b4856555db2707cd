"""Tensor files: TSV (parsed on every core by polars, checked by pyarrow) and raw ``.bytes``
(``.npy`` is ``npy_files.py``; the catalog copies the data into its cache, see
``storage/tensor_cache.py``).

A TSV is cut into blocks of whole lines, parsed on worker threads (the parsers release the
GIL), and the blocks come back in file order, so a progress line can be shown and the cache
copy written while later blocks are still being parsed. Measured on this project's 2-core
machine (``bench/bench_tsv_load.py``, tensorboardX's 50k x 768 file): polars' CSV reader
parses a block about twice as fast as pyarrow's, which beat pandas' C engine. Polars is only
trusted with clean blocks: it reads a blank line or a short row as nulls, refuses trailing
spaces, and says nothing of line numbers, so a block it refuses or fills with nulls is parsed
again by the exact path: numpy checks the row structure, pyarrow parses the numbers (it
accepts the syntax numpy did: nan, inf, exponents, spaces around), and a Python loop over
the lines names the line and cell of an error. Values are parsed as float64 and rounded to
float32, which is what ``numpy.loadtxt(dtype=float32)`` did before: the same bytes for every
input.
"""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from projector_core.errors import DataError
from projector_core.formats.budgets import TENSOR_COLUMNS, TENSOR_ROW_BYTES

# measured on 2 busy cores: 8 MiB blocks parse 100k x 128 in 0.6-0.75 of the time of 32 MiB ones
# and less CPU (they stay in the caches and share out evenly); 20k x 768 in 0.95
CHUNK_BYTES = 8 * 2**20
PARSE_THREADS = max(1, min(8, os.cpu_count() or 1))

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


def _line_problem(line: bytes, expected_cols: int) -> str | None:
    """Say what is wrong with one TSV row, or None if it is a good row. The row is split at
    most one cell past the width: a line of millions of cells is never split whole."""
    line = line.rstrip(b"\r")
    cells = line.split(b"\t", expected_cols)
    whole = cells if b"\t" not in cells[-1] else cells[:-1]  # not the rest of a longer line
    for col, cell in enumerate(whole, start=1):
        try:
            float(cell)
        except ValueError:
            shown = cell[:40].decode("utf-8", "replace")
            return f"column {col}: {shown!r} is not a number{_cell_hint(cells, col)}"
    if len(cells) != expected_cols:
        found = line.count(b"\t") + 1
        return f"has {found} values, expected {expected_cols} like the first row"
    return None


def _cell_hint(cells: list[bytes], col: int) -> str:
    """What a cell that is not a number most likely means, as the usual writers make it."""
    cell = cells[col - 1].strip()
    if not cell and col == len(cells) > 1:
        return " (the line ends with a tab: a tensor TSV has none after its last value)"
    spaced, commas = [part for part in cell.split(b" ") if part], cell.split(b",")
    if len(spaced) > 1 and all(_is_number(part.strip(b",")) for part in spaced):
        return " (values separated by spaces: a tensor TSV separates them by tabs)"
    if len(commas) > 1 and all(_is_number(part) for part in commas):
        if len(commas) == 2 and not any(mark in cell for mark in b".eE"):
            return " (a decimal comma? numbers are written with a point)"
        return " (values separated by commas: a tensor TSV separates them by tabs)"
    return ""


def _is_number(text: bytes) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


HEADER_HINT = ("; a tensor TSV has no header line or index column (pandas: "
               "to_csv(path, sep='\\t', header=False, index=False))")


def _lines(chunk: bytes) -> Iterator[bytes]:
    """The lines of a block one at a time (a list of them all costs 33 bytes a line)."""
    start = 0
    while start < len(chunk):
        end = chunk.find(b"\n", start)
        end = len(chunk) if end < 0 else end
        yield chunk[start:end]
        start = end + 1


def _diagnose(chunk: bytes, first_line: int, cols: int, display: str) -> DataError:
    for offset, line in enumerate(_lines(chunk)):
        if not line.rstrip(b"\r"):  # blank, as the parser skips it (spaces are not blank)
            continue
        problem = _line_problem(line, cols)
        if problem and first_line + offset == 1 and "(" not in problem:  # names, not numbers
            problem += HEADER_HINT
        if problem:
            return DataError(problem, file=display, line=first_line + offset)
    return DataError("could not be parsed as tab-separated numbers", file=display, line=first_line)


@functools.lru_cache(maxsize=1)
def _csv_options() -> tuple[Any, Any, Any]:
    """pyarrow's options for one float column, one value per line: no quoting, no null markers
    (an empty cell is an error, as in numpy), empty lines skipped."""
    import pyarrow as pa
    from pyarrow import csv

    return (csv.ReadOptions(column_names=["v"], use_threads=False, block_size=1 << 30),
            csv.ParseOptions(delimiter=",", quote_char=False, ignore_empty_lines=True),
            csv.ConvertOptions(column_types={"v": pa.float64()}, null_values=[],
                               strings_can_be_null=False, quoted_strings_can_be_null=False))


@functools.lru_cache(maxsize=4)
def _polars_schema(cols: int) -> dict[str, Any]:
    import polars as pl

    return {f"c{i}": pl.Float64 for i in range(cols)}


def _parse_clean_chunk(chunk: bytes, cols: int, lines: int | None = None) -> np.ndarray | None:
    """The first ``lines`` lines of a block (all of them by default; what follows is the start
    of the next block) parsed by polars (multi-threaded, correctly rounded), or None when
    polars refuses them or reads a null (a blank line, a short row, an empty cell)."""
    import polars as pl

    lines = chunk.count(b"\n") if lines is None else lines
    try:
        frame = pl.read_csv(chunk, separator="\t", has_header=False, quote_char=None,
                            schema=_polars_schema(cols), n_rows=lines)
    except (pl.exceptions.PolarsError, pl.exceptions.PanicException):  # the exact path names it
        return None
    if frame.height != lines or any(frame.null_count().row(0)):
        return None
    with np.errstate(over="ignore"):  # beyond float32's range is inf, as numpy.loadtxt reads it
        return np.ascontiguousarray(frame.to_numpy(), np.float32)


def _parse_chunk(chunk: bytes, first_line: int, cols: int, display: str,
                 size: int | None = None, lines: int | None = None) -> np.ndarray:
    """The whole lines of a block (its first ``size`` bytes, ``lines`` lines) as float32 rows
    [n, cols]: by polars when they are clean, else by the exact path."""
    parsed = _parse_clean_chunk(chunk, cols, lines)
    if parsed is not None:
        return parsed
    whole = chunk if size is None or size == len(chunk) else chunk[:size]
    return _parse_chunk_exactly(whole, first_line, cols, display)


def _parse_chunk_exactly(chunk: bytes, first_line: int, cols: int, display: str) -> np.ndarray:
    """Whole lines of a TSV as float32 rows [n, cols]; blank lines are skipped, as in TensorBoard.

    The row structure is checked with numpy (every non-blank line holds cols - 1 tabs), then
    the tabs become line breaks and pyarrow parses one column of numbers: about 1.5 times
    faster than the same block read as ``cols`` columns.
    """
    import pyarrow as pa
    from pyarrow import csv

    text = np.frombuffer(chunk, np.uint8).copy()
    breaks = np.flatnonzero(text == 10)  # a chunk always ends with a line break
    tabs = np.flatnonzero(text == 9)
    tabs_per_line = np.diff(np.searchsorted(tabs, breaks), prepend=0)
    lengths = np.diff(breaks, prepend=-1) - 1
    ends = text[np.maximum(breaks - 1, 0)]
    blank = (lengths == 0) | ((lengths == 1) & (ends == 13))
    rows = int(np.count_nonzero(~blank))
    if np.any(tabs_per_line[~blank] != cols - 1):
        raise _diagnose(chunk, first_line, cols, display)
    text[tabs] = 10
    read, parse, convert = _csv_options()
    try:
        values = csv.read_csv(pa.py_buffer(text), read_options=read, parse_options=parse,
                              convert_options=convert).column(0).to_numpy()
    except pa.ArrowInvalid:
        raise _diagnose(chunk, first_line, cols, display) from None
    if values.size != rows * cols:  # an empty cell: its line break was skipped as a blank line
        raise _diagnose(chunk, first_line, cols, display)
    with np.errstate(over="ignore"):  # beyond float32's range is inf, as numpy.loadtxt reads it
        return np.asarray(values.reshape(rows, cols).astype(np.float32))


def _line_chunks(handle: BinaryIO, display: str) -> Iterator[tuple[int, bytes, int, int]]:
    """Blocks of about CHUNK_BYTES read by ``pread``: (number of the first line, block, bytes
    of whole lines in it, lines). What follows the last line break is read again at the start
    of the next block, so no block is copied to cut or join it (polars is told the line count)."""
    fd = handle.fileno()
    offset, line_no, step = 0, 1, CHUNK_BYTES
    while block := os.pread(fd, step, offset):
        size = block.rfind(b"\n") + 1
        if size == 0 and len(block) == step:  # a line longer than the block: read more at once
            _check_long_line(block, line_no, display)
            step = min(2 * step, TENSOR_ROW_BYTES.limit + 1)
            continue
        if size == 0:  # the last line, without a line break
            if block.strip():
                yield line_no, block + b"\n", len(block) + 1, 1
            return
        lines = block.count(b"\n", 0, size)
        yield line_no, block, size, lines
        offset, line_no, step = offset + size, line_no + lines, CHUNK_BYTES


def _check_long_line(start: bytes, line_no: int, display: str) -> None:
    """Refuse a line whose start, read so far, is already over a budget: its columns (the
    tabs in it) or its bytes."""
    cells = start.count(b"\t") + 1
    if cells > TENSOR_COLUMNS.limit:
        raise TENSOR_COLUMNS.exceeded(f"at least {cells:,} columns in its first "
                                      f"{len(start):,} bytes", file=display, line=line_no)
    if len(start) > TENSOR_ROW_BYTES.limit:
        raise TENSOR_ROW_BYTES.exceeded(f"more than {TENSOR_ROW_BYTES.limit:,} bytes",
                                        file=display, line=line_no)


def _width(chunk: bytes, line_no: int, display: str) -> int | None:
    """The number of columns of the first non-blank line (None: only blank lines), refused
    when it is over the budget: the width every later block is parsed with."""
    for offset, line in enumerate(_lines(chunk)):
        if line.strip():
            cols = line.count(b"\t") + 1
            if cols > TENSOR_COLUMNS.limit:
                raise TENSOR_COLUMNS.exceeded(f"{cols:,} columns", file=display,
                                              line=line_no + offset)
            return cols
    return None


def tsv_blocks(path: Path, display: str, progress: Progress | None = None) -> Iterator[np.ndarray]:
    """A tensor TSV (one vector per line, tab-separated numbers, no header) as float32 row
    blocks in file order, parsed on PARSE_THREADS threads with at most one block per thread
    waiting, so memory stays a few blocks whatever the file's size."""
    total = path.stat().st_size
    cols: int | None = None
    done = rows = 0
    waiting: deque[tuple[Future[np.ndarray], int]] = deque()

    def finish_oldest() -> np.ndarray:
        nonlocal done
        future, size = waiting.popleft()
        block = future.result()
        done += size
        if progress:
            progress(min(done, total), total)
        return block

    with path.open("rb") as handle, ThreadPoolExecutor(PARSE_THREADS, "tsv-parse") as pool:
        try:
            for line_no, chunk, size, lines in _line_chunks(handle, display):
                if cols is None:
                    cols = _width(chunk[:size], line_no, display)
                if cols is None:  # only blank lines so far
                    waiting.append((_done_future(np.empty((0, 0), np.float32)), size))
                else:
                    waiting.append((pool.submit(_parse_chunk, chunk, line_no, cols, display,
                                                size, lines), size))
                while len(waiting) > PARSE_THREADS:
                    block = finish_oldest()
                    rows += len(block)
                    if len(block):
                        yield block
            while waiting:
                block = finish_oldest()
                rows += len(block)
                if len(block):
                    yield block
        finally:
            for future, _ in waiting:
                future.cancel()
    if rows == 0:
        raise DataError("is empty: a tensor TSV needs one row of numbers per point", file=display)


def _done_future(value: np.ndarray) -> Future[np.ndarray]:
    future: Future[np.ndarray] = Future()
    future.set_result(value)
    return future


def read_tsv(path: Path, display: str, progress: Progress | None = None) -> np.ndarray:
    """Read a tensor TSV into memory (the catalog streams the blocks into its cache instead)."""
    blocks = list(tsv_blocks(path, display, progress))
    return np.concatenate(blocks) if len(blocks) > 1 else blocks[0]


def looks_binary(path: Path) -> bool:
    """TensorBoard reads a tensor as TSV unless it fails to decode as text; we sniff the start."""
    with path.open("rb") as handle:
        return binary_head(handle.read(4096))


def binary_head(head: bytes) -> bool:
    """Whether a file's first bytes are not UTF-8 text (see ``looks_binary``)."""
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a multi-byte character cut at the end is still text
    return False


def bytes_shape(path: Path, display: str, shape: tuple[int, ...]) -> tuple[int, int]:
    """Check raw little-endian float32 rows hold exactly N*D*4 bytes; the shape is the config's."""
    if len(shape) != 2 or 0 in shape:
        raise DataError("a .bytes tensor needs tensor_shape [N, D] in the config", file=display,
                        field="tensor_shape")
    expected = shape[0] * shape[1] * 4
    size = path.stat().st_size
    if size != expected:
        raise DataError(f"has {size} bytes but tensor_shape {list(shape)} needs {expected} "
                        "(float32, N*D*4)", file=display)
    return int(shape[0]), int(shape[1])


def read_bytes(path: Path, display: str, shape: tuple[int, ...]) -> np.ndarray:
    """Raw float32 rows, memory-mapped (the catalog copies them into its cache instead)."""
    rows, cols = bytes_shape(path, display, shape)
    return np.memmap(path, dtype="<f4", mode="r", shape=(rows, cols))
