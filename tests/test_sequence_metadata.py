"""Sequence columns (`__next__`): bad links are a warning naming the line, never an error."""

from __future__ import annotations

from projector_core.formats.metadata import parse_metadata


def test_bad_sequence_cells_warn_with_their_line_and_keep_the_metadata() -> None:
    raw = b"word\t__next__\na\t1\nb\toops\nc\t7\nd\t\n"
    metadata = parse_metadata(raw, "run/metadata.tsv", 4)
    assert metadata.n_rows == 4
    assert [w for w in metadata.warnings if "__next__" in w] == [
        "run/metadata.tsv line 3: column '__next__' must hold point indices 0..3, found 'oops'; "
        "2 such cells not drawn as sequence links"]
    assert metadata.arrays["__next__"].to_pylist() == ["1", "oops", "7", ""]


def test_good_sequence_cells_give_no_warning() -> None:
    metadata = parse_metadata(b"word\t__next__\na\t1\nb\t\n", "m.tsv", 2)
    assert metadata.warnings == []
