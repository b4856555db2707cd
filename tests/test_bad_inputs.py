"""The bad-input corpus of issue 5, end to end through the live server.

Each broken input sits in run ``bad`` of a LOGDIR that also holds a healthy run ``good``. Every
test checks that the problem is reported where a user looks (``/api/runs``, or the route's
422), that the message names the file and the line or field, and that ``good`` keeps working.
The request cases at the end are written against the compute API contract; while a route does
not exist yet they skip, naming the missing module.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image

from projector_core.formats import tensor_files
from tests.builders import vectors, write_pbtxt_run, write_standalone_logdir

Files = dict[str, bytes | str]


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


def get(url: str, route: str, **params: object) -> httpx.Response:
    return httpx.get(f"{url}/api/{route}", params=params, timeout=30)


def assert_good_run_works(url: str) -> None:
    """The healthy neighbour run is listed without errors and serves its data."""
    runs = {run["name"]: run for run in get(url, "runs").json()}
    good = runs["good"]
    assert good["error"] is None
    for embedding in good["embeddings"]:
        assert embedding["error"] is None
        response = get(url, "tensor", run="good", embedding=embedding["name"])
        assert response.status_code == 200
        assert len(response.content) == 4 * np.prod(embedding["shape"])
    assert get(url, "metadata", run="good", embedding="bytes one").status_code == 200


class BadRun:
    """A LOGDIR with a broken run ``bad`` beside a healthy run ``good``, served live."""

    def __init__(self, tmp_path: Path, serve, config: str, files: Files | None = None,
                 config_name: str = "projector_config.pbtxt") -> None:
        logdir = tmp_path / "logs"
        write_standalone_logdir(logdir / "good")
        folder = logdir / "bad"
        folder.mkdir()
        for name, content in (files or {}).items():
            if isinstance(content, str):
                (folder / name).write_text(content)
            else:
                (folder / name).write_bytes(content)
        (folder / config_name).write_text(config)
        self.url = serve(logdir)
        assert_good_run_works(self.url)

    @property
    def run(self) -> dict:
        runs = {run["name"]: run for run in get(self.url, "runs").json()}
        return runs["bad"]

    def embedding(self, name: str = "t") -> dict:
        return {e["name"]: e for e in self.run["embeddings"]}[name]

    def get(self, route: str, embedding: str = "t", **params: object) -> httpx.Response:
        return get(self.url, route, run="bad", embedding=embedding, **params)

    def tensor(self, embedding: str = "t") -> np.ndarray:
        response = self.get("tensor", embedding)
        assert response.status_code == 200, response.text
        n, d = map(int, response.headers["x-shape"].split(","))
        return np.frombuffer(response.content, dtype="<f4").reshape(n, d)


def assert_refused(bad: BadRun, part_route: str, *words: str, embedding: str = "t") -> str:
    """The embedding's error holds ``words`` and its route answers 422 with the same message."""
    error = bad.embedding(embedding)["error"]
    assert error is not None
    for word in words:
        assert word in error, (word, error)
    response = bad.get(part_route, embedding)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert isinstance(detail, str)
    assert all(word in detail for word in words), (words, detail)
    return error


TENSOR_5x2 = {"t.npy": npy_bytes(vectors(5, 2))}


# -- configs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("config", "line", "words"), [
    ('embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy"\n', 3,
     "unexpected end of file, expected '}'"),
    ('embeddings {\n  tensor_name "t"\n}\n', 2, "expected ':' after 'tensor_name'"),
    ('embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy\n}\n', 3, "unexpected character"),
    ('embeddings {\n  tensor_shape: [5, x]\n}\n', 2, "needs a number"),
])
def test_pbtxt_syntax_error_names_the_line(tmp_path, serve, config, line, words):
    bad = BadRun(tmp_path, serve, config, TENSOR_5x2)
    assert bad.run["embeddings"] == []
    assert bad.run["error"].startswith(f"bad/projector_config.pbtxt line {line}: ")
    assert words in bad.run["error"]


def test_pbtxt_unknown_field_names_the_line_and_the_field(tmp_path, serve):
    config = 'embeddings {\n  tensor_name: "t"\n  tensor_pth: "t.npy"\n}\n'
    bad = BadRun(tmp_path, serve, config, TENSOR_5x2)
    assert bad.run["error"] == ("bad/projector_config.pbtxt line 3: unknown field 'tensor_pth' "
                                "in EmbeddingInfo")


def test_json_config_that_is_not_json_names_the_line(tmp_path, serve):
    config = '{"embeddings": [\n  {"tensorName": "t", "tensorPath": "t.npy",}\n]}\n'
    bad = BadRun(tmp_path, serve, config, TENSOR_5x2, config_name="projector_config.json")
    assert bad.run["error"].startswith("bad/projector_config.json line 2: not valid JSON")


@pytest.mark.parametrize("config_name", ["projector_config.pbtxt", "projector_config.json"])
def test_embedding_with_no_tensor_names_the_field(tmp_path, serve, config_name):
    config = (embedding_config(tensor_name="t") if config_name.endswith("pbtxt")
              else json.dumps({"embeddings": [{"tensorName": "t"}]}))
    bad = BadRun(tmp_path, serve, config, TENSOR_5x2, config_name=config_name)
    error = assert_refused(bad, "tensor", f"bad/{config_name}", "embeddings[0].tensor_path")
    assert "no tensor_path" in error
    assert bad.embedding()["shape"] is None


@pytest.mark.parametrize(("tensor_path", "files"), [
    ("t.npy", TENSOR_5x2),
    ("t.tsv", {"t.tsv": tsv_text(vectors(5, 2))}),
])
def test_tensor_shape_that_disagrees_with_the_file(tmp_path, serve, tensor_path, files):
    config = embedding_config(tensor_name="t", tensor_path=tensor_path, tensor_shape=[6, 2])
    bad = BadRun(tmp_path, serve, config, files)
    error = assert_refused(bad, "tensor", "bad/projector_config.pbtxt",
                           "embeddings[0].tensor_shape", f"bad/{tensor_path}")
    assert "[6, 2]" in error and "[5, 2]" in error


def test_duplicate_tensor_names_flag_the_second_and_keep_the_first(tmp_path, serve):
    first, second = vectors(5, 2, 1), vectors(4, 3, 2)
    config = (embedding_config(tensor_name="t", tensor_path="a.npy")
              + embedding_config(tensor_name="t", tensor_path="b.npy"))
    bad = BadRun(tmp_path, serve, config, {"a.npy": npy_bytes(first), "b.npy": npy_bytes(second)})
    listed = bad.run["embeddings"]
    assert [e["name"] for e in listed] == ["t", "t"]
    assert listed[0]["error"] is None
    duplicate = "bad/projector_config.pbtxt embeddings[1]: duplicate tensor_name 't'"
    assert duplicate in listed[1]["error"]
    assert "embeddings[0]" in listed[1]["error"]
    np.testing.assert_array_equal(bad.tensor("t"), first)


# -- tensors ----------------------------------------------------------------------------------


def tsv_run(tmp_path: Path, serve, text: str | bytes, **fields) -> BadRun:
    config = embedding_config(tensor_name="t", tensor_path="t.tsv", **fields)
    return BadRun(tmp_path, serve, config, {"t.tsv": text})


def test_ragged_tsv_rows_name_the_line(tmp_path, serve):
    bad = tsv_run(tmp_path, serve, "1\t2\t3\n4\t5\t6\n7\t8\n9\t10\t11\n")
    error = assert_refused(bad, "tensor", "bad/t.tsv line 3")
    assert "has 2 values, expected 3" in error


def test_non_numeric_cell_names_the_line_and_column(tmp_path, serve):
    bad = tsv_run(tmp_path, serve, "1\t2\n3\tabc\n5\t6\n")
    error = assert_refused(bad, "tensor", "bad/t.tsv line 2")
    assert "column 2: 'abc' is not a number" in error


@pytest.mark.parametrize("kind", ["npy", "tsv"])
def test_nan_and_inf_are_reported_and_served_as_written(tmp_path, serve, kind):
    matrix = vectors(10, 3)
    matrix[2, 1] = np.nan
    matrix[7, 0] = np.inf
    matrix[8, 2] = -np.inf
    files: Files = ({"t.npy": npy_bytes(matrix)} if kind == "npy"
                    else {"t.tsv": tsv_text(matrix)})
    bad = BadRun(tmp_path, serve, embedding_config(tensor_name="t", tensor_path=f"t.{kind}"),
                 files)
    embedding = bad.embedding()
    assert embedding["error"] is None
    assert f"bad/t.{kind}: 3 rows hold NaN or Inf" in " ".join(embedding["warnings"])
    np.testing.assert_array_equal(bad.tensor(), matrix)


@pytest.mark.parametrize(("name", "content"), [
    ("t.tsv", b""),
    ("t.tsv", b"\n\n  \n"),
    ("t.npy", npy_bytes(np.zeros((0, 3), np.float32))),
])
def test_empty_tensor_file(tmp_path, serve, name, content):
    bad = BadRun(tmp_path, serve, embedding_config(tensor_name="t", tensor_path=name),
                 {name: content})
    error = assert_refused(bad, "tensor", f"bad/{name}")
    assert "empty" in error


def test_single_column_tensor_is_served_with_a_warning(tmp_path, serve):
    column = vectors(6, 1)
    bad = tsv_run(tmp_path, serve, tsv_text(column))
    embedding = bad.embedding()
    assert embedding["error"] is None and embedding["shape"] == [6, 1]
    assert any(w.startswith("bad/t.tsv: has a single column") for w in embedding["warnings"])
    np.testing.assert_array_equal(bad.tensor(), column)


def test_bytes_whose_size_is_not_n_d_4(tmp_path, serve):
    config = embedding_config(tensor_name="t", tensor_path="t.bytes", tensor_shape=[4, 3])
    bad = BadRun(tmp_path, serve, config, {"t.bytes": vectors(4, 3).tobytes()[:-4]})
    error = assert_refused(bad, "tensor", "bad/t.bytes")
    assert "has 44 bytes but tensor_shape [4, 3] needs 48" in error


@pytest.mark.parametrize(("keep", "words"), [
    (20, "reading array header"),
    (-40, "truncated: its header says shape [10, 4] of float32 (160 bytes of data) but only 120 "
          "bytes follow the header"),
], ids=["in-header", "in-data"])
def test_truncated_npy(tmp_path, serve, keep, words):
    bad = BadRun(tmp_path, serve, embedding_config(tensor_name="t", tensor_path="t.npy"),
                 {"t.npy": npy_bytes(vectors(10, 4))[:keep]})
    error = assert_refused(bad, "tensor", "bad/t.npy: is not a valid .npy file")
    assert words in error


class _WritesAFileWhenUnpickled:
    """Unpickling this object would create ``marker``: proof that nothing was unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_object_dtype_npy_is_refused_and_never_unpickled(tmp_path, serve):
    marker = tmp_path / "unpickled"
    payload = np.array([_WritesAFileWhenUnpickled(marker), None], dtype=object)
    bad = BadRun(tmp_path, serve, embedding_config(tensor_name="t", tensor_path="t.npy"),
                 {"t.npy": npy_bytes(payload, allow_pickle=True)})
    error = assert_refused(bad, "tensor", "bad/t.npy")
    assert "pickle" in error
    assert not marker.exists()


def test_gigabyte_long_line_is_refused_without_reading_it_all(tmp_path, serve, monkeypatch):
    """The guard's limit is lowered (same code path) so the test writes 3 MiB, not 300."""
    monkeypatch.setattr(tensor_files, "CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(tensor_files, "MAX_LINE_BYTES", 1024 * 1024)
    long_line = "\t".join(["0.5"] * (3 * 1024 * 1024 // 4))
    bad = tsv_run(tmp_path, serve, f"1\t2\n3\t4\n{long_line}\n5\t6\n")
    error = assert_refused(bad, "tensor", "bad/t.tsv line 3")
    assert "longer than 1 MiB" in error


# -- metadata ---------------------------------------------------------------------------------


def metadata_run(tmp_path: Path, serve, metadata: str | bytes, n: int = 4) -> BadRun:
    config = embedding_config(tensor_name="t", tensor_path="t.npy", metadata_path="m.tsv")
    return BadRun(tmp_path, serve, config, {"t.npy": npy_bytes(vectors(n, 2)), "m.tsv": metadata})


def assert_metadata_refused_tensor_kept(bad: BadRun, *words: str) -> str:
    error = assert_refused(bad, "metadata", "bad/m.tsv", *words)
    assert bad.embedding()["shape"] == [4, 2]
    bad.tensor()
    return error


def test_metadata_one_row_short_explains_the_header_rule(tmp_path, serve):
    """Four data rows, two columns, no header: the first row was read as the header."""
    bad = metadata_run(tmp_path, serve, "a\t1\nb\t2\nc\t3\nd\t4\n")
    error = assert_metadata_refused_tensor_kept(bad, "has 3 data rows but the tensor has 4")
    assert "first line contains a tab, so it was read as a header" in error


def test_metadata_one_row_long_explains_the_header_rule(tmp_path, serve):
    """One column with a header line: a one-column file has no header."""
    bad = metadata_run(tmp_path, serve, "name\na\nb\nc\nd\n")
    error = assert_metadata_refused_tensor_kept(bad, "has 5 data rows but the tensor has 4")
    assert "single-column metadata file has no header" in error


def test_metadata_off_by_more(tmp_path, serve):
    bad = metadata_run(tmp_path, serve, "".join(f"p{i}\n" for i in range(9)))
    error = assert_metadata_refused_tensor_kept(bad, "has 9 data rows but the tensor has 4")
    assert "each point needs exactly one metadata row" in error


def test_metadata_invalid_utf8_names_the_line(tmp_path, serve):
    bad = metadata_run(tmp_path, serve, b"name\tkind\na\tx\nb\t\xff\xfe\nc\tz\nd\tw\n")
    error = assert_metadata_refused_tensor_kept(bad, "bad/m.tsv line 3")
    assert "not valid UTF-8" in error


def test_metadata_reserved_column_name(tmp_path, serve):
    bad = metadata_run(tmp_path, serve, "name\t__index__\n" + "".join(f"p{i}\t{i}\n"
                                                                      for i in range(4)))
    error = assert_metadata_refused_tensor_kept(bad, "bad/m.tsv line 1")
    assert "'__index__' is reserved" in error


def test_metadata_column_numeric_but_one_cell_is_text_with_a_warning(tmp_path, serve):
    rows = [f"p{i}\t{i * 1.5}" for i in range(4)]
    rows[2] = "p2\tn/a"
    bad = metadata_run(tmp_path, serve, "name\tsize\n" + "\n".join(rows) + "\n")
    embedding = bad.embedding()
    assert embedding["error"] is None
    assert embedding["metadata_columns"] == ["name", "size"]
    assert ("bad/m.tsv line 4: column 'size' is numeric except for 'n/a', so it is treated as "
            "text") in embedding["warnings"]
    assert bad.get("metadata").text.splitlines()[3] == "p2\tn/a"


# -- sprites ----------------------------------------------------------------------------------


def sprite_run(tmp_path: Path, serve, image: bytes, n: int = 9, dim: list[int] | None = None
               ) -> BadRun:
    config = ('embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy"\n  sprite {\n'
              '    image_path: "s.png"\n'
              + "".join(f"    single_image_dim: {v}\n" for v in (dim if dim is not None
                                                                  else [8, 8]))
              + "  }\n}\n")
    return BadRun(tmp_path, serve, config, {"t.npy": npy_bytes(vectors(n, 2)), "s.png": image})


def assert_sprite_refused_rest_kept(bad: BadRun, *words: str) -> str:
    error = assert_refused(bad, "sprite", *words)
    assert bad.embedding()["sprite"] is None
    bad.tensor()
    return error


def test_sprite_smaller_than_the_grid_needs(tmp_path, serve):
    bad = sprite_run(tmp_path, serve, png_bytes(16, 24))
    error = assert_sprite_refused_rest_kept(bad, "bad/s.png")
    assert "is 16x24 px but 9 thumbnails of 8x8 in a 3-column grid need at least 24x24" in error


@pytest.mark.parametrize("image", [b"not an image at all", png_bytes(24, 24)[:60]],
                         ids=["garbage", "truncated-png"])
def test_corrupt_sprite(tmp_path, serve, image):
    bad = sprite_run(tmp_path, serve, image)
    error = assert_sprite_refused_rest_kept(bad, "bad/s.png")
    assert "not a readable image" in error


def test_sprite_above_8192_px_is_served_with_a_warning(tmp_path, serve):
    """Four 4100x1 thumbnails in a 2x2 grid: an 8200 px wide image, tiny on disk."""
    image = png_bytes(8200, 2, mode="L")
    bad = sprite_run(tmp_path, serve, image, n=4, dim=[4100, 1])
    embedding = bad.embedding()
    assert embedding["error"] is None
    assert embedding["sprite"] == {"single_image_dim": [4100, 1]}
    assert any(w.startswith("bad/s.png: sprite is 8200x2 px, above TensorBoard's 8192 px")
               for w in embedding["warnings"])
    response = bad.get("sprite")
    assert response.status_code == 200 and response.content == image


@pytest.mark.parametrize("dim", [[], [8]], ids=["missing", "one-value"])
def test_sprite_without_single_image_dim_names_the_config_field(tmp_path, serve, dim):
    bad = sprite_run(tmp_path, serve, png_bytes(24, 24), dim=dim)
    error = assert_sprite_refused_rest_kept(bad, "bad/projector_config.pbtxt",
                                            "embeddings[0].sprite.single_image_dim")
    assert "needs single_image_dim [width, height]" in error


# -- bookmarks --------------------------------------------------------------------------------


def bookmarks_run(tmp_path: Path, serve, bookmarks: str) -> BadRun:
    config = embedding_config(tensor_name="t", tensor_path="t.npy", bookmarks_path="b.json")
    return BadRun(tmp_path, serve, config, {"t.npy": npy_bytes(vectors(5, 2)),
                                            "b.json": bookmarks})


def test_bookmarks_invalid_json_names_the_line(tmp_path, serve):
    bad = bookmarks_run(tmp_path, serve, '[\n  {"label": "a"},\n  {"label": }\n]\n')
    error = assert_refused(bad, "bookmarks", "bad/b.json line 3")
    assert "not valid JSON" in error
    bad.tensor()


def test_bookmarks_for_another_data_set_size_are_refused_with_the_reason(tmp_path, serve):
    states = [{"label": "fits", "dataSetDimensions": [5, 2]},
              {"label": "other", "dataSetDimensions": [1797, 64]}]
    bad = bookmarks_run(tmp_path, serve, json.dumps(states))
    error = assert_refused(bad, "bookmarks", "bad/b.json", "field '[1].dataSetDimensions'")
    assert "saved for a data set of [1797, 64], this embedding is [5, 2]" in error
    assert bad.embedding()["has_bookmarks"] is True
    bad.tensor()


# -- requests (the compute API of issue 3) ----------------------------------------------------


def needs(module: str) -> None:
    pytest.importorskip(module, reason=f"{module} (compute API, issue 3) does not exist yet")


N_POINTS, DIMS = 12, 4


@pytest.fixture
def compute_url(tmp_path, serve) -> str:
    """A run ``r`` / embedding ``e`` of 12 x 4 with two NaN/Inf rows and metadata."""
    matrix = vectors(N_POINTS, DIMS)
    matrix[3, 0] = np.nan
    matrix[9, 2] = np.inf
    config = embedding_config(tensor_name="e", tensor_path="e.npy", metadata_path="m.tsv")
    write_pbtxt_run(tmp_path / "logs" / "r", config, {
        "e.npy": npy_bytes(matrix),
        "m.tsv": "name\tgroup\n" + "".join(f"p{i}\t{i % 3}\n" for i in range(N_POINTS))})
    return serve(tmp_path / "logs", max_body_bytes=64 * 1024)


def neighbors(url: str, **params: object) -> httpx.Response:
    query = {"run": "r", "embedding": "e", "index": 0, "k": 3, "metric": "cosine", **params}
    return httpx.get(f"{url}/api/neighbors", params=query, timeout=30)


def assert_error(response: httpx.Response, status: int, *words: str) -> None:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str)
    assert all(word in detail for word in words), (words, detail)


@pytest.mark.parametrize(("params", "word"), [
    ({"run": "nope"}, "nope"),
    ({"embedding": "nope"}, "nope"),
])
def test_neighbors_of_unknown_run_or_embedding_is_404(compute_url, params, word):
    needs("server.routes.neighbors")
    assert_error(neighbors(compute_url, **params), 404, word)


@pytest.mark.parametrize(("params", "word"), [
    ({"index": N_POINTS}, "index"),
    ({"index": -1}, "index"),
    ({"k": 0}, "k"),
    ({"k": -2}, "k"),
    ({"k": N_POINTS}, "k"),
    ({"k": N_POINTS + 50}, "k"),
    ({"metric": "manhattan"}, "metric"),
])
def test_neighbors_bad_parameters_are_422_naming_the_parameter(compute_url, params, word):
    needs("server.routes.neighbors")
    assert_error(neighbors(compute_url, **params), 422, word)
    assert neighbors(compute_url).status_code == 200


def test_nan_rows_are_never_neighbours(compute_url):
    needs("server.routes.neighbors")
    for index in (0, 5):
        response = neighbors(compute_url, index=index, k=N_POINTS - 1, metric="euclidean")
        assert response.status_code == 200, response.text
        found = [n["index"] for n in response.json()["neighbors"]]
        assert 3 not in found and 9 not in found and index not in found


@pytest.mark.parametrize("length", [DIMS - 1, DIMS + 1, 0])
def test_neighbors_of_a_vector_of_the_wrong_length_is_422(compute_url, length):
    needs("server.routes.neighbors")
    body = {"run": "r", "embedding": "e", "vector": [0.5] * length, "k": 3, "metric": "cosine"}
    assert_error(httpx.post(f"{compute_url}/api/neighbors", json=body), 422, "vector")
    body["vector"] = [0.5] * DIMS
    assert httpx.post(f"{compute_url}/api/neighbors", json=body).status_code == 200


def test_search_with_a_bad_regex_is_422(compute_url):
    needs("server.routes.neighbors")
    params = {"run": "r", "embedding": "e", "column": "name", "query": "p(1", "regex": "true"}
    assert_error(httpx.get(f"{compute_url}/api/search", params=params), 422)


def test_projection_with_an_unknown_method_is_422(compute_url):
    needs("server.routes.projections")
    body = {"run": "r", "embedding": "e", "method": "isomap", "dims": 2, "params": {}}
    assert_error(httpx.post(f"{compute_url}/api/projections", json=body), 422, "method")


def test_projection_of_an_unknown_embedding_is_404(compute_url):
    needs("server.routes.projections")
    body = {"run": "r", "embedding": "nope", "method": "pca", "dims": 2, "params": {}}
    assert_error(httpx.post(f"{compute_url}/api/projections", json=body), 404, "nope")


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/api/jobs/no-such-job"),
    ("GET", "/api/jobs/no-such-job/result"),
    ("DELETE", "/api/jobs/no-such-job"),
])
def test_unknown_job_id_is_404(compute_url, method, path):
    needs("server.routes.jobs")
    assert_error(httpx.request(method, f"{compute_url}{path}"), 404, "no-such-job")


def test_huge_declared_body_is_413_before_it_is_read(compute_url):
    """The limit applies to the declared Content-Length, so the body is never buffered."""
    body = json.dumps({"run": "r", "embedding": "e", "vector": [0.25] * 40_000, "k": 3})
    response = httpx.post(f"{compute_url}/api/neighbors", content=body,
                          headers={"content-type": "application/json"})
    assert_error(response, 413, "larger than 65536 bytes")
    assert get(compute_url, "health").status_code == 200


def test_huge_streamed_body_is_413(compute_url):
    """No Content-Length (chunked upload): the limit is enforced while the body streams in."""
    needs("server.routes.neighbors")

    def chunks():
        yield b'{"run": "r", "embedding": "e", "k": 3, "vector": [0.25'
        for _ in range(20_000):
            yield b", 0.25"
        yield b"]}"

    response = httpx.post(f"{compute_url}/api/neighbors", content=chunks(),
                          headers={"content-type": "application/json"})
    assert_error(response, 413, "larger than 65536 bytes")
    assert get(compute_url, "health").status_code == 200
