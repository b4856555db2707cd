"""Annotations exported beside the metadata (TSV as TensorBoard reads it, CSV, parquet) and a
column imported back from a file, a bad row named by its line."""

from __future__ import annotations

import csv
import io

import numpy as np
import pyarrow.parquet as pq
import pytest
from test_annotations_service import N, open_service, write_run

from projector_core.errors import DataError
from projector_core.formats.metadata import parse_metadata


@pytest.fixture
def service(tmp_path):
    write_run(tmp_path / "logdir")
    found = open_service(tmp_path / "logdir", tmp_path / "a.sqlite")
    found.annotate(".", "enc:00000", "label_fixed", "cat", [0, 1])
    found.annotate(".", "enc:00000", "dup", True, [1])
    found.annotate(".", "enc:00000", "why", 'says "hi",\tthen\nmore', [1], kind="note")
    return found


def exported(service, fmt: str) -> bytes:
    out = io.BytesIO()
    service.export(".", "enc:00010", fmt, out)
    return out.getvalue()


def test_the_tsv_is_a_tensorboard_metadata_file_with_the_columns_beside_the_original_ones(
        service):
    raw = exported(service, "tsv")
    metadata = parse_metadata(raw, "export.tsv", N)  # TensorBoard's header rule, one row a point
    assert metadata.names == ["name", "parity", "label_fixed", "dup", "why"]
    assert metadata.column("name")[:2] == ["p0", "p1"]
    assert metadata.column("label_fixed")[:3] == ["cat", "cat", ""]
    assert metadata.column("dup")[:2] == ["", "true"]
    assert metadata.column("why")[1] == 'says "hi", then more'  # no quoting in TensorBoard's TSV


def test_csv_and_parquet_carry_the_same_columns(service):
    rows = list(csv.reader(io.StringIO(exported(service, "csv").decode())))
    assert rows[0] == ["name", "parity", "label_fixed", "dup", "why"] and len(rows) == N + 1
    assert rows[2] == ["p1", "odd", "cat", "true", 'says "hi",\tthen\nmore']
    table = pq.read_table(io.BytesIO(exported(service, "parquet")))
    assert table.column("label_fixed").to_pylist()[:3] == ["cat", "cat", None]
    assert table.column("name").to_pylist()[1] == "p1"
    with pytest.raises(ValueError, match="unknown export format"):
        exported(service, "xlsx")


def test_a_single_column_export_has_no_header_line_as_tensorboard_reads_it(tmp_path):
    write_run(tmp_path / "plain", header=False, steps=(0,))
    plain = open_service(tmp_path / "plain", tmp_path / "b.sqlite")
    out = io.BytesIO()
    plain.export(".", "enc:00000", "tsv", out)
    assert out.getvalue().decode().splitlines()[:2] == ["p0", "p1"]


def test_a_column_comes_back_from_an_exported_file_as_one_undoable_edit(service):
    text = exported(service, "tsv").decode().replace("\tcat\t", "\tdog\t", 1)
    done = service.import_column(".", "enc:00000", "label_fixed", text.encode(), "back.tsv",
                                 author="ann")
    assert (done.edit.action, done.changed, done.edit.rows) == ("import", 1, N)
    values = service.values(".", "enc:00000", "label_fixed")
    assert [values.dictionary[c] for c in values.codes[:3]] == ["dog", "cat", ""]
    service.undo(".", "enc:00000", author="ann")
    values = service.values(".", "enc:00000", "label_fixed")
    assert [values.dictionary[c] for c in values.codes[:3]] == ["cat", "cat", ""]


def test_csv_and_parquet_import_into_a_new_column_of_the_kind_asked(service):
    body = "id,verdict\n" + "".join(f"{i},{'yes' if i % 3 == 0 else 'no'}\n" for i in range(N))
    service.import_column(".", "enc:00000", "verdict", body.encode(), "v.csv", kind="flag")
    flags = service.values(".", "enc:00000", "verdict")
    assert flags.column.kind == "flag"
    assert np.array_equal(flags.codes != 0, np.arange(N) % 3 == 0)
    parquet = exported(service, "parquet")
    service.import_column(".", "enc:00000", "label_fixed", parquet, "x.parquet")
    assert service.history(".", "enc:00000", limit=1)[0].action == "import"
    with pytest.raises(DataError, match=r"x\.parquet: has no column 'copy'"):
        service.import_column(".", "enc:00000", "copy", parquet, "x.parquet")


def test_a_bad_row_is_refused_naming_its_line(service):
    bad = "id,verdict\n0,yes\n1\n" + "".join(f"{i},no\n" for i in range(2, N))
    with pytest.raises(DataError, match=r"v\.csv line 3: has a row of another number of cells"):
        service.import_column(".", "enc:00000", "verdict", bad.encode(), "v.csv", kind="flag")
    maybe = "id,verdict\n" + "".join(f"{i},{'maybe' if i == 4 else 'no'}\n" for i in range(N))
    with pytest.raises(DataError, match=r"v\.csv line 6: 'verdict' is a flag"):
        service.import_column(".", "enc:00000", "verdict", maybe.encode(), "v.csv", kind="flag")
    short = "name\tlabel_fixed\n" + "".join(f"p{i}\tx\n" for i in range(N - 1))
    with pytest.raises(DataError, match=f"{N - 1} data rows but the tensor has {N} points"):
        service.import_column(".", "enc:00000", "label_fixed", short.encode(), "s.tsv")
    with pytest.raises(ValueError, match="say its format"):
        service.import_column(".", "enc:00000", "label_fixed", b"", "noname")
    assert [e.action for e in service.history(".", "enc:00000")] == ["set", "set", "set"]
