"""Big and hostile metadata: an enormous line is refused by its number in bounded memory."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import numpy as np
import psutil
import pytest

from projector_core.errors import DataError
from projector_core.formats.budgets import METADATA_COLUMNS, METADATA_ROW_BYTES
from projector_core.formats.metadata import parse_metadata, read_metadata
from tests.builders import vectors, write_pbtxt_run

MB = 2**20


def sparse_long_line(path: Path, line_bytes: int, rows_before: int = 3) -> None:
    """A header, a few rows, then one line of `line_bytes` (a hole in the file, instant to
    write, read back as NUL bytes), then one more row."""
    with path.open("wb") as handle:
        handle.write(b"name\tkind\n" + b"".join(b"p%d\tx\n" % i for i in range(rows_before)))
        handle.seek(line_bytes, io.SEEK_CUR)
        handle.write(b"\tz\nlast\ty\n")


def test_a_1_gb_line_is_refused_with_its_number_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "m.tsv"
    sparse_long_line(path, 2**30)
    process = psutil.Process()
    rss, read = process.memory_info().rss, process.io_counters().read_chars
    with pytest.raises(DataError) as error:
        read_metadata(path, "m.tsv", 5)
    assert str(error.value).startswith("m.tsv line 5: line is over ")
    assert "over the budget of 1 MiB per metadata row" in str(error.value)
    assert process.memory_info().rss - rss < 100 * MB
    # Only the first chunks are read: bytes read by this process, counted by the kernel.
    assert process.io_counters().read_chars - read < 20 * MB


def test_a_line_just_over_the_limit_names_its_size(tmp_path: Path) -> None:
    path = tmp_path / "m.tsv"
    sparse_long_line(path, METADATA_ROW_BYTES.limit + 10, rows_before=1)
    with pytest.raises(DataError, match=r"^m\.tsv line 3: line is 1,048,588 bytes, over"):
        read_metadata(path, "m.tsv", None)
    fits = b"a\tb\n" + b"x" * (METADATA_ROW_BYTES.limit - 2) + b"\ty\n"
    assert parse_metadata(fits, "m.tsv", 1).column("b") == ["y"]


def test_the_server_lists_the_run_and_serves_its_tensor(tmp_path: Path, serve) -> None:
    buffer = io.BytesIO()
    np.save(buffer, vectors(5, 2))
    write_pbtxt_run(tmp_path / "run", 'embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy"\n'
                    '  metadata_path: "m.tsv"\n}\n', {"t.npy": buffer.getvalue()})
    sparse_long_line(tmp_path / "run" / "m.tsv", 2**30)
    base = serve(tmp_path)
    embedding = httpx.get(f"{base}/api/runs").json()[0]["embeddings"][0]
    assert embedding["error"].startswith("run/m.tsv line 5: line is over")
    assert httpx.get(f"{base}/api/tensor", params={"run": "run", "embedding": "t"}).status_code == 200


@pytest.mark.parametrize(("raw", "expected"), [
    (b"a\tb\n1\t2\n\n3\t4\n", "m.tsv line 3: has 1 cells, the header names 2 columns"),
    (b"a\tb\n1\t2\n3\t4\t5\n", "m.tsv line 3: has 3 cells, the header names 2 columns"),
    (b"a\tb\n" + b"1\t2\n" * 100_000 + b"bad\n", "m.tsv line 100002: has 1 cells"),
    (b"a\tb\n1\t2\n" + "é".encode()[:1] + b"\t3\n", "m.tsv line 3: is not valid UTF-8"),
])
def test_bad_rows_are_named_by_line(raw: bytes, expected: str) -> None:
    with pytest.raises(DataError) as error:
        parse_metadata(raw, "m.tsv", None)
    assert str(error.value).startswith(expected)


def test_cells_are_kept_as_written() -> None:
    raw = ('\ufeffname\tscore\tnote\r\n"quoted\t 1.5 \t\r\nx\t-inf\t\u00e9\r\n\r\n').encode()
    metadata = parse_metadata(raw, "m.tsv", 2)
    assert metadata.column("name") == ['"quoted', "x"]
    assert metadata.column("note") == ["", "é"]
    np.testing.assert_array_equal(metadata.numeric("score"), [1.5, -np.inf])
    one = parse_metadata(b"a b\n\nc\td\r\n", "m.tsv", 3)  # no header: a tab is part of a label
    assert one.column("label") == ["a b", "", "c\td"]


def test_a_header_wider_than_the_budget_is_refused_before_a_column_is_built() -> None:
    width = METADATA_COLUMNS.limit + 1
    header = "\t".join(f"c{i}" for i in range(width)).encode()
    process = psutil.Process()
    rss = process.memory_info().rss
    with pytest.raises(DataError) as error:
        parse_metadata(header + b"\n" + b"x\t" * width + b"\n", "m.tsv", 1)
    assert str(error.value) == (f"m.tsv line 1: its header names {width:,} columns, over the "
                                "budget of 4,096 columns per metadata TSV")
    assert process.memory_info().rss - rss < 20 * MB
    fits = "\t".join(f"c{i}" for i in range(METADATA_COLUMNS.limit)).encode()
    assert len(parse_metadata(fits + b"\n" + b"\tx" * (METADATA_COLUMNS.limit - 1) + b"\n", "m.tsv",
                              1).names) == METADATA_COLUMNS.limit
