"""The bad-input corpus of issue 5, end to end through the live server.

Every broken input is a run of its own in one LOGDIR, beside a healthy run ``good``, all served
by one live server: so each test also shows that the other runs (broken or not) keep working.
Each checks that the problem is reported where a user looks (``/api/runs``, or the route's 422),
and that the message names the file and the line or field. The request cases at the end are
written against the compute API contract; while a route does not exist they skip, naming the
missing module.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image

from projector_core.formats import tensor_files
from server.app import create_app
from tests.builders import vectors, write_pbtxt_run, write_standalone_logdir
from tests.conftest import LiveServer

FileContent = bytes | str | Callable[[Path], bytes]  # a callable gets the corpus root


# -- helpers ----------------------------------------------------------------------------------


def npy_bytes(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def png_bytes(width: int, height: int, mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, (width, height)).save(buffer, format="PNG")
    return buffer.getvalue()


def tsv_text(matrix: np.ndarray) -> str:
    return "".join("\t".join(repr(float(v)) for v in row) + "\n" for row in matrix)


def embedding_config(**fields: str | list[int]) -> str:
    """One pbtxt ``embeddings`` block; list values become repeated fields."""
    lines = []
    for name, value in fields.items():
        if isinstance(value, list):
            lines.extend(f"  {name}: {v}" for v in value)
        else:
            lines.append(f'  {name}: "{value}"')
    return "embeddings {\n" + "\n".join(lines) + "\n}\n"


@dataclass
class Case:
    config: str
    files: dict[str, FileContent] = field(default_factory=dict)
    config_name: str = "projector_config.pbtxt"


CORPUS: dict[str, Case] = {}


def case(run: str, config: str, files: dict[str, FileContent] | None = None,
         config_name: str = "projector_config.pbtxt") -> str:
    """Register a broken run for the corpus LOGDIR; returns its run name."""
    assert run not in CORPUS, run
    CORPUS[run] = Case(config, files or {}, config_name)
    return run


def write_case(folder: Path, found: Case, root: Path) -> None:
    folder.mkdir(parents=True)
    for name, content in found.files.items():
        data = content(root) if callable(content) else content
        if isinstance(data, str):
            (folder / name).write_text(data)
        else:
            (folder / name).write_bytes(data)
    (folder / found.config_name).write_text(found.config)


class Served:
    """The live server over a LOGDIR, with lookups of what it lists."""

    def __init__(self, url: str, root: Path) -> None:
        self.url = url
        self.root = root
        self.http = httpx.Client(base_url=url, timeout=30)  # one connection, kept alive

    def run(self, run: str) -> dict:
        return {listed["name"]: listed for listed in self.http.get("/api/runs").json()}[run]

    def embedding(self, run: str, name: str = "t") -> dict:
        return {e["name"]: e for e in self.run(run)["embeddings"]}[name]

    def get(self, route: str, run: str, embedding: str = "t") -> httpx.Response:
        return self.http.get(f"/api/{route}", params={"run": run, "embedding": embedding})

    def tensor(self, run: str, embedding: str = "t") -> np.ndarray:
        response = self.get("tensor", run, embedding)
        assert response.status_code == 200, response.text
        n, d = map(int, response.headers["x-shape"].split(","))
        return np.frombuffer(response.content, dtype="<f4").reshape(n, d)

    def assert_good_run_works(self) -> None:
        """The healthy run is listed without errors and serves its data."""
        good = self.run("good")
        assert good["error"] is None
        for embedding in good["embeddings"]:
            assert embedding["error"] is None
            response = self.get("tensor", "good", embedding["name"])
            assert response.status_code == 200
            assert len(response.content) == 4 * np.prod(embedding["shape"])
        assert self.get("metadata", "good", "bytes one").status_code == 200

    def refused(self, run: str, route: str, *words: str, embedding: str = "t") -> str:
        """The embedding's error holds ``words``; its route answers 422 with the same."""
        self.assert_good_run_works()
        error = self.embedding(run, embedding)["error"]
        assert error is not None
        for word in words:
            assert word in error, (word, error)
        response = self.get(route, run, embedding)
        assert response.status_code == 422
        detail = response.json()["detail"]
        assert isinstance(detail, str)
        assert all(word in detail for word in words), (words, detail)
        return error


def serve_corpus(root: Path, runs: dict[str, Case]) -> LiveServer:
    write_standalone_logdir(root / "logs" / "good")
    for run, found in runs.items():
        write_case(root / "logs" / run, found, root)
    server = LiveServer(create_app(root / "logs", cache_dir=root / "cache", refresh_seconds=0))
    server.start()
    return server


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One LOGDIR holding every registered broken run and the healthy ``good``."""
    root = tmp_path_factory.mktemp("corpus")
    server = serve_corpus(root, CORPUS)
    served = Served(server.url, root)
    yield served
    served.http.close()
    server.stop()


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
    """The guard's limit is lowered (same code path) so the test writes 3 MiB, not 300."""
    monkeypatch.setattr(tensor_files, "CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(tensor_files, "MAX_LINE_BYTES", 1024 * 1024)
    long_line = "\t".join(["0.5"] * (3 * 1024 * 1024 // 4))
    text = f"1\t2\n3\t4\n{long_line}\n5\t6\n"
    server = serve_corpus(tmp_path, {"long-line": Case(
        embedding_config(tensor_name="t", tensor_path="t.tsv"), {"t.tsv": text})})
    served = Served(server.url, tmp_path)
    try:
        error = served.refused("long-line", "tensor", "long-line/t.tsv line 3")
    finally:
        served.http.close()
        server.stop()
    assert "longer than 1 MiB" in error


# -- metadata ---------------------------------------------------------------------------------


def metadata_case(run: str, metadata: str | bytes) -> str:
    config = embedding_config(tensor_name="t", tensor_path="t.npy", metadata_path="m.tsv")
    return case(run, config, {"t.npy": npy_bytes(vectors(4, 2)), "m.tsv": metadata})


def metadata_refused_tensor_kept(corpus: Served, run: str, *words: str) -> str:
    error = corpus.refused(run, "metadata", f"{run}/m.tsv", *words)
    assert corpus.embedding(run)["shape"] == [4, 2]
    corpus.tensor(run)
    return error


META_SHORT = metadata_case("meta-short", "a\t1\nb\t2\nc\t3\nd\t4\n")


def test_metadata_one_row_short_explains_the_header_rule(corpus):
    """Four data rows, two columns, no header: the first row was read as the header."""
    run = META_SHORT
    error = metadata_refused_tensor_kept(corpus, run, "has 3 data rows but the tensor has 4")
    assert "first line contains a tab, so it was read as a header" in error


META_LONG = metadata_case("meta-long", "name\na\nb\nc\nd\n")


def test_metadata_one_row_long_explains_the_header_rule(corpus):
    """One column with a header line: a one-column file has no header."""
    run = META_LONG
    error = metadata_refused_tensor_kept(corpus, run, "has 5 data rows but the tensor has 4")
    assert "single-column metadata file has no header" in error


META_MORE = metadata_case("meta-more", "".join(f"p{i}\n" for i in range(9)))


def test_metadata_off_by_more(corpus):
    run = META_MORE
    error = metadata_refused_tensor_kept(corpus, run, "has 9 data rows but the tensor has 4")
    assert "each point needs exactly one metadata row" in error


META_UTF8 = metadata_case("meta-utf8", b"name\tkind\na\tx\nb\t\xff\xfe\nc\tz\nd\tw\n")


def test_metadata_invalid_utf8_names_the_line(corpus):
    run = META_UTF8
    error = metadata_refused_tensor_kept(corpus, run, f"{run}/m.tsv line 3")
    assert "not valid UTF-8" in error


META_RESERVED = metadata_case("meta-reserved",
                              "name\t__index__\n" + "".join(f"p{i}\t{i}\n" for i in range(4)))


def test_metadata_reserved_column_name(corpus):
    run = META_RESERVED
    error = metadata_refused_tensor_kept(corpus, run, f"{run}/m.tsv line 1")
    assert "'__index__' is reserved" in error


META_ALMOST_NUMERIC = metadata_case(
    "meta-almost-numeric", "name\tsize\np0\t0.0\np1\t1.5\np2\tn/a\np3\t4.5\n")


def test_metadata_column_numeric_but_one_cell_is_text_with_a_warning(corpus):
    run = META_ALMOST_NUMERIC
    embedding = corpus.embedding(run)
    assert embedding["error"] is None
    assert embedding["metadata_columns"] == ["name", "size"]
    assert (f"{run}/m.tsv line 4: column 'size' is numeric except for 'n/a', so it is treated "
            "as text") in embedding["warnings"]
    assert corpus.get("metadata", run).text.splitlines()[3] == "p2\tn/a"
    corpus.assert_good_run_works()


# -- sprites ----------------------------------------------------------------------------------


def sprite_case(run: str, image: bytes, n: int = 9, dim: tuple[int, ...] = (8, 8)) -> str:
    config = ('embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy"\n  sprite {\n'
              '    image_path: "s.png"\n'
              + "".join(f"    single_image_dim: {v}\n" for v in dim)
              + "  }\n}\n")
    return case(run, config, {"t.npy": npy_bytes(vectors(n, 2)), "s.png": image})


def sprite_refused_rest_kept(corpus: Served, run: str, *words: str) -> str:
    error = corpus.refused(run, "sprite", *words)
    assert corpus.embedding(run)["sprite"] is None
    corpus.tensor(run)
    return error


SPRITE_SMALL = sprite_case("sprite-small", png_bytes(16, 24))


def test_sprite_smaller_than_the_grid_needs(corpus):
    run = SPRITE_SMALL
    error = sprite_refused_rest_kept(corpus, run, f"{run}/s.png")
    assert "is 16x24 px but 9 thumbnails of 8x8 in a 3-column grid need at least 24x24" in error


@pytest.mark.parametrize("run", [
    sprite_case("sprite-garbage", b"not an image at all"),
    sprite_case("sprite-truncated", png_bytes(24, 24)[:60]),
])
def test_corrupt_sprite(corpus, run):
    error = sprite_refused_rest_kept(corpus, run, f"{run}/s.png")
    assert "not a readable image" in error


WIDE_SPRITE = png_bytes(8200, 2, mode="L")  # four 4100x1 thumbnails in a 2x2 grid, tiny on disk


SPRITE_WIDE = sprite_case("sprite-wide", WIDE_SPRITE, n=4, dim=(4100, 1))


def test_sprite_above_8192_px_is_served_with_a_warning(corpus):
    run = SPRITE_WIDE
    embedding = corpus.embedding(run)
    assert embedding["error"] is None
    assert embedding["sprite"] == {"single_image_dim": [4100, 1]}
    assert any(w.startswith(f"{run}/s.png: sprite is 8200x2 px, above TensorBoard's 8192 px")
               for w in embedding["warnings"])
    response = corpus.get("sprite", run)
    assert response.status_code == 200 and response.content == WIDE_SPRITE


@pytest.mark.parametrize("run", [
    sprite_case("sprite-no-dim", png_bytes(24, 24), dim=()),
    sprite_case("sprite-one-dim", png_bytes(24, 24), dim=(8,)),
])
def test_sprite_without_single_image_dim_names_the_config_field(corpus, run):
    error = sprite_refused_rest_kept(corpus, run, f"{run}/projector_config.pbtxt",
                                     "embeddings[0].sprite.single_image_dim")
    assert "needs single_image_dim [width, height]" in error


# -- bookmarks --------------------------------------------------------------------------------


def bookmarks_case(run: str, bookmarks: str) -> str:
    config = embedding_config(tensor_name="t", tensor_path="t.npy", bookmarks_path="b.json")
    return case(run, config, {"t.npy": npy_bytes(vectors(5, 2)), "b.json": bookmarks})


BOOKMARKS_JSON = bookmarks_case("bookmarks-json", '[\n  {"label": "a"},\n  {"label": }\n]\n')


def test_bookmarks_invalid_json_names_the_line(corpus):
    run = BOOKMARKS_JSON
    error = corpus.refused(run, "bookmarks", f"{run}/b.json line 3")
    assert "not valid JSON" in error
    corpus.tensor(run)


BOOKMARKS_SIZE = bookmarks_case("bookmarks-size", json.dumps([
    {"label": "fits", "dataSetDimensions": [5, 2]},
    {"label": "other", "dataSetDimensions": [1797, 64]}]))


def test_bookmarks_for_another_data_set_size_are_refused_with_the_reason(corpus):
    run = BOOKMARKS_SIZE
    error = corpus.refused(run, "bookmarks", f"{run}/b.json", "field '[1].dataSetDimensions'")
    assert "saved for a data set of [1797, 64], this embedding is [5, 2]" in error
    assert corpus.embedding(run)["has_bookmarks"] is True
    corpus.tensor(run)


# -- requests (the compute API of issue 3) ----------------------------------------------------


def needs(module: str) -> None:
    pytest.importorskip(module, reason=f"{module} (compute API, issue 3) does not exist yet")


N_POINTS, DIMS = 12, 4


@pytest.fixture(scope="module")
def compute(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A run ``r`` / embedding ``e`` of 12 x 4 with two NaN/Inf rows and metadata."""
    root = tmp_path_factory.mktemp("compute")
    matrix = vectors(N_POINTS, DIMS)
    matrix[3, 0] = np.nan
    matrix[9, 2] = np.inf
    config = embedding_config(tensor_name="e", tensor_path="e.npy", metadata_path="m.tsv")
    write_pbtxt_run(root / "logs" / "r", config, {
        "e.npy": npy_bytes(matrix),
        "m.tsv": "name\tgroup\n" + "".join(f"p{i}\t{i % 3}\n" for i in range(N_POINTS))})
    server = LiveServer(create_app(root / "logs", cache_dir=root / "cache", refresh_seconds=0,
                                   max_body_bytes=64 * 1024))
    server.start()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client
    server.stop()


def neighbors(compute: httpx.Client, **params: object) -> httpx.Response:
    query = {"run": "r", "embedding": "e", "index": 0, "k": 3, "metric": "cosine", **params}
    return compute.get("/api/neighbors", params=query)


def assert_error(response: httpx.Response, status: int, *words: str) -> None:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str)
    assert all(word in detail for word in words), (words, detail)


@pytest.mark.parametrize(("params", "word"), [
    ({"run": "nope"}, "nope"),
    ({"embedding": "nope"}, "nope"),
])
def test_neighbors_of_unknown_run_or_embedding_is_404(compute, params, word):
    needs("server.routes.neighbors")
    assert_error(neighbors(compute, **params), 404, word)


@pytest.mark.parametrize(("params", "word"), [
    ({"index": N_POINTS}, "index"),
    ({"index": -1}, "index"),
    ({"k": 0}, "k"),
    ({"k": -2}, "k"),
    ({"metric": "manhattan"}, "metric"),
])
def test_neighbors_bad_parameters_are_422_naming_the_parameter(compute, params, word):
    needs("server.routes.neighbors")
    assert_error(neighbors(compute, **params), 422, word)
    assert neighbors(compute).status_code == 200


@pytest.mark.parametrize("k", [N_POINTS, N_POINTS + 50])
def test_neighbors_k_not_below_n_is_422(compute, k):
    """Issue 5 lists k >= N among the requests refused with a clear error (not clamped)."""
    needs("server.routes.neighbors")
    assert_error(neighbors(compute, k=k), 422, "k")
    assert neighbors(compute, k=N_POINTS - 1).status_code == 200


def test_nan_rows_are_never_neighbours(compute):
    needs("server.routes.neighbors")
    for index in (0, 5):
        response = neighbors(compute, index=index, k=N_POINTS - 1, metric="euclidean")
        assert response.status_code == 200, response.text
        found = [n["index"] for n in response.json()["neighbors"]]
        assert 3 not in found and 9 not in found and index not in found


@pytest.mark.parametrize(("length", "words"), [
    (DIMS - 1, f"{DIMS - 1} values"),
    (DIMS + 1, f"{DIMS + 1} values"),
    (0, "vector"),
])
def test_neighbors_of_a_vector_of_the_wrong_length_is_422(compute, length, words):
    needs("server.routes.neighbors")
    body = {"run": "r", "embedding": "e", "vector": [0.5] * length, "k": 3, "metric": "cosine"}
    assert_error(compute.post("/api/neighbors", json=body), 422, words)
    body["vector"] = [0.5] * DIMS
    assert compute.post("/api/neighbors", json=body).status_code == 200


def test_search_with_a_bad_regex_is_422(compute):
    needs("server.routes.neighbors")
    params = {"run": "r", "embedding": "e", "column": "name", "query": "p(1", "regex": "true"}
    assert_error(compute.get("/api/search", params=params), 422)


def test_projection_with_an_unknown_method_is_422(compute):
    needs("server.routes.projections")
    body = {"run": "r", "embedding": "e", "method": "isomap", "dims": 2, "params": {}}
    assert_error(compute.post("/api/projections", json=body), 422, "method")


def test_projection_of_an_unknown_embedding_is_404(compute):
    needs("server.routes.projections")
    body = {"run": "r", "embedding": "nope", "method": "pca", "dims": 2, "params": {}}
    assert_error(compute.post("/api/projections", json=body), 404, "nope")


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/api/jobs/no-such-job"),
    ("GET", "/api/jobs/no-such-job/result"),
    ("DELETE", "/api/jobs/no-such-job"),
])
def test_unknown_job_id_is_404(compute, method, path):
    needs("server.routes.jobs")
    assert_error(compute.request(method, path), 404, "no-such-job")


def test_huge_declared_body_is_413_before_it_is_read(compute):
    """The limit applies to the declared Content-Length, so the body is never buffered."""
    body = json.dumps({"run": "r", "embedding": "e", "vector": [0.25] * 40_000, "k": 3})
    response = compute.post("/api/neighbors", content=body,
                          headers={"content-type": "application/json"})
    assert_error(response, 413, "larger than 65536 bytes")
    assert compute.get("/api/health").status_code == 200


def test_huge_streamed_body_is_413(compute):
    """No Content-Length (chunked upload): the limit is enforced while the body streams in."""
    needs("server.routes.neighbors")

    def chunks():
        yield b'{"run": "r", "embedding": "e", "k": 3, "vector": [0.25'
        for _ in range(20_000):
            yield b", 0.25"
        yield b"]}"

    response = compute.post("/api/neighbors", content=chunks(),
                          headers={"content-type": "application/json"})
    assert_error(response, 413, "larger than 65536 bytes")
    assert compute.get("/api/health").status_code == 200
