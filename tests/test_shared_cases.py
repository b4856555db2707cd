"""The server's half of the shared table of cases (``tests/cases/*.json``).

The browser computes locally what the server also computes (search, neighbours, PCA and the
custom projection for uploads, metadata parsing, sequence links). Both sides read the same
table: ``frontend/tests/shared_cases.test.js`` runs it against the browser modules, this file
against the kernels and, where the behaviour is a route's, the REST API under real uvicorn.
"""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path

import httpx
import numpy as np
import pytest

from projector_core.errors import DataError
from projector_core.export.coloring import colour_order
from projector_core.formats.metadata import parse_metadata
from projector_core.formats.npy_files import read_npy
from projector_core.formats.tensor_files import read_tsv
from projector_core.kernels.custom import custom_projection
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.pca import pca
from projector_core.kernels.search import search
from tests.builders import write_tsv

CASES = Path(__file__).parent / "cases"
TOLERANCE = 1e-4


def table(name: str) -> dict:
    return json.loads((CASES / f"{name}.json").read_text("utf-8"))


SEARCH, NEIGHBORS, PCA, CUSTOM, METADATA, SEQUENCES, TENSORS, NPY, COLOURS = (
    table(name) for name in ("search", "neighbors", "pca", "custom", "metadata", "sequences",
                             "tensors", "npy", "colours"))


def named(cases: list[dict]) -> dict:
    return {"argvalues": cases, "ids": [case["name"] for case in cases]}


def as_float(cell: float | str | None) -> float:
    """A JSON cell as a float: "nan", "inf", "-inf" stand for those, null for a missing number."""
    return math.nan if cell is None else float(cell)


def as_matrix(rows: list[list]) -> np.ndarray:
    return np.array([[as_float(cell) for cell in row] for row in rows], np.float32)


def assert_close(actual: float, expected: float | str | None, where: str, eps: float = TOLERANCE) -> None:
    want = as_float(expected)
    if math.isnan(want):
        assert math.isnan(actual), f"{where}: {actual} is not NaN"
    elif math.isinf(want):
        assert actual == want, where
    else:
        assert abs(actual - want) <= eps, f"{where}: {actual} != {want}"


def write_embeddings(logdir: Path, embeddings: dict[str, tuple[np.ndarray, str | None]]) -> None:
    """A standalone projector config (run "."): one TSV tensor, and metadata text if given, each."""
    entries = []
    for i, (name, (matrix, metadata)) in enumerate(embeddings.items()):
        write_tsv(logdir / f"t{i}.tsv", matrix)
        entry = {"tensorName": name, "tensorShape": list(matrix.shape), "tensorPath": f"t{i}.tsv"}
        if metadata is not None:
            (logdir / f"m{i}.tsv").write_bytes(metadata.encode())
            entry["metadataPath"] = f"m{i}.tsv"
        entries.append(entry)
    (logdir / "projector_config.json").write_text(json.dumps({"embeddings": entries}))


def test_every_file_of_the_table_is_read_by_this_test() -> None:
    assert sorted(p.name for p in CASES.glob("*.json")) == [
        "colours.json", "custom.json", "metadata.json", "neighbors.json", "npy.json", "pca.json",
        "search.json", "sequences.json", "tensors.json"]


# --- search --------------------------------------------------------------------------------

@pytest.mark.parametrize("case", **named(SEARCH["cases"]))
def test_search_kernel(case: dict) -> None:
    if case.get("error"):
        with pytest.raises(ValueError, match="invalid regular expression"):
            search(SEARCH["values"], case["query"], case["regex"])
    else:
        assert search(SEARCH["values"], case["query"], case["regex"]) == case["expected"]


def test_search_route(tmp_path: Path, serve) -> None:
    values = SEARCH["values"]
    metadata = "value\tpad\n" + "".join(f"{v}\tp\n" for v in values)
    write_embeddings(tmp_path / "logs", {"words": (np.zeros((len(values), 1)), metadata)})
    url = serve(tmp_path / "logs")
    for case in SEARCH["cases"]:
        params = {"run": ".", "embedding": "words", "column": "value", "query": case["query"],
                  "regex": str(case["regex"]).lower()}
        answer = httpx.get(f"{url}/api/search", params=params)
        if case.get("error"):
            assert answer.status_code == 422, case["name"]
            assert "invalid regular expression" in answer.json()["detail"], case["name"]
        else:
            assert answer.status_code == 200, (case["name"], answer.text)
            assert answer.json()["indices"] == case["expected"], case["name"]


# --- nearest neighbours ----------------------------------------------------------------------

def assert_neighbors(indices: list[int], distances: list[float], case: dict) -> None:
    assert indices == [e["index"] for e in case["expected"]], case["name"]
    for got, want in zip(distances, case["expected"], strict=True):
        assert got >= 0, case["name"]
        assert_close(got, want["distance"], case["name"], 1e-6)


@pytest.mark.parametrize("case", **named(NEIGHBORS["cases"]))
def test_neighbors_kernel(case: dict) -> None:
    data = as_matrix(case["data"])
    index = ExactIndex(data)
    if "error" in case:
        if case["error"] != "k":  # the kernel clamps k; refusing it is the route's rule (below)
            with pytest.raises(ValueError, match=case["error"]):
                index.neighbors_of([case["index"]], case["k"], case["metric"])
        return
    found, distances = index.neighbors_of([case["index"]], case["k"], case["metric"])
    assert_neighbors(found[0].tolist(), distances[0].tolist(), case)


def test_neighbors_route(tmp_path: Path, serve) -> None:
    cases = NEIGHBORS["cases"]
    matrices = {f"case{i}": (as_matrix(c["data"]), None) for i, c in enumerate(cases)}
    write_embeddings(tmp_path / "logs", matrices)
    url = serve(tmp_path / "logs")
    for i, case in enumerate(cases):
        params = {"run": ".", "embedding": f"case{i}", "index": case["index"], "k": case["k"],
                  "metric": case["metric"]}
        answer = httpx.get(f"{url}/api/neighbors", params=params)
        if "error" in case:
            assert answer.status_code == 422, (case["name"], answer.text)
            assert case["error"] in answer.text, (case["name"], answer.text)
            continue
        assert answer.status_code == 200, (case["name"], answer.text)
        found = answer.json()["neighbors"]
        assert_neighbors([e["index"] for e in found], [e["distance"] for e in found], case)


# --- PCA and the custom projection -------------------------------------------------------------

@pytest.mark.parametrize("case", **named(PCA["cases"]))
def test_pca_kernel(case: dict) -> None:
    data = as_matrix(case["data"])
    if "error" in case:
        with pytest.raises(ValueError, match=case["error"]):
            pca(data, case["k"], case["spherize"])
        return
    result = pca(data, case["k"], case["spherize"])
    assert result.coordinates.shape == (data.shape[0], len(case["ratios"]))
    for j, ratio in enumerate(case["ratios"]):
        assert_close(result.explained_variance_ratio[j], ratio, f"ratio {j}")
    for i, row in enumerate(case["coords"]):
        for j, value in enumerate(row):
            assert_close(float(result.coordinates[i, j]), value, f"row {i} component {j}")


@pytest.mark.parametrize("case", **named(CUSTOM["cases"]))
def test_custom_projection_kernel(case: dict) -> None:
    data = as_matrix(case["data"])
    sides = {side: case[side] for side in ("left", "right", "up", "down")}

    def run():
        return custom_projection(data, case["values"], **sides, regex=case["regex"],
                                 seed=case.get("seed", 0))

    if "error" in case:
        with pytest.raises(ValueError, match=case["error"]):
            run()
        return
    result = run()
    assert result.matches == case["matches"]
    for i, row in enumerate(case["coords"]):
        for a, value in enumerate(row):
            assert_close(float(result.coordinates[i, a]), value, f"row {i} axis {a}")


# --- metadata ----------------------------------------------------------------------------------

def assert_metadata(text: str, case: dict) -> None:
    metadata = parse_metadata(text.encode(), "m.tsv", None)
    assert metadata.names == case["names"]
    assert [metadata.column(name) for name in metadata.names] == case["columns"]
    for name in metadata.names:
        numbers, want = metadata.numeric(name), case["numeric"][name]
        if want is None:
            assert numbers is None, f"column {name} should be text"
            continue
        assert numbers is not None, f"column {name} should be numeric"
        for i, value in enumerate(want):
            assert_close(float(numbers[i]), value, f"{name}[{i}]", 0)


@pytest.mark.parametrize("case", **named(METADATA["cases"]))
def test_metadata_parsing(case: dict) -> None:
    if "error" in case:
        with pytest.raises(DataError, match=case["error"]):
            parse_metadata(case["text"].encode(), "m.tsv", None)
        return
    assert_metadata(case["text"], case)


def test_metadata_route_serves_the_text_the_browser_reads(tmp_path: Path, serve) -> None:
    served = [c for c in METADATA["cases"] if "served" in c]
    write_embeddings(tmp_path / "logs", {
        f"case{i}": (np.zeros((len(c["columns"][0]), 1)), c["text"]) for i, c in enumerate(served)})
    url = serve(tmp_path / "logs")
    for i, case in enumerate(served):
        answer = httpx.get(f"{url}/api/metadata", params={"run": ".", "embedding": f"case{i}"})
        assert answer.status_code == 200, (case["name"], answer.text)
        assert answer.text == case["served"], case["name"]


@pytest.mark.parametrize(("cell", "value"), METADATA["cells"], ids=[repr(c) for c, _ in METADATA["cells"]])
def test_metadata_number_cells(cell: str, value: float | str | None) -> None:
    numbers = parse_metadata(f"x\ty\n{cell}\t1\n".encode(), "m.tsv", None).numeric("x")
    if value is None:
        assert numbers is None
    else:
        assert numbers is not None
        assert_close(float(numbers[0]), value, repr(cell), 0)


# --- sequences ---------------------------------------------------------------------------------

_SEQUENCE_WARNING = re.compile(r"line (\d+): column '__next__' .*; (\d+) such cells?")


@pytest.mark.parametrize("case", **named(SEQUENCES["cases"]))
def test_sequence_warning(case: dict) -> None:
    cells = case["cells"]
    text = "word\t__next__\n" + "".join(f"w{i}\t{cell}\n" for i, cell in enumerate(cells))
    warnings = [w for w in parse_metadata(text.encode(), "m.tsv", len(cells)).warnings if "__next__" in w]
    if case["bad"] == 0:
        assert warnings == []
        return
    assert len(warnings) == 1
    line, count = map(int, _SEQUENCE_WARNING.search(warnings[0]).groups())
    assert (line - 2, count) == (case["first_bad_row"], case["bad"])


# --- tensor TSV ----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", **named(TENSORS["cases"]))
def test_tensor_tsv(case: dict, tmp_path: Path) -> None:
    path = tmp_path / "t.tsv"
    path.write_bytes(case["text"].encode())
    if "error" in case:
        with pytest.raises(DataError, match=case["error"]):
            read_tsv(path, "t.tsv")
        return
    rows = read_tsv(path, "t.tsv")
    assert rows.shape == (len(case["rows"]), len(case["rows"][0]))
    for got, want in zip(rows.ravel().tolist(), [v for row in case["rows"] for v in row], strict=True):
        assert_close(got, want, case["name"], 0)


@pytest.mark.parametrize("case", **named(NPY["cases"]))
def test_npy(case: dict, tmp_path: Path) -> None:
    path = tmp_path / "t.npy"
    path.write_bytes(base64.b64decode(case["npy"]))
    if "error" in case:
        with pytest.raises(DataError, match=f"(?i){case['error']}"):
            read_npy(path, "t.npy")
        return
    rows = np.asarray(read_npy(path, "t.npy"))
    assert rows.shape == (len(case["rows"]), len(case["rows"][0]))
    for got, want in zip(rows.ravel().tolist(), [v for row in case["rows"] for v in row], strict=True):
        assert_close(got, want, case["name"], 0)


@pytest.mark.parametrize("case", **named(COLOURS["cases"]))
def test_colour_order(case: dict) -> None:
    counts: dict[str, int] = {}
    for value in case["values"]:
        if value:
            counts[value] = counts.get(value, 0) + 1
    assert [value for value, _ in colour_order(counts)] == case["order"]
