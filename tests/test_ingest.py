"""Tensor files into the cache: exact float32 values, every .npy layout, and no cache at all."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from projector_core.data.ingest import ingest
from projector_core.formats import tensor_files
from projector_core.formats.tensor_files import read_tsv
from projector_core.storage.tensor_cache import TensorCache


def test_tsv_values_are_the_float32_of_each_decimal_as_before(tmp_path):
    """Writers print float32 values as Python floats (tensorboardX, PyTorch): read back to the
    bit. Any other decimal is read as a double and rounded to float32, as numpy.loadtxt did."""
    rng = np.random.default_rng(0)
    written = (rng.normal(size=(200, 9)) * 10.0 ** rng.integers(-30, 30, (200, 9))).astype(np.float32)
    path = tmp_path / "t.tsv"
    path.write_text("".join("\t".join(str(v.item()) for v in row) + "\n" for row in written))
    assert read_tsv(path, "t.tsv").tobytes() == written.tobytes()

    doubles = rng.normal(size=(100, 5)) * 10.0 ** rng.integers(-40, 40, (100, 5))
    lines = ["\t".join(f"{v:.17g}" for v in row) for row in doubles]
    path.write_text("\n".join(lines) + "\n")
    with np.errstate(over="ignore"):  # beyond float32's range: inf
        expected = np.array([[np.float32(float(cell)) for cell in line.split("\t")]
                             for line in lines])
    assert read_tsv(path, "t.tsv").tobytes() == expected.tobytes()


@pytest.mark.parametrize(("text", "fast"), [
    (" 1\t+2.5\t-.5\n1e400\t-1e-400\tnan\n-inf\tInfinity\t3.\nNaN\tINF\t-nan\n", True),
    ("1\t2\t3\r\n4\t5\t6\r\n", True),
    ("1\t2\t3\n\n4\t5\t6\n", False),  # polars reads a blank line as a row of nulls
    ("1 \t2\t3\n4\t5\t6 \n", False),  # polars refuses trailing spaces
])
def test_tsv_blocks_polars_refuses_are_parsed_exactly_to_the_same_bytes(text, fast):
    """Clean blocks go to polars, the others to the exact path: the same float32 bytes."""
    data = text.encode()
    exact = tensor_files._parse_chunk_exactly(data, 1, 3, "t.tsv")
    by_polars = tensor_files._parse_clean_chunk(data, 3)
    assert (by_polars is not None) == fast
    assert tensor_files._parse_chunk(data, 1, 3, "t.tsv").tobytes() == exact.tobytes()
    if fast:
        assert by_polars.tobytes() == exact.tobytes()


@pytest.mark.parametrize("layout", ["float64", "fortran", "one-column", "int16"])
def test_every_npy_layout_becomes_float32_rows(tmp_path, layout):
    matrix = np.random.default_rng(1).normal(size=(500, 3)) * 100
    array = {"float64": matrix, "fortran": np.asfortranarray(matrix.astype(np.float32)),
             "one-column": matrix[:, 0], "int16": matrix.astype(np.int16)}[layout]
    np.save(tmp_path / "t.npy", array)
    cache = TensorCache(tmp_path / "cache")
    vectors = ingest(cache, "key", tmp_path / "t.npy", "t.npy", "npy", (), None)
    expected = np.asarray(array, np.float32).reshape(500, -1)
    assert vectors.dtype == np.dtype("<f4") and vectors.flags.c_contiguous
    np.testing.assert_array_equal(vectors, expected)
    np.testing.assert_array_equal(cache.load("key"), expected)


def test_binary_files_are_copied_into_the_cache_not_mapped(tmp_path):
    raw = np.random.default_rng(2).normal(size=(64, 4)).astype(np.float32)
    (tmp_path / "t.bytes").write_bytes(raw.tobytes())
    np.save(tmp_path / "t.npy", raw)
    cache = TensorCache(tmp_path / "cache")
    for kind, name in (("bytes", "t.bytes"), ("npy", "t.npy")):
        progress: list[tuple[int, int]] = []
        vectors = ingest(cache, kind, tmp_path / name, name, kind, (64, 4),
                         lambda done, total, seen=progress: seen.append((done, total)))
        assert Path(vectors.filename).parent == tmp_path / "cache" / "tensors"
        assert vectors.tobytes() == raw.tobytes()
        assert progress and progress[-1][0] == progress[-1][1]


def test_without_a_usable_cache_tensors_are_read_into_memory(tmp_path, monkeypatch):
    raw = np.random.default_rng(3).normal(size=(300, 5)).astype(np.float32)
    (tmp_path / "t.bytes").write_bytes(raw.tobytes())
    np.save(tmp_path / "t.npy", raw)
    (tmp_path / "t.tsv").write_text("".join("\t".join(map(str, r.tolist())) + "\n" for r in raw))
    monkeypatch.setattr(tensor_files, "CHUNK_BYTES", 2048)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    cache = TensorCache(blocked)
    for kind in ("bytes", "npy", "tsv"):
        vectors = ingest(cache, kind, tmp_path / f"t.{kind}", f"t.{kind}", kind, (300, 5), None)
        assert not isinstance(vectors, np.memmap)
        assert vectors.tobytes() == raw.tobytes()


@pytest.mark.parametrize(("text", "message"), [
    ("1\t2\t3\n4\t\t6\n", "t.tsv line 2: column 2: '' is not a number"),
    ("1\t2\r\n\r\n3\t4\t\r\n", "t.tsv line 3: column 3: '' is not a number (the line ends "
                              "with a tab: a tensor TSV has none after its last value)"),
    ("1\t2\n  \n", "t.tsv line 2: column 1: '  ' is not a number"),
    ("1\t2\n3\n", "t.tsv line 2: has 1 values, expected 2 like the first row"),
    ("1\t2\n3\r4\n", "t.tsv line 2: column 1: '3\\r4' is not a number"),
])
def test_tsv_cells_that_are_not_numbers_name_line_and_cell(tmp_path, text, message):
    from projector_core.errors import DataError

    path = tmp_path / "t.tsv"
    path.write_bytes(text.encode())
    with pytest.raises(DataError) as error:
        read_tsv(path, "t.tsv")
    assert str(error.value) == message


def test_a_tensor_replaced_keeping_its_size_and_time_is_read_again(tmp_path):
    """The cache is keyed by a stat (never by reading the file): the inode tells a file put in
    place by a copy that keeps the modification time (cp -p, rsync -t)."""
    from projector_core.data.catalog import Catalog

    logdir = tmp_path / "logs"
    logdir.mkdir()
    (logdir / "projector_config.pbtxt").write_text('embeddings { tensor_name: "t" tensor_path: "t.tsv" }')
    tsv = logdir / "t.tsv"
    tsv.write_text("1\t2\n")
    first = Catalog(logdir, cache_dir=tmp_path / "cache")
    first.refresh()
    assert first.embedding(".", "t").vectors().tolist() == [[1, 2]]
    stat = tsv.stat()
    replacement = tmp_path / "new.tsv"
    replacement.write_text("3\t4\n")
    os.utime(replacement, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(replacement, tsv)
    assert (tsv.stat().st_size, tsv.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    second = Catalog(logdir, cache_dir=tmp_path / "cache")
    second.refresh()
    assert second.embedding(".", "t").vectors().tolist() == [[3, 4]]
