"""TF checkpoints read without TensorFlow, against files real TensorFlow wrote.

The checkpoints and the values TensorFlow read back from them come from
tests/fixtures/make_tf_checkpoints.py (tensorflow-cpu 2.21, run once, output committed).
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import google_crc32c
import numpy as np
import pytest

from projector_core.errors import DataError
from projector_core.formats.tf_checkpoint import (
    embedding_variables,
    find_checkpoint,
    is_optimizer_state,
    list_variables,
    read_variable,
)

FIXTURES = Path(__file__).parent / "fixtures" / "tf_checkpoints"
RUNS = ["tf1", "tf2", "sharded"]
TF2_EMBEDDING = "embedding/.ATTRIBUTES/VARIABLE_VALUE"


def expected_arrays(run: str) -> dict[str, np.ndarray]:
    with np.load(FIXTURES / "expected" / f"{run}.npz", allow_pickle=False) as arrays:
        return {key: arrays[key] for key in arrays.files}


@pytest.fixture
def tf2_copy(tmp_path: Path) -> Path:
    """A writable copy of the TF2 tutorial checkpoint."""
    return Path(shutil.copytree(FIXTURES / "tf2", tmp_path / "tf2"))


def test_checkpoint_named_by_the_state_file_is_found() -> None:
    assert find_checkpoint(FIXTURES / "tf2") == FIXTURES / "tf2" / "embedding.ckpt-1"
    assert find_checkpoint(FIXTURES / "sharded") == FIXTURES / "sharded" / "sharded-1"


def test_absolute_path_from_another_machine_falls_back_to_the_file_name() -> None:
    # TF1's Saver wrote the absolute path of the folder the fixture was generated in.
    state = (FIXTURES / "tf1" / "checkpoint").read_text()
    assert 'model_checkpoint_path: "/tmp/' in state
    assert find_checkpoint(FIXTURES / "tf1") == FIXTURES / "tf1" / "model.ckpt-1"


def test_without_state_file_the_newest_checkpoint_is_used(tf2_copy: Path) -> None:
    (tf2_copy / "checkpoint").unlink()
    assert find_checkpoint(tf2_copy) == tf2_copy / "embedding.ckpt-1"


def test_folder_without_checkpoint_gives_none(tmp_path: Path) -> None:
    (tmp_path / "notes.index").write_text("not a checkpoint, and no data shard beside it")
    assert find_checkpoint(tmp_path) is None


def test_config_path_is_resolved_inside_the_folder(tf2_copy: Path) -> None:
    assert find_checkpoint(tf2_copy, "embedding.ckpt-1") == tf2_copy / "embedding.ckpt-1"
    assert find_checkpoint(tf2_copy.parent, "tf2") == tf2_copy / "embedding.ckpt-1"


def test_config_path_outside_the_folder_is_refused(tmp_path: Path, tf2_copy: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    for path in ["../tf2/embedding.ckpt-1", str(tf2_copy / "embedding.ckpt-1")]:
        with pytest.raises(DataError) as caught:
            find_checkpoint(run, path)
        assert caught.value.field == "model_checkpoint_path"
    (run / "link").symlink_to(tf2_copy)
    with pytest.raises(DataError):
        find_checkpoint(run, "link/embedding.ckpt-1")


@pytest.mark.parametrize("run", RUNS)
def test_variables_are_listed_as_tensorflow_lists_them(run: str) -> None:
    listing = json.loads((FIXTURES / "expected" / f"{run}.json").read_text())
    expected = {name: (dtype, tuple(shape)) for name, (dtype, shape) in listing.items()}
    assert list_variables(find_checkpoint(FIXTURES / run)) == expected


@pytest.mark.parametrize("run", RUNS)
def test_values_equal_what_tensorflow_reads(run: str) -> None:
    prefix = find_checkpoint(FIXTURES / run)
    for name, expected in expected_arrays(run).items():
        values = read_variable(prefix, name)
        assert values.dtype == np.float32 and values.flags.c_contiguous
        np.testing.assert_array_equal(values, expected, err_msg=name)


def test_embeddings_skip_optimizer_slots_and_non_float_variables() -> None:
    assert embedding_variables(find_checkpoint(FIXTURES / "tf2")) == {
        TF2_EMBEDDING: (6, 4),
        "other/.ATTRIBUTES/VARIABLE_VALUE": (5, 3),
    }
    assert embedding_variables(find_checkpoint(FIXTURES / "tf1")) == {
        "embedding": (6, 5),
        "dense/kernel": (5, 2),
        "partitioned": (7, 3),  # a TF1 partitioned variable, assembled from its slices
        "words_f64": (3, 2),
        "words_f16": (4, 2),
        "words_bf16": (2, 3),
    }


@pytest.mark.parametrize(
    ("name", "slot"),
    [
        ("embedding/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE", True),
        ("optimizer/_variables/2/.ATTRIBUTES/VARIABLE_VALUE", True),
        ("model/legacy_optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE", True),
        ("embedding/Adam_1", True),
        ("layer/kernel/Momentum", True),
        ("embedding/.ATTRIBUTES/VARIABLE_VALUE", False),
        ("optimizer_embedding/.ATTRIBUTES/VARIABLE_VALUE", False),
        ("Adam", False),
        ("dense/kernel", False),
    ],
)
def test_optimizer_state_names(name: str, slot: bool) -> None:
    assert is_optimizer_state(name) is slot


def shard_of(folder: Path) -> Path:
    (shard,) = folder.glob("*.data-*")
    return shard


def test_a_corrupted_byte_is_a_checksum_error_naming_file_and_tensor(tf2_copy: Path) -> None:
    prefix = find_checkpoint(tf2_copy)
    shard = shard_of(tf2_copy)
    data = bytearray(shard.read_bytes())
    start = bytes(data).find(expected_arrays("tf2")[TF2_EMBEDDING].tobytes())
    assert start >= 0
    data[start + 5] ^= 0x01
    shard.write_bytes(bytes(data))
    with pytest.raises(DataError, match="checksum") as caught:
        read_variable(prefix, TF2_EMBEDDING)
    assert caught.value.file == str(shard)
    assert caught.value.field == TF2_EMBEDDING
    assert shard.name in str(caught.value) and TF2_EMBEDDING in str(caught.value)
    read_variable(prefix, "other/.ATTRIBUTES/VARIABLE_VALUE")  # the other tensors are intact


def test_a_truncated_shard_is_a_clear_error(tf2_copy: Path) -> None:
    prefix = find_checkpoint(tf2_copy)
    shard = shard_of(tf2_copy)
    shard.write_bytes(shard.read_bytes()[:100])
    with pytest.raises(DataError, match="truncated") as caught:
        read_variable(prefix, TF2_EMBEDDING)
    assert caught.value.file == str(shard)


def test_a_missing_shard_is_a_clear_error(tf2_copy: Path) -> None:
    prefix = find_checkpoint(tf2_copy)
    shard_of(tf2_copy).unlink()
    with pytest.raises(DataError, match="missing"):
        read_variable(prefix, TF2_EMBEDDING)


def test_a_corrupted_index_block_is_a_checksum_error(tf2_copy: Path) -> None:
    index = tf2_copy / "embedding.ckpt-1.index"
    data = bytearray(index.read_bytes())
    data[10] ^= 0x01  # inside the first data block
    index.write_bytes(bytes(data))
    with pytest.raises(DataError, match="checksum mismatch in the index block") as caught:
        list_variables(tf2_copy / "embedding.ckpt-1")
    assert caught.value.file == str(index)


def test_a_file_that_is_no_index_is_named(tf2_copy: Path) -> None:
    index = tf2_copy / "embedding.ckpt-1.index"
    index.write_bytes(b"x" * 100)
    with pytest.raises(DataError, match="bad magic number"):
        list_variables(tf2_copy / "embedding.ckpt-1")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        value |= (data[pos] & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if data[pos - 1] < 0x80:
            return value, pos


def test_a_snappy_compressed_index_block_is_reported(tf2_copy: Path) -> None:
    # TensorFlow never compresses the index; mark its block index as snappy, checksum intact.
    index = tf2_copy / "embedding.ckpt-1.index"
    data = bytearray(index.read_bytes())
    footer = bytes(data[-48:])
    pos = _varint(footer, _varint(footer, 0)[1])[1]
    offset, pos = _varint(footer, pos)
    size, _ = _varint(footer, pos)
    data[offset + size] = 1
    crc = google_crc32c.value(bytes(data[offset : offset + size + 1]))
    masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    data[offset + size + 1 : offset + size + 5] = struct.pack("<I", masked)
    index.write_bytes(bytes(data))
    with pytest.raises(DataError, match="snappy"):
        list_variables(tf2_copy / "embedding.ckpt-1")


def test_non_float_and_unknown_variables_are_refused() -> None:
    prefix = find_checkpoint(FIXTURES / "tf1")
    with pytest.raises(DataError, match="int32") as caught:
        read_variable(prefix, "counts")
    assert caught.value.field == "counts"
    with pytest.raises(DataError, match="no such variable"):
        read_variable(prefix, "nothing")


def test_a_rewritten_index_is_read_again(tf2_copy: Path) -> None:
    prefix = tf2_copy / "embedding.ckpt-1"
    assert TF2_EMBEDDING in list_variables(prefix)
    for source in (FIXTURES / "sharded").glob("sharded-1.*"):
        shutil.copy(source, tf2_copy / source.name.replace("sharded-1", "embedding.ckpt-1"))
    assert TF2_EMBEDDING not in list_variables(prefix)
