"""The store under faults, each in real processes: killed in the middle of a bulk edit,
eight writers at once, a damaged file, a file locked by another program, a full disk."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from projector_core.annotations import (
    AnnotationService,
    AnnotationStore,
    Key,
    StoreBusy,
    StoreUnavailable,
)
from projector_core.annotations.rowsets import RowSet

ROOT = Path(__file__).resolve().parent.parent
KEY = Key("/logdir", "run", "tag")
BIG = 1_000_000


def child(code: str, *args: str, **options) -> subprocess.Popen:
    """A Python process running ``code`` (the store opened as ``store`` from argv[1])."""
    prelude = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        import numpy as np
        from pathlib import Path
        from projector_core.annotations import AnnotationStore, Key
        from projector_core.annotations.rowsets import RowSet
        KEY = Key("/logdir", "run", "tag")
        store = AnnotationStore(Path(sys.argv[1]))
    """)
    return subprocess.Popen([sys.executable, "-c", prelude + textwrap.dedent(code), *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **options)


def test_a_process_killed_during_a_million_row_edit_leaves_all_of_it_or_none(tmp_path):
    path = tmp_path / "a.sqlite"
    writer = child("""
        every = RowSet.every(1_000_000)
        for i in range(1_000):
            print("begin", i, flush=True)
            store.set_value(KEY, "label", f"v{i}", every, "writer")
    """, str(path))
    assert writer.stdout is not None
    wal = Path(f"{path}-wal")
    for line in writer.stdout:
        if line.strip() == "begin 2":  # two edits committed, the third under way
            # killed once the third writes to the log: a 4 MB edit spills its pages there
            # before its commit record
            written = wal.stat().st_mtime_ns
            while wal.stat().st_mtime_ns == written and writer.poll() is None:
                pass
            os.kill(writer.pid, signal.SIGKILL)
            break
    assert writer.wait() == -signal.SIGKILL
    store = AnnotationStore(path)
    _, dictionary, codes = store.values(KEY, "label")
    history = store.history(KEY)
    assert len(history) in (2, 3)  # the third edit whole, or not at all
    assert np.unique(codes).size == 1 and dictionary[codes[0]] == history[0].value
    store.set_value(KEY, "label", "after", RowSet.of([0], BIG), "me")  # no lock left behind


WRITERS, EDITS = 8, 500


@pytest.mark.slow
def test_eight_writers_at_once_every_edit_is_in_the_history_and_the_column(tmp_path):
    path = tmp_path / "a.sqlite"
    AnnotationStore(path).close()  # made once, as a server at start
    writers = [child("""
        me, rng = sys.argv[2], np.random.default_rng(int(sys.argv[2]))
        sys.stdin.readline()  # all start together
        for i in range(500):
            store.set_value(KEY, "label", f"{me}-{i}", RowSet.of(rng.integers(0, 1000, 20), 1000),
                            f"writer{me}")
        print("done", flush=True)
    """, str(path), str(w)) for w in range(WRITERS)]
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.flush()
    for writer in writers:
        _, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err
    store = AnnotationStore(path)
    history = store.history(KEY, limit=WRITERS * EDITS + 1)
    assert len(history) == WRITERS * EDITS
    assert sorted((e.author, e.value) for e in history) == sorted(
        (f"writer{w}", f"{w}-{i}") for w in range(WRITERS) for i in range(EDITS))
    _, _, now = store.values(KEY, "label")
    _, _, replayed = store.values(KEY, "label", as_of=history[0].id)
    assert np.array_equal(now, replayed)  # the kept column is the edits applied in order


def test_a_damaged_or_foreign_file_is_an_error_at_open_naming_it_and_the_data_is_served(
        tmp_path):
    foreign = tmp_path / "notes.sqlite"
    foreign.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(StoreUnavailable, match=f"{foreign}: is damaged or not an annotation"):
        AnnotationStore(foreign)
    assert foreign.read_bytes().startswith(b"these are my notes")  # left as it was

    damaged = tmp_path / "damaged.sqlite"
    store = AnnotationStore(damaged)
    for i in range(20):
        store.set_value(KEY, "label", f"v{i}", RowSet.of(np.arange(i, 100_000, 7), 100_000), "me")
    store.close()
    with damaged.open("r+b") as handle:
        handle.seek(3 * 4096)
        handle.write(np.random.default_rng(0).bytes(4096))
    with pytest.raises(StoreUnavailable, match=f"{damaged}: is damaged"):
        AnnotationStore(damaged)

    service = AnnotationService.open(damaged, tmp_path, lambda run, name: None)  # type: ignore
    assert service.status()["enabled"] is False
    assert str(damaged) in service.off_reason and "served read-only" in service.off_reason


def test_a_store_locked_by_another_program_is_an_error_at_open_and_a_busy_write_is_refused(
        tmp_path):
    path = tmp_path / "a.sqlite"
    AnnotationStore(path).close()
    holder = child("""
        import sqlite3
        other = sqlite3.connect(sys.argv[1], isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        print("held", flush=True)
        sys.stdin.readline()
        other.execute("ROLLBACK")
        print("released", flush=True)
        sys.stdin.readline()
    """, str(path))
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreUnavailable, match=f"{path}: is locked by another program"):
            AnnotationStore(path, timeout=0.2)
        holder.stdin.write("release\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        store = AnnotationStore(path, timeout=0.2)
        store.set_value(KEY, "label", "cat", RowSet.of([1], 10), "me")
    finally:
        holder.kill()
        holder.wait()
    other = child("""
        import sqlite3
        other = sqlite3.connect(sys.argv[1], isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        print("held", flush=True)
        sys.stdin.readline()
    """, str(path))
    assert other.stdout is not None
    try:
        assert other.stdout.readline().strip() == "held"
        with pytest.raises(StoreBusy, match="nothing was written"):
            store.set_value(KEY, "label", "dog", RowSet.of([2], 10), "me")
    finally:
        other.kill()
        other.wait()
    assert [e.value for e in store.history(KEY)] == ["cat"]


def test_a_full_disk_refuses_the_edit_whole_and_the_store_goes_on(tmp_path):
    path = tmp_path / "a.sqlite"
    store = AnnotationStore(path)
    store.set_value(KEY, "label", "before", RowSet.of([1, 2], BIG), "me")
    filler = child("""
        import os, resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead
        wal = Path(sys.argv[1] + "-wal")
        room = max(os.path.getsize(sys.argv[1]), wal.stat().st_size if wal.exists() else 0)
        resource.setrlimit(resource.RLIMIT_FSIZE, (room + 65536, resource.RLIM_INFINITY))
        from projector_core.annotations import StoreWriteFailed
        try:
            store.set_value(KEY, "label", "full", RowSet.every(1_000_000), "filler")
        except StoreWriteFailed as error:
            print(error)
    """, str(path))
    out, err = filler.communicate(timeout=120)
    assert filler.returncode == 0, err
    assert f"annotation store {path}: the disk refused the write" in out
    assert "nothing of it was written" in out
    _, dictionary, codes = store.values(KEY, "label")
    assert [e.value for e in store.history(KEY)] == ["before"]
    assert dictionary == ["", "before"] and np.flatnonzero(codes).tolist() == [1, 2]
    store.set_value(KEY, "label", "after", RowSet.of([3], BIG), "me")


def test_sqlites_own_disk_full_error_is_a_refused_write_naming_the_store(tmp_path):
    """SQLITE_FULL itself (a page limit reached), as a disk without room raises it."""
    import sqlite3

    from projector_core.annotations import StoreWriteFailed
    from projector_core.annotations.database import translate

    small = sqlite3.connect(tmp_path / "small.sqlite")
    small.execute("CREATE TABLE t (x BLOB)")
    small.execute("PRAGMA max_page_count = 4")
    with pytest.raises(sqlite3.OperationalError) as raised:
        small.execute("INSERT INTO t VALUES (?)", (bytes(64 * 1024),))
    refused = translate(raised.value, tmp_path / "store.sqlite")
    assert isinstance(refused, StoreWriteFailed)
    assert f"{tmp_path / 'store.sqlite'}: the disk refused the write (database or disk is full)" \
        in str(refused)
