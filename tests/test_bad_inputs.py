"""The bad-input corpus of issue 5, end to end through the live server: configs and tensors.

Every broken input is a run of its own in one LOGDIR, beside a healthy run ``good``, all served
by one live server: so each test also shows that the other runs (broken or not) keep working.
Each checks that the problem is reported where a user looks (``/api/runs``, or the route's 422),
and that the message names the file and the line or field. Metadata, sprites and bookmarks are
in ``test_bad_inputs_assets.py``, bad requests in ``test_bad_inputs_requests.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from projector_core.formats import tensor_files
from projector_core.formats.budgets import TENSOR_COLUMNS, Budget
from tests.bad_input_corpus import (
    Case,
    Corpus,
    Served,
    embedding_config,
    npy_bytes,
    serve_corpus,
    tsv_text,
)
from tests.builders import vectors

CORPUS = Corpus()
case = CORPUS.case
corpus = CORPUS.fixture()


TENSOR_5x2 = {"t.npy": npy_bytes(vectors(5, 2))}


# -- configs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("run", "line", "words"), [
    (case("syntax-eof", 'embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy"\n',
          TENSOR_5x2), 3, "unexpected end of file, expected '}'"),
    (case("syntax-colon", 'embeddings {\n  tensor_name "t"\n}\n', TENSOR_5x2), 2,
     "expected ':' after 'tensor_name'"),
    (case("syntax-quote", 'embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy\n}\n',
          TENSOR_5x2), 3, "unexpected character"),
    (case("syntax-number", 'embeddings {\n  tensor_shape: [5, x]\n}\n', TENSOR_5x2), 2,
     "needs a number"),
])
def test_pbtxt_syntax_error_names_the_line(corpus, run, line, words):
    listed = corpus.run(run)
    assert listed["embeddings"] == []
    assert listed["error"].startswith(f"{run}/projector_config.pbtxt line {line}: ")
    assert words in listed["error"]
    corpus.assert_good_run_works()


UNKNOWN_FIELD = case("unknown-field",
                     'embeddings {\n  tensor_name: "t"\n  tensor_pth: "t.npy"\n}\n', TENSOR_5x2)


def test_pbtxt_unknown_field_names_the_line_and_the_field(corpus):
    run = UNKNOWN_FIELD
    assert corpus.run(run)["error"] == (f"{run}/projector_config.pbtxt line 3: unknown field "
                                        "'tensor_pth' in EmbeddingInfo")
    corpus.assert_good_run_works()


JSON_BROKEN = case("json-broken",
                   '{"embeddings": [\n  {"tensorName": "t", "tensorPath": "t.npy",}\n]}',
                   TENSOR_5x2, config_name="projector_config.json")


def test_json_config_that_is_not_json_names_the_line(corpus):
    run = JSON_BROKEN
    assert corpus.run(run)["error"].startswith(f"{run}/projector_config.json line 2: not valid JSON")
    corpus.assert_good_run_works()


@pytest.mark.parametrize(("run", "config_name"), [
    (case("no-tensor-pbtxt", embedding_config(tensor_name="t"), TENSOR_5x2),
     "projector_config.pbtxt"),
    (case("no-tensor-json", json.dumps({"embeddings": [{"tensorName": "t"}]}), TENSOR_5x2,
          config_name="projector_config.json"), "projector_config.json"),
])
def test_embedding_with_no_tensor_names_the_field(corpus, run, config_name):
    error = corpus.refused(run, "tensor", f"{run}/{config_name}", "embeddings[0].tensor_path")
    assert "no tensor_path" in error
    assert corpus.embedding(run)["shape"] is None


@pytest.mark.parametrize(("run", "tensor_path"), [
    (case("shape-npy", embedding_config(tensor_name="t", tensor_path="t.npy", tensor_shape=[6, 2]),
          TENSOR_5x2), "t.npy"),
    (case("shape-tsv", embedding_config(tensor_name="t", tensor_path="t.tsv", tensor_shape=[6, 2]),
          {"t.tsv": tsv_text(vectors(5, 2))}), "t.tsv"),
])
def test_tensor_shape_that_disagrees_with_the_file(corpus, run, tensor_path):
    error = corpus.refused(run, "tensor", f"{run}/projector_config.pbtxt",
                           "embeddings[0].tensor_shape", f"{run}/{tensor_path}")
    assert "[6, 2]" in error and "[5, 2]" in error


FIRST, SECOND = vectors(5, 2, 1), vectors(4, 3, 2)
DUPLICATE = case("duplicate", embedding_config(tensor_name="t", tensor_path="a.npy")
                 + embedding_config(tensor_name="t", tensor_path="b.npy"),
                 {"a.npy": npy_bytes(FIRST), "b.npy": npy_bytes(SECOND)})


def test_duplicate_tensor_names_flag_the_second_and_keep_the_first(corpus):
    run = DUPLICATE
    listed = corpus.run(run)["embeddings"]
    assert [e["name"] for e in listed] == ["t", "t"]
    assert listed[0]["error"] is None
    duplicate = f"{run}/projector_config.pbtxt embeddings[1]: duplicate tensor_name 't'"
    assert duplicate in listed[1]["error"]
    assert "embeddings[0]" in listed[1]["error"]
    np.testing.assert_array_equal(corpus.tensor(run), FIRST)
    corpus.assert_good_run_works()


# -- tensors ----------------------------------------------------------------------------------


def tsv_case(run: str, text: str | bytes, **fields) -> str:
    return case(run, embedding_config(tensor_name="t", tensor_path="t.tsv", **fields),
                {"t.tsv": text})


RAGGED = tsv_case("ragged", "1\t2\t3\n4\t5\t6\n7\t8\n9\t10\t11\n")


def test_ragged_tsv_rows_name_the_line(corpus):
    run = RAGGED
    error = corpus.refused(run, "tensor", f"{run}/t.tsv line 3")
    assert "has 2 values, expected 3" in error


NON_NUMERIC = tsv_case("non-numeric", "1\t2\n3\tabc\n5\t6\n")


def test_non_numeric_cell_names_the_line_and_column(corpus):
    run = NON_NUMERIC
    error = corpus.refused(run, "tensor", f"{run}/t.tsv line 2")
    assert "column 2: 'abc' is not a number" in error


WITH_NAN = vectors(10, 3)
WITH_NAN[2, 1] = np.nan
WITH_NAN[7, 0] = np.inf
WITH_NAN[8, 2] = -np.inf


@pytest.mark.parametrize(("run", "kind"), [
    (case("nan-npy", embedding_config(tensor_name="t", tensor_path="t.npy"),
          {"t.npy": npy_bytes(WITH_NAN)}), "npy"),
    (tsv_case("nan-tsv", tsv_text(WITH_NAN)), "tsv"),
])
def test_nan_and_inf_are_reported_and_served_as_written(corpus, run, kind):
    embedding = corpus.embedding(run)
    assert embedding["error"] is None
    assert f"{run}/t.{kind}: 3 rows hold NaN or Inf" in " ".join(embedding["warnings"])
    np.testing.assert_array_equal(corpus.tensor(run), WITH_NAN)
    corpus.assert_good_run_works()


@pytest.mark.parametrize(("run", "name"), [
    (tsv_case("empty-tsv", b""), "t.tsv"),
    (tsv_case("blank-tsv", b"\n\n  \n"), "t.tsv"),
    (case("empty-npy", embedding_config(tensor_name="t", tensor_path="t.npy"),
          {"t.npy": npy_bytes(np.zeros((0, 3), np.float32))}), "t.npy"),
])
def test_empty_tensor_file(corpus, run, name):
    error = corpus.refused(run, "tensor", f"{run}/{name}")
    assert "empty" in error


COLUMN = vectors(6, 1)
SINGLE_COLUMN = tsv_case("single-column", tsv_text(COLUMN))


def test_single_column_tensor_is_served_with_a_warning(corpus):
    run = SINGLE_COLUMN
    embedding = corpus.embedding(run)
    assert embedding["error"] is None and embedding["shape"] == [6, 1]
    assert any(w.startswith(f"{run}/t.tsv: has a single column") for w in embedding["warnings"])
    np.testing.assert_array_equal(corpus.tensor(run), COLUMN)
    corpus.assert_good_run_works()


BYTES_SIZE = case("bytes-size",
                  embedding_config(tensor_name="t", tensor_path="t.bytes", tensor_shape=[4, 3]),
                  {"t.bytes": vectors(4, 3).tobytes()[:-4]})


def test_bytes_whose_size_is_not_n_d_4(corpus):
    run = BYTES_SIZE
    error = corpus.refused(run, "tensor", f"{run}/t.bytes")
    assert "has 44 bytes but tensor_shape [4, 3] needs 48" in error


@pytest.mark.parametrize(("run", "words"), [
    (case("npy-cut-header", embedding_config(tensor_name="t", tensor_path="t.npy"),
          {"t.npy": npy_bytes(vectors(10, 4))[:20]}), "reading array header"),
    (case("npy-cut-data", embedding_config(tensor_name="t", tensor_path="t.npy"),
          {"t.npy": npy_bytes(vectors(10, 4))[:-40]}),
     "truncated: its header says shape [10, 4] of float32 (160 bytes of data) but only 120 "
     "bytes follow the header"),
])
def test_truncated_npy(corpus, run, words):
    error = corpus.refused(run, "tensor", f"{run}/t.npy: is not a valid .npy file")
    assert words in error


class _WritesAFileWhenUnpickled:
    """Unpickling this object would create ``marker``: proof that nothing was unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _pickled_objects(root: Path) -> bytes:
    payload = np.array([_WritesAFileWhenUnpickled(root / "unpickled"), None], dtype=object)
    return npy_bytes(payload, allow_pickle=True)


OBJECTS = case("objects", embedding_config(tensor_name="t", tensor_path="t.npy"),
               {"t.npy": _pickled_objects})


def test_object_dtype_npy_is_refused_and_never_unpickled(corpus):
    run = OBJECTS
    error = corpus.refused(run, "tensor", f"{run}/t.npy")
    assert "pickle" in error
    assert not (corpus.root / "unpickled").exists()


def test_gigabyte_long_line_is_refused_without_reading_it_all(tmp_path, monkeypatch):
    """The row budget is lowered (same code path) so the test writes 3 MiB, not 300."""
    monkeypatch.setattr(tensor_files, "CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(tensor_files, "TENSOR_ROW_BYTES",
                        Budget(2**20, "bytes", "per tensor TSV row"))
    text = f"1\t2\n3\t4\n{'5' * 3 * 2**20}\n5\t6\n"
    server = serve_corpus(tmp_path, {"long-line": Case(
        embedding_config(tensor_name="t", tensor_path="t.tsv"), {"t.tsv": text})})
    served = Served(server.url, tmp_path)
    try:
        error = served.refused("long-line", "tensor", "long-line/t.tsv line 3")
    finally:
        served.http.close()
        server.stop()
    assert "more than 1,048,576 bytes, over the budget of 1 MiB per tensor TSV row" in error


# -- what a parser would build (issue 38): refused by its budget before it is built -------------

WIDE = TENSOR_COLUMNS.limit + 1
WIDE_FIRST_LINE = case("wide-first-line", embedding_config(tensor_name="t", tensor_path="t.tsv"),
                       {"t.tsv": "\n" + "\t".join(["0"] * WIDE) + "\n1\t2\n"})
WIDE_LATER_LINE = case("wide-later-line", embedding_config(tensor_name="t", tensor_path="t.tsv"),
                       {"t.tsv": "1\t2\n3\t4\n" + "\t".join(["0"] * 10 * WIDE) + "\n"})
DEEP_CONFIG = case("deep-json-config", '{"embeddings": [],\n "modelCheckpointPath": '
                   + "[" * 100_000 + "]" * 100_000 + "}", TENSOR_5x2,
                   config_name="projector_config.json")


def test_a_tsv_wider_than_the_budget_is_refused_by_its_first_line(corpus):
    error = corpus.refused(WIDE_FIRST_LINE, "tensor", f"{WIDE_FIRST_LINE}/t.tsv line 2")
    assert error.endswith(f"{WIDE:,} columns, over the budget of 65,536 columns per tensor TSV row")


def test_a_later_line_far_wider_than_the_first_is_named_without_splitting_it(corpus):
    error = corpus.refused(WIDE_LATER_LINE, "tensor", f"{WIDE_LATER_LINE}/t.tsv line 3")
    assert f"has {10 * WIDE} values, expected 2 like the first row" in error


def test_a_deep_nested_json_config_is_refused_naming_its_budget(corpus):
    error = corpus.run(DEEP_CONFIG)["error"]
    assert error == (f"{DEEP_CONFIG}/projector_config.json line 2: nested 100,001 levels deep, "
                     "over the budget of 64 levels of nesting per JSON document")
    corpus.assert_good_run_works()
