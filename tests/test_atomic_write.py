"""The one way files and folders are written for others to read: whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from projector_core.storage.atomic_write import PendingFile, atomic_file, atomic_folder, write_atomic


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "metadata.tsv"
    write_atomic(target, b"old\n")
    with pytest.raises(RuntimeError), atomic_file(target) as handle:
        handle.write(b"half of the new")
        raise RuntimeError("the writer failed")
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metadata.tsv"]
    write_atomic(target, iter([b"new ", b"chunks\n"]))
    assert target.read_bytes() == b"new chunks\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metadata.tsv"]


def test_pending_files_for_one_target_never_share_a_name(tmp_path: Path) -> None:
    target = tmp_path / "entry.npy"
    with PendingFile(target) as first, PendingFile(target) as second:
        assert first.path != second.path and first.path.name.startswith(".entry.npy.")
        first.path.write_bytes(b"1")
        first.commit()
    assert target.read_bytes() == b"1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.npy"]  # the uncommitted one went


def test_a_folder_replaces_the_old_one_only_when_complete(tmp_path: Path) -> None:
    target = tmp_path / "shards"
    with atomic_folder(target) as folder:
        (folder / "part-00000.npy").write_bytes(b"a")
    with pytest.raises(ValueError), atomic_folder(target) as folder:
        (folder / "part-00000.npy").write_bytes(b"b")
        raise ValueError("no rows to write")
    assert [p.read_bytes() for p in target.iterdir()] == [b"a"]
    with atomic_folder(target) as folder:
        (folder / "part-00001.npy").write_bytes(b"c")
    assert [p.name for p in target.iterdir()] == ["part-00001.npy"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shards"]
