"""The annotation service's rules: keys, kinds, names, history, undo/redo, bookmarks, events."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest

from projector_core.annotations import (
    RULE,
    AnnotationService,
    AnnotationsOff,
    Change,
    UnknownColumn,
)
from projector_core.data.catalog import Catalog
from projector_core.formats.writer import add_embedding

N = 40


def write_run(logdir: Path, n: int = N, steps: tuple[int, ...] = (0, 10), tag: str = "enc",
              header: bool = True) -> None:
    """Our writer (PyTorch's add_embedding, same names): one tag at several steps."""
    for step in steps:
        metadata = ([[f"p{i}", "odd" if i % 2 else "even"] for i in range(n)] if header
                    else [f"p{i}" for i in range(n)])
        add_embedding(logdir, np.random.default_rng(step).random((n, 3)), metadata=metadata,
                      metadata_header=["name", "parity"] if header else None, global_step=step,
                      tag=tag)


def open_service(logdir: Path, store: Path) -> AnnotationService:
    catalog = Catalog(logdir, cache_dir=store.parent / "cache")
    catalog.refresh()
    return AnnotationService.open(store, catalog.logdir, catalog.embedding)


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    write_run(tmp_path / "logdir")
    return tmp_path / "logdir"


@pytest.fixture
def service(logdir: Path, tmp_path: Path) -> AnnotationService:
    return open_service(logdir, tmp_path / "store" / "annotations.sqlite")


def codes_as_text(service: AnnotationService, embedding: str, column: str,
                  as_of: int | None = None) -> list[str]:
    found = service.values(".", embedding, column, as_of)
    return [found.dictionary[c] for c in found.codes.tolist()]


def test_labels_are_kept_outside_the_logdir_and_every_step_of_a_tag_shows_them(
        service, logdir, tmp_path):
    before = sorted(p.name for p in logdir.rglob("*"))
    done = service.annotate(".", "enc:00000", "label_fixed", "cat", [3, 1, 3], author="ann")
    assert (done.edit.rows, done.changed, done.code, done.values) == (2, 2, 1, 2)
    assert codes_as_text(service, "enc:00010", "label_fixed")[:4] == ["", "cat", "", "cat"]
    assert sorted(p.name for p in logdir.rglob("*")) == before  # the LOGDIR stays read-only
    assert (tmp_path / "store" / "annotations.sqlite").is_file()
    reopened = open_service(logdir, tmp_path / "store" / "annotations.sqlite")
    assert [c.name for c in reopened.columns(".", "enc:00010")] == ["label_fixed"]


def test_a_name_that_is_already_a_metadata_column_is_refused_naming_it(service):
    with pytest.raises(ValueError, match="'parity' is already a metadata column"):
        service.annotate(".", "enc:00000", "parity", "x", [0])
    with pytest.raises(ValueError, match="tab"):
        service.annotate(".", "enc:00000", "a\tb", "x", [0])
    assert service.columns(".", "enc:00000") == []


def test_data_without_metadata_refuses_the_index_column_name(tmp_path):
    add_embedding(tmp_path / "bare", np.ones((5, 2)), tag="v")
    bare = open_service(tmp_path / "bare", tmp_path / "a.sqlite")
    with pytest.raises(ValueError, match="'index' is already a metadata column"):
        bare.annotate(".", "v:00000", "index", "x", [0])


def test_kinds_hold_their_own_values_and_an_empty_value_clears(service):
    service.annotate(".", "enc:00000", "duplicate", True, [0, 1, 2])
    service.annotate(".", "enc:00000", "duplicate", False, [1])
    service.annotate(".", "enc:00000", "why", "two\tlines\nhere", [2], kind="note")
    kinds = {c.name: c.kind for c in service.columns(".", "enc:00000")}
    assert kinds == {"duplicate": "flag", "why": "note"}
    assert codes_as_text(service, "enc:00000", "duplicate")[:3] == ["true", "", "true"]
    assert codes_as_text(service, "enc:00000", "why")[2] == "two\tlines\nhere"
    with pytest.raises(ValueError, match="'duplicate' is a flag"):
        service.annotate(".", "enc:00000", "duplicate", "maybe", [0])
    with pytest.raises(ValueError, match="one line"):
        service.annotate(".", "enc:00000", "label_fixed", "a\nb", [0])
    with pytest.raises(ValueError, match="holds flags, not labels"):
        service.annotate(".", "enc:00000", "duplicate", "true", [0], kind="label")
    with pytest.raises(ValueError, match=f"row {N} is outside"):
        service.annotate(".", "enc:00000", "label_fixed", "x", [0, N])


def test_the_later_edit_of_a_cell_wins_and_the_earlier_stays_in_history(service):
    first = service.annotate(".", "enc:00000", "label", "cat", [0, 1], author="ann")
    second = service.annotate(".", "enc:00000", "label", "dog", [1, 2], author="bob")
    assert codes_as_text(service, "enc:00000", "label")[:3] == ["cat", "dog", "dog"]
    assert codes_as_text(service, "enc:00000", "label", as_of=first.edit.id)[:3] == [
        "cat", "cat", ""]
    history = service.history(".", "enc:00010")
    assert [(e.id, e.author, e.value, e.rows) for e in history] == [
        (second.edit.id, "bob", "dog", 2), (first.edit.id, "ann", "cat", 2)]
    assert service.rule == RULE and "later committed edit wins" in RULE


def test_undo_and_redo_act_on_the_callers_own_last_edit_and_others_later_edits_stay(service):
    service.annotate(".", "enc:00000", "label", "cat", [0, 1, 2], author="ann")
    service.annotate(".", "enc:00000", "label", "dog", [2, 3], author="bob")
    service.annotate(".", "enc:00000", "label", "owl", [0], author="ann")
    undone = service.undo(".", "enc:00010", author="ann")  # ann's owl
    assert (undone.edit.action, undone.changed) == ("undo", 1)
    service.undo(".", "enc:00000", author="ann")  # ann's cat: bob's later dog on row 2 stays
    assert codes_as_text(service, "enc:00000", "label")[:4] == ["", "", "dog", "dog"]
    redone = service.redo(".", "enc:00000", author="ann")  # the last undone first: cat
    assert (redone.edit.action, redone.edit.target) == ("redo", undone.edit.target - 2)
    assert codes_as_text(service, "enc:00000", "label")[:4] == ["cat", "cat", "dog", "dog"]
    service.redo(".", "enc:00000", author="ann")
    assert codes_as_text(service, "enc:00000", "label")[:4] == ["owl", "cat", "dog", "dog"]
    with pytest.raises(ValueError, match="no undone edit"):
        service.redo(".", "enc:00000", author="ann")
    with pytest.raises(ValueError, match="carl has no edit"):
        service.undo(".", "enc:00000", author="carl")
    assert [e.action for e in service.history(".", "enc:00000")] == [
        "redo", "redo", "undo", "undo", "set", "set", "set"]


def test_a_new_edit_ends_what_can_be_redone(service):
    service.annotate(".", "enc:00000", "label", "cat", [0], author="ann")
    service.undo(".", "enc:00000", author="ann")
    service.annotate(".", "enc:00000", "label", "dog", [5], author="ann")
    with pytest.raises(ValueError, match="no undone edit"):
        service.redo(".", "enc:00000", author="ann")
    service.annotate(".", "enc:00000", "label", "eel", [6], author="bob")
    service.undo(".", "enc:00000", author="bob")
    service.annotate(".", "enc:00000", "label", "fox", [7], author="ann")  # another's edit:
    assert service.redo(".", "enc:00000", author="bob").edit.author == "bob"  # bob's redo stays


def test_the_history_as_of_an_undo_shows_the_column_as_it_was_then(service):
    a = service.annotate(".", "enc:00000", "label", "cat", [0], author="ann")
    u = service.undo(".", "enc:00000", author="ann")
    r = service.redo(".", "enc:00000", author="ann")
    assert [codes_as_text(service, "enc:00000", "label", e)[0]
            for e in (a.edit.id, u.edit.id, r.edit.id)] == ["cat", "", "cat"]
    assert [e.undone for e in service.history(".", "enc:00000", column="label")][-1] is False
    older = service.history(".", "enc:00000", limit=1, before=r.edit.id)
    assert [e.id for e in older] == [u.edit.id]


def test_the_author_is_the_doors_name_else_local(service):
    assert service.annotate(".", "enc:00000", "label", "cat", [0]).edit.author == "local"
    assert service.annotate(".", "enc:00000", "label", "cat", [0], author=" ann ").edit.author == "ann"
    with pytest.raises(ValueError, match="printable name"):
        service.annotate(".", "enc:00000", "label", "cat", [0], author="a\nb")


def test_a_column_of_another_row_count_is_kept_not_shown_and_exported_alone(logdir, tmp_path):
    store = tmp_path / "a.sqlite"
    open_service(logdir, store).annotate(".", "enc:00000", "label", "cat", [1, 2])
    shutil.rmtree(logdir)  # the run written again, with more points
    write_run(logdir, n=N + 5)
    service = open_service(logdir, store)
    [column] = service.columns(".", "enc:00000")
    assert not column.shown and column.rows == N
    assert f"made for {N} rows" in column.reason and "export" in column.reason
    with pytest.raises(ValueError, match="kept but not shown"):
        service.annotate(".", "enc:00000", "label", "dog", [0])
    out = io.BytesIO()
    service.export(".", "enc:00000", "tsv", out, columns=["label"])
    lines = out.getvalue().decode().splitlines()
    assert lines[:4] == ["row\tlabel", "0\t", "1\tcat", "2\tcat"] and len(lines) == N + 1


def test_bookmarks_of_the_logdir_file_come_first_then_the_saved_ones(service):
    saved = service.save_bookmark(".", "enc:00000", {"label": "mine", "selectedPoints": [1]},
                                  author="ann")
    assert [b.state["label"] for b in service.bookmarks(".", "enc:00010")] == ["mine"]
    assert (saved.author, service.bookmarks(".", "enc:00000")[0].id) == ("ann", saved.id)
    with pytest.raises(ValueError, match="dataSetDimensions"):
        service.save_bookmark(".", "enc:00000", {"dataSetDimensions": [3, 3]})
    service.delete_bookmark(".", "enc:00000", saved.id)
    assert service.bookmarks(".", "enc:00000") == []
    with pytest.raises(LookupError, match=f"no saved bookmark {saved.id}"):
        service.delete_bookmark(".", "enc:00000", saved.id)


def test_subscribers_hear_each_committed_change_and_a_failing_one_undoes_nothing(service):
    heard: list[Change] = []
    service.subscribe(lambda change: 1 / 0)
    stop = service.subscribe(heard.append)
    done = service.annotate(".", "enc:00010", "label", "cat", [0], author="ann")
    service.undo(".", "enc:00000", author="ann")
    with pytest.raises(ValueError):
        service.annotate(".", "enc:00000", "label", "x\ty", [0])  # refused: nothing told
    stop()
    service.annotate(".", "enc:00000", "label", "dog", [0])
    assert [(c.tag, c.column, c.author, c.action) for c in heard] == [
        ("enc", "label", "ann", "set"), ("enc", "label", "ann", "undo")]
    assert heard[0].edit == done.edit.id and heard[0].logdir == str(service.logdir)


def test_annotations_off_reads_nothing_and_refuses_writes_with_the_reason(logdir, tmp_path):
    catalog = Catalog(logdir, cache_dir=tmp_path / "cache")
    catalog.refresh()
    off = AnnotationService.open("off", catalog.logdir, catalog.embedding)
    assert off.status()["enabled"] is False and off.columns(".", "enc:00000") == []
    with pytest.raises(AnnotationsOff, match="--annotations off"):
        off.annotate(".", "enc:00000", "label", "cat", [0])
    with pytest.raises(UnknownColumn):
        off.values(".", "enc:00000", "label")


def test_unknown_names_are_lookup_errors(service):
    with pytest.raises(LookupError):
        service.columns(".", "nope")
    with pytest.raises(UnknownColumn, match="columns: none"):
        service.values(".", "enc:00000", "label")


def test_the_store_is_named_by_the_option_else_the_environment_else_the_user_data_folder(
        monkeypatch, tmp_path):
    from projector_core.annotations.location import ENVIRONMENT, default_store_path, store_path

    monkeypatch.delenv(ENVIRONMENT, raising=False)
    assert store_path(None) == default_store_path()
    assert "projector" in str(default_store_path()) and default_store_path().name.endswith(".sqlite")
    assert store_path("OFF") is None
    monkeypatch.setenv(ENVIRONMENT, str(tmp_path / "env.sqlite"))
    assert store_path(None) == tmp_path / "env.sqlite"
    assert store_path(tmp_path / "given.sqlite") == tmp_path / "given.sqlite"
    monkeypatch.setenv(ENVIRONMENT, "off")
    assert store_path(None) is None
