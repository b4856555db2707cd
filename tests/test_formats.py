"""Format readers on their own: config syntax, the metadata header rule, TSV errors with lines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from projector_core.errors import DataError
from projector_core.formats import json_text
from projector_core.formats.config import parse_config, resolve_asset
from projector_core.formats.metadata import parse_metadata
from projector_core.formats.tensor_files import read_bytes, read_tsv


def _config(tmp_path: Path, text: str, name: str = "projector_config.pbtxt"):
    path = tmp_path / name
    path.write_text(text)
    return parse_config(path, name)


def test_pbtxt_accepts_every_text_format_spelling(tmp_path):
    config = _config(tmp_path, """
        # a comment
        model_checkpoint_path: 'ckpt'
        embeddings: {
          tensor_name: "a\\tb" "c"   # adjacent strings join
          tensor_shape: [3, 2]
          sprite < image_path: "s.png" single_image_dim: 8; single_image_dim: 0x8 >
        },
        embeddings { tensor_name: "\\344\\270\\255" tensor_path: "t.tsv" }
    """)
    first, second = config.embeddings
    assert first.tensor_name == "a\tbc"
    assert first.tensor_shape == (3, 2)
    assert first.sprite is not None and first.sprite.single_image_dim == (8, 8)
    assert second.tensor_name == "中"
    assert config.model_checkpoint_path == "ckpt"


@pytest.mark.parametrize(("text", "line", "words"), [
    ('embeddings {\n tensor_name: "a"\n', 2, "end of file"),
    ('embeddings {\n  nope: 1\n}', 2, "unknown field 'nope' in EmbeddingInfo"),
    ('embeddings {\n  tensor_shape: -1\n}', 2, "out of range"),
    ('embeddings {\n  tensor_name: unquoted\n}', 2, "quoted string"),
    ('\n\nembeddings { tensor_name: "a }', 3, "unexpected character"),
])
def test_pbtxt_errors_name_the_line(tmp_path, text, line, words):
    with pytest.raises(DataError) as error:
        _config(tmp_path, text)
    assert error.value.line == line
    assert words in str(error.value)
    assert str(error.value).startswith(f"projector_config.pbtxt line {line}")


def test_json_config_reads_camel_case_and_reports_bad_json_lines(tmp_path):
    config = _config(tmp_path, '{"embeddings": [{"tensorName": "t", "tensorShape": [4, 2],'
                     ' "tensorPath": "t.bytes", "sprite": {"imagePath": "s.png", '
                     '"singleImageDim": [4, 4]}}]}', "projector_config.json")
    info = config.embeddings[0]
    assert (info.tensor_name, info.tensor_shape, info.tensor_path) == ("t", (4, 2), "t.bytes")
    with pytest.raises(DataError, match=r"projector_config.json line 2: not valid JSON"):
        _config(tmp_path, '{"embeddings": [\n  {,]}', "projector_config.json")


def test_asset_paths_must_stay_inside_the_config_folder(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "secret.tsv").write_text("1\n")
    (tmp_path / "run" / "link.tsv").symlink_to(tmp_path / "secret.tsv")
    assert resolve_asset(tmp_path / "run", "sub/../ok.tsv", "c", "tensor_path").name == "ok.tsv"
    for escape in ("../secret.tsv", str(tmp_path / "secret.tsv"), "link.tsv"):
        with pytest.raises(DataError, match="resolves outside the config directory"):
            resolve_asset(tmp_path / "run", escape, "c", "tensor_path")


def test_metadata_header_rule():
    single = parse_metadata(b"cat\ndog\n", "m.tsv", 2)
    assert (single.names, single.column("label"), single.has_header) == (["label"], ["cat", "dog"],
                                                                          False)
    assert single.to_tsv() == "label\ncat\ndog\n"
    multi = parse_metadata(b"word\tcount\ncat\t3\ndog\t\n", "m.tsv", 2)
    assert multi.names == ["word", "count"]
    assert multi.column("count") == ["3", ""]
    np.testing.assert_array_equal(multi.numeric("count"), [3.0, np.nan])
    assert multi.numeric("word") is None


@pytest.mark.parametrize(("raw", "n", "expected"), [
    (b"a\tb\n1\t2\n3\t4\n", 3, "first line contains a tab, so it was read as a header"),
    (b"label\ncat\ndog\n", 2, "has no header, so its first line counts as a data row"),
    (b"a\nb\nc\nd\n", 9, "has 4 data rows but the tensor has 9 points"),
    (b"a\tb\n1\t2\n3\n", 2, "m.tsv line 3: has 1 cells"),
    (b"a\tb\tb\n1\t2\t3\n", 1, "repeats the column name 'b'"),
    (b"__index__\tx\n1\t2\n", 1, "reserved"),
    (b"ok\n\xff\xfe\n", 2, "m.tsv line 2: is not valid UTF-8"),
])
def test_metadata_errors_explain_themselves(raw, n, expected):
    with pytest.raises(DataError, match=r"m\.tsv") as error:
        parse_metadata(raw, "m.tsv", n)
    assert expected in str(error.value)


def test_almost_numeric_column_is_text_with_a_warning():
    rows = "".join(f"{i}\n" for i in range(200)).replace("57\n", "n/a\n")
    metadata = parse_metadata(("v\tw\n" + rows.replace("\n", "\tx\n")).encode(), "m.tsv", 200)
    assert metadata.numeric("v") is None
    assert any("line 59" in w and "'n/a'" in w for w in metadata.warnings)


@pytest.mark.parametrize(("text", "message"), [
    ("1\t2\n3\tabc\n", "t.tsv line 2: column 2: 'abc' is not a number"),
    ("1\t2\n3\t4\t5\n", "t.tsv line 2: has 3 values, expected 2"),
    ("", "t.tsv: is empty"),
    ("\n\n", "t.tsv: is empty"),
])
def test_tsv_errors_name_line_and_cell(tmp_path, text, message):
    path = tmp_path / "t.tsv"
    path.write_text(text)
    with pytest.raises(DataError) as error:
        read_tsv(path, "t.tsv")
    assert str(error.value).startswith(message)


def test_tsv_reads_blank_lines_crlf_nan_and_many_chunks(tmp_path, monkeypatch):
    from projector_core.formats import tensor_files

    path = tmp_path / "t.tsv"
    path.write_bytes(b"1\t2\r\n\r\nnan\tinf\n5\t6")
    np.testing.assert_array_equal(read_tsv(path, "t.tsv"), [[1, 2], [np.nan, np.inf], [5, 6]])
    matrix = np.random.default_rng(0).normal(size=(500, 7)).astype(np.float32)
    np.savetxt(path, matrix, delimiter="\t", fmt="%.9g")
    monkeypatch.setattr(tensor_files, "CHUNK_BYTES", 1000)  # many chunks, lines cut at boundaries
    progress: list[int] = []
    np.testing.assert_array_equal(read_tsv(path, "t.tsv", lambda done, total: progress.append(done)),
                                  matrix)
    assert len(progress) > 10 and progress[-1] == path.stat().st_size


def test_bytes_size_must_match_the_shape(tmp_path):
    path = tmp_path / "t.bytes"
    path.write_bytes(np.zeros((3, 2), "<f4").tobytes())
    assert read_bytes(path, "t.bytes", (3, 2)).shape == (3, 2)
    with pytest.raises(DataError, match=r"t.bytes: has 24 bytes but tensor_shape \[4, 2\] needs 32"):
        read_bytes(path, "t.bytes", (4, 2))


def _trailing_tabs(path: Path, vectors: np.ndarray) -> None:
    with path.open("w") as out:  # the loop people write by hand: a tab after every value
        for row in vectors:
            for value in row:
                out.write(f"{value}\t")
            out.write("\n")


@pytest.mark.parametrize(("writer", "says"), [
    (lambda path, x: np.savetxt(path, x, delimiter=","), "(values separated by commas: "),
    (lambda path, x: np.savetxt(path, x), "(values separated by spaces: "),
    (_trailing_tabs, "line 1: column 4: '' is not a number (the line ends with a tab"),
    (lambda path, x: path.write_text("1,5\t2\t3\n"), "'1,5' is not a number (a decimal comma?"),
])
def test_a_tensor_written_the_usual_wrong_ways_says_how(tmp_path, writer, says):
    """A CSV, a space-separated file or a trailing tab is named for what it is, beside the
    line and column, so the user knows what to change in their writer."""
    path = tmp_path / "tensor.tsv"
    writer(path, np.random.default_rng(0).normal(size=(5, 3)))
    with pytest.raises(DataError) as error:
        read_tsv(path, "tensor.tsv")
    assert "tensor.tsv line 1: column " in str(error.value) and says in str(error.value)


@pytest.mark.parametrize("index", [True, False])
def test_a_pandas_table_with_its_header_says_to_drop_it(tmp_path, index):
    import pandas as pd

    path = tmp_path / "tensor.tsv"
    frame = pd.DataFrame(np.random.default_rng(0).normal(size=(5, 3)), columns=["a", "b", "c"])
    frame.to_csv(path, sep="\t", index=index)
    with pytest.raises(DataError) as error:
        read_tsv(path, "tensor.tsv")
    assert str(error.value).startswith("tensor.tsv line 1: column 1: ")
    assert "no header line or index column" in str(error.value)
    assert "header=False, index=False" in str(error.value)


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@pytest.mark.parametrize("text", [
    '[{"a": "[[[[\\"[[", "b": [1, 2]}]',  # brackets and an escaped quote inside a string
    '["\\\\", [[1]]]',  # an escaped backslash ends before the quote: the string closes
    '["\\\\\\"[[["]',  # backslash, then an escaped quote: the string goes on
    '{"k": "{{{"}', '"[[["', "[]", "3", '{"é": ["ü", {"x": []}]}',
])
def test_json_nesting_is_measured_outside_strings(text):
    assert json_text.nesting(text.encode())[0] == _depth(json.loads(text))


def test_json_over_the_nesting_budget_names_the_line_where_it_goes_too_deep():
    text = '{"ok": "[[[[",\n"deep":\n' + "[" * 100 + "]" * 100 + "}"
    with pytest.raises(DataError) as error:
        json_text.loads(text, "b.json")
    assert str(error.value) == ("b.json line 3: nested 101 levels deep, over the budget of 64 "
                                "levels of nesting per JSON document")
    assert json_text.loads("[" * 63 + "]" * 63, "b.json") is not None
