"""Plain array inputs (.npy, .npz, .parquet, folders), written by numpy and pyarrow themselves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from projector_core.errors import DataError
from projector_core.formats.arrays import plain_array_files, read_plain_array

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

RNG = np.random.default_rng(0)
VECTORS = RNG.standard_normal((5, 3)).astype(np.float32)


def test_npy_is_one_embedding_named_after_the_file(tmp_path: Path) -> None:
    path = tmp_path / "word vectors.npy"
    np.save(path, VECTORS)
    (found,) = read_plain_array(path)
    assert found.name == "word vectors"
    assert found.metadata_columns is None
    assert isinstance(found.vectors, np.memmap)  # opened at once, not read
    np.testing.assert_array_equal(found.vectors, VECTORS)


def test_npy_of_float64_becomes_float32(tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", VECTORS.astype(np.float64))
    (found,) = read_plain_array(tmp_path / "x.npy")
    assert found.vectors.dtype == np.float32
    np.testing.assert_array_equal(found.vectors, VECTORS)


def test_npy_of_python_objects_is_refused_without_unpickling(tmp_path: Path) -> None:
    path = tmp_path / "objects.npy"
    np.save(path, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="Python objects") as caught:
        read_plain_array(path)
    assert caught.value.file == str(path)


def test_npz_members_become_embeddings_with_their_labels(tmp_path: Path) -> None:
    path = tmp_path / "run.npz"
    other = RNG.standard_normal((4, 2))
    labels = np.array(["a", "b\tc", "d", "e", "f"])
    np.savez(
        path,
        words=VECTORS,
        other=other,
        label=labels,
        score=np.arange(5),
        one_hot=np.eye(5, dtype=np.int64),
    )
    found = {embedding.name: embedding for embedding in read_plain_array(path)}
    assert sorted(found) == ["run/other", "run/words"]
    words = found["run/words"]
    assert isinstance(words.vectors, np.memmap)
    np.testing.assert_array_equal(words.vectors, VECTORS)
    assert words.metadata_columns == {
        "label": ["a", "b c", "d", "e", "f"],  # a tab cannot live in a TSV cell
        "score": ["0", "1", "2", "3", "4"],
    }
    assert found["run/other"].vectors.dtype == np.float32
    assert found["run/other"].metadata_columns is None  # no 1-D member of length 4


def test_compressed_npz_is_read_too(tmp_path: Path) -> None:
    path = tmp_path / "small.npz"
    np.savez_compressed(path, vectors=VECTORS)
    (found,) = read_plain_array(path)
    np.testing.assert_array_equal(found.vectors, VECTORS)


def test_npz_object_members_are_skipped_never_unpickled(tmp_path: Path) -> None:
    path = tmp_path / "mixed.npz"
    np.savez(path, vectors=VECTORS, names=np.array(list("abcde"), dtype=object))
    (found,) = read_plain_array(path)
    assert found.metadata_columns is None
    only_objects = tmp_path / "objects.npz"
    np.savez(only_objects, names=np.array(list("abcde"), dtype=object))
    with pytest.raises(DataError, match=r"no 2-D float array.*unpickling"):
        read_plain_array(only_objects)


def test_broken_npz_is_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.npz"
    np.savez(path, vectors=VECTORS)
    path.write_bytes(path.read_bytes()[:-200])
    with pytest.raises(DataError, match="npz") as caught:
        read_plain_array(path)
    assert caught.value.file == str(path)


def write_parquet(path: Path, **columns) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


def test_parquet_vector_column_and_metadata(tmp_path: Path) -> None:
    path = write_parquet(
        tmp_path / "table.parquet",
        emb=pa.array(VECTORS.tolist(), type=pa.list_(pa.float32())),
        word=["apple", "pear", None, "fig", "kiwi"],
        count=[1, 2, 3, 4, 5],
        tags=[["x"], [], ["y"], [], []],
    )
    (found,) = read_plain_array(path, vector_column="emb")
    assert found.name == "table"
    np.testing.assert_array_equal(found.vectors, VECTORS)
    assert found.metadata_columns == {
        "word": ["apple", "pear", "", "fig", "kiwi"],
        "count": ["1", "2", "3", "4", "5"],
    }
    (guessed,) = read_plain_array(path)  # the only list-of-numbers column
    np.testing.assert_array_equal(guessed.vectors, VECTORS)


def test_parquet_fixed_size_lists_of_doubles(tmp_path: Path) -> None:
    values = pa.array(VECTORS.astype(np.float64).ravel())
    path = write_parquet(
        tmp_path / "fixed.parquet", emb=pa.FixedSizeListArray.from_arrays(values, 3)
    )
    (found,) = read_plain_array(path, "emb")
    assert found.vectors.dtype == np.float32 and found.vectors.shape == (5, 3)
    np.testing.assert_array_equal(found.vectors, VECTORS)
    assert found.metadata_columns is None


def test_parquet_errors_name_the_file_and_column(tmp_path: Path) -> None:
    two = write_parquet(tmp_path / "two.parquet", a=[[1.0], [2.0]], b=[[1.0], [2.0]])
    with pytest.raises(DataError, match=r"--vector-column.*a, b"):
        read_plain_array(two)
    with pytest.raises(DataError, match="no column 'c'"):
        read_plain_array(two, "c")
    ragged = write_parquet(tmp_path / "ragged.parquet", emb=[[1.0, 2.0], [1.0, 2.0], [3.0]])
    with pytest.raises(DataError, match="row 2 has 1") as caught:
        read_plain_array(ragged, "emb")
    assert caught.value.file == str(ragged) and caught.value.field == "emb"
    null = write_parquet(tmp_path / "null.parquet", emb=[[1.0], None])
    with pytest.raises(DataError, match="row 1 has no vector"):
        read_plain_array(null, "emb")
    text = write_parquet(tmp_path / "text.parquet", emb=["a", "b"])
    with pytest.raises(DataError, match="not a list of numbers"):
        read_plain_array(text, "emb")


def test_folder_of_plain_files(tmp_path: Path) -> None:
    np.save(tmp_path / "b.npy", VECTORS)
    np.savez(tmp_path / "a.npz", first=VECTORS)
    write_parquet(tmp_path / "c.parquet", emb=VECTORS.tolist())
    (tmp_path / "notes.txt").write_text("not an array")
    assert [p.name for p in plain_array_files(tmp_path)] == ["a.npz", "b.npy", "c.parquet"]
    assert [e.name for e in read_plain_array(tmp_path)] == ["a/first", "b", "c"]


def test_other_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "vectors.csv"
    path.write_text("1,2\n")
    with pytest.raises(DataError, match=r"not a \.npy"):
        read_plain_array(path)
    with pytest.raises(DataError, match=r"no \.npy"):
        read_plain_array(tmp_path)
