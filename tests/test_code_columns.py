"""Categorical columns stored beside a chunked embedding: found, read by rows, errors named."""

from __future__ import annotations

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

from projector_core.errors import DataError  # noqa: E402
from projector_core.formats.chunked import open_chunked  # noqa: E402
from projector_core.formats.chunked_writer import write_npy_shards, write_zarr  # noqa: E402
from projector_core.formats.code_columns import (  # noqa: E402
    code_columns,
    columns_folder,
    write_code_column,
)

N = 1000


def test_a_column_written_in_blocks_beside_a_zarr_is_found_with_its_dictionary(tmp_path):
    write_zarr(tmp_path / "v.zarr", np.ones((N, 4), np.float32))
    codes = np.arange(N, dtype=np.int32) % 3
    blocks = (codes[start:start + 300] for start in range(0, N, 300))
    path = write_code_column(tmp_path / "v.zarr", "label", blocks, ["a", "b", "c"], N,
                             chunk_rows=256)
    assert path == tmp_path / "v.columns" / "label"
    found = code_columns(open_chunked(tmp_path / "v.zarr", "v.zarr"))
    assert found == {"label": (str(path), ["a", "b", "c"])}
    assert np.array_equal(zarr.open_array(store=str(path), mode="r")[:], codes)
    assert code_columns(open_chunked(tmp_path / "v.zarr", "v.zarr")) == found  # stable


def test_npy_shards_have_their_folder_beside_too_and_none_is_no_column(tmp_path):
    write_npy_shards(tmp_path / "shards", np.ones((N, 4), np.float32), chunk_rows=400)
    vectors = open_chunked(tmp_path / "shards", "shards")
    assert code_columns(vectors) == {}
    assert columns_folder(tmp_path / "shards") == tmp_path / "shards.columns"
    write_code_column(tmp_path / "shards", "kind", np.zeros(N, np.int32), ["only"], N)
    assert list(code_columns(vectors)) == ["kind"]


def test_a_column_of_the_wrong_length_or_without_categories_is_an_error_naming_it(tmp_path):
    write_zarr(tmp_path / "v.zarr", np.ones((N, 4), np.float32))
    vectors = open_chunked(tmp_path / "v.zarr", "v.zarr")
    with pytest.raises(ValueError, match="3 codes written for 5 rows"):
        write_code_column(tmp_path / "v.zarr", "short", np.zeros(3, np.int32), ["x"], 5)
    with pytest.raises(DataError, match=r"short.*1000 integer codes"):
        code_columns(vectors)
    (tmp_path / "v.columns" / "short").rename(tmp_path / "elsewhere")
    bare = zarr.create_array(store=str(tmp_path / "v.columns" / "bare"), shape=(N,), dtype="<i4")
    bare[:] = 0
    with pytest.raises(DataError, match=r"bare.*dictionary"):
        code_columns(vectors)
