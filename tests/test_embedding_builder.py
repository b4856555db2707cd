"""Every input kind gets the same embedding rules (``embedding_builder.py``) and its caches the
same key recipe (``fingerprint.py``): shown through the catalog and the in-memory path, never by
calling the rules directly."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from projector_core.data.catalog import Catalog, PlainOptions
from projector_core.data.memory import memory_embedding
from projector_core.errors import DataError
from projector_core.storage.fingerprint import fingerprint
from tests.builders import vectors, write_pbtxt_run

ALMOST_NUMERIC = "score\tname\n1\ta\n2\tb\nthree\tc\n4\td\n"  # one text cell: a warning


def _with_nan() -> np.ndarray:
    matrix = vectors(4, 3)
    matrix[1, 0] = np.nan
    return matrix


def _plain(tmp_path: Path) -> Catalog:
    catalog = Catalog(tmp_path / "v.npy", cache_dir=tmp_path / "cache",
                      plain=PlainOptions(metadata=tmp_path / "m.tsv"))
    catalog.refresh()
    return catalog


def test_fingerprint_parts_keep_their_boundaries_and_bytes_match_arrays():
    assert fingerprint("ab", "c") != fingerprint("a", "bc")
    assert fingerprint(1, (2, 3)) == fingerprint("1", "(2, 3)")
    matrix = vectors(5, 2)
    assert fingerprint(np.ascontiguousarray(matrix).data) == fingerprint(matrix.tobytes())
    assert len(fingerprint()) == 32


def test_plain_arrays_config_entries_and_memory_share_the_tensor_and_metadata_rules(tmp_path):
    matrix = _with_nan()
    np.save(tmp_path / "v.npy", matrix)
    (tmp_path / "m.tsv").write_text(ALMOST_NUMERIC)
    write_pbtxt_run(tmp_path / "logs" / "run",
                    'embeddings {\n  tensor_name: "v"\n  tensor_path: "v.npy"\n'
                    '  metadata_path: "m.tsv"\n}\n',
                    {"v.npy": (tmp_path / "v.npy").read_bytes(), "m.tsv": ALMOST_NUMERIC})
    configured = Catalog(tmp_path / "logs", cache_dir=tmp_path / "cache")
    configured.refresh()
    from_config = configured.embedding("run", "v")
    [plain] = _plain(tmp_path).run(".").embeddings
    in_memory = memory_embedding("r", "v", matrix, {"score": ["1", "2", "three", "4"]})
    for embedding, source in [(from_config, "run/v.npy"), (plain, str(tmp_path / "v.npy")),
                              (in_memory, "(memory)")]:
        assert f"{source}: 1 row holds NaN or Inf; it is kept out" in " ".join(embedding.warnings)
    for embedding in (from_config, plain):
        assert any("score" in w and "three" in w for w in embedding.warnings), embedding.warnings


def test_rewriting_a_plain_arrays_metadata_changes_its_fingerprint(tmp_path):
    np.save(tmp_path / "v.npy", vectors(4, 3))
    metadata = tmp_path / "m.tsv"
    metadata.write_text("a\nb\nc\nd\n")
    before = _plain(tmp_path).embedding(".", "v").fingerprint
    metadata.write_text("a\nb\nc\nX\n")
    os.utime(metadata, ns=(1, 1))  # same size, another time: still another version
    assert _plain(tmp_path).embedding(".", "v").fingerprint != before
    metadata.write_text("a\nb\nc\nd\n")
    assert _plain(tmp_path).embedding(".", "v").fingerprint == before


def test_metadata_given_as_columns_is_checked_as_a_file_is(tmp_path):
    np.savez(tmp_path / "v.npz", emb=vectors(4, 3), score=np.array(["1", "2", "three", "4"]))
    catalog = Catalog(tmp_path / "v.npz", cache_dir=tmp_path / "cache")
    catalog.refresh()
    [embedding] = catalog.run(".").embeddings
    assert (f"{tmp_path / 'v.npz'} line 4: column 'score' is numeric except for 'three', so it "
            "is treated as text") in embedding.warnings
    with pytest.raises(DataError, match="'__index__' is reserved"):
        memory_embedding("r", "v", vectors(2, 2), {"__index__": ["a", "b"]})
