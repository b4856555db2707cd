"""The MCP server (``projector mcp LOGDIR``) driven by the official SDK's client over stdio."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import anyio
import numpy as np
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from sklearn.decomposition import PCA
from sklearn.manifold import trustworthiness
from sklearn.neighbors import NearestNeighbors

ROOT = Path(__file__).resolve().parent.parent


def _server(logdir: Path, cache: Path) -> StdioServerParameters:
    env = {"PYTHONPATH": str(ROOT), "PROJECTOR_CACHE_DIR": str(cache), "PATH": os.environ["PATH"]}
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "projector.server.cli", "mcp", str(logdir)],
                                 env=env, cwd=str(ROOT))


def _payload(result) -> object:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        content = result.structured_content
        return content.get("result", content) if set(content) == {"result"} else content
    return json.loads(result.content[0].text)


@pytest.mark.slow
def test_an_assistant_asks_what_is_near_blue_and_projects(sample_logdir, tmp_path):
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    async def session_run() -> None:
        async with stdio_client(_server(sample_logdir, tmp_path / "cache")) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            assert {"list_runs", "metadata", "search", "neighbors", "project", "clusters"} <= names

            runs = _payload(await session.call_tool("list_runs", {}))
            words = next(r for r in runs if r["run"] == "words")["embeddings"][0]
            assert words["label_column"] == "word" and words["shape"][0] == 4000

            near = _payload(await session.call_tool("neighbors", {
                "run": "words", "embedding": words["name"], "query": "blue", "k": 10}))
            assert [p["word"] for p in near["of"]] == ["blue"]
            neighbours = near["neighbors"]
            assert len(neighbours) == 10 and "blue" not in [p["word"] for p in neighbours]
            assert sum(p["category"] == "colour" for p in neighbours) >= 5, neighbours

            unknown = await session.call_tool("neighbors", {"run": "words", "embedding": words["name"],
                                                            "query": "zzzzqq"})
            assert unknown.is_error and "zzzzqq" in unknown.content[0].text

            projected = _payload(await session.call_tool("project", {
                "run": "iris", "embedding": "iris",
                "method": "tsne", "params": {"perplexity": 10, "n_iter": 300}},
                progress_callback=on_progress))
            assert projected["info"]["method"] == "tsne" and len(projected["coordinates"]) == 150
            assert progress and progress[-1] == 1.0

            groups = _payload(await session.call_tool("clusters", {"run": "iris", "embedding": "iris",
                                                                   "k": 3}))
            assert sorted(g["size"] for g in groups)[-1] <= 100 and sum(g["size"] for g in groups) == 150
            species = {g["common_values"]["species"][0][0] for g in groups}
            assert len(species) == 3, "three clusters, one per species"

    anyio.run(session_run)


def _iris(sample_logdir: Path) -> tuple[np.ndarray, list[dict[str, str]]]:
    """The iris tensor as written (float32, as served) and its metadata rows, read here."""
    vectors = np.loadtxt(sample_logdir / "iris" / "tensors.tsv", delimiter="\t", dtype=np.float32)
    lines = (sample_logdir / "iris" / "metadata.tsv").read_text().splitlines()
    names = lines[0].split("\t")
    return vectors, [dict(zip(names, line.split("\t"), strict=True)) for line in lines[1:]]


@pytest.mark.slow
def test_metadata_search_neighbours_by_index_and_pca_umap_projections(sample_logdir, tmp_path):
    vectors, rows = _iris(sample_logdir)
    iris = {"run": "iris", "embedding": "iris"}

    async def session_run() -> None:
        async with stdio_client(_server(sample_logdir, tmp_path / "cache")) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            picked = _payload(await session.call_tool("metadata", {**iris, "indices": [0, 50, 149]}))
            assert picked == [{"index": i, **rows[i]} for i in (0, 50, 149)]
            first = _payload(await session.call_tool("metadata", {**iris, "limit": 3}))
            assert first == [{"index": i, **rows[i]} for i in range(3)]

            found = _payload(await session.call_tool("search", {**iris, "query": "versicolor",
                                                                "column": "species"}))
            expected = [i for i, row in enumerate(rows) if row["species"] == "versicolor"]
            assert found["count"] == len(expected) == 50
            assert [p["index"] for p in found["points"]] == expected
            regex = _payload(await session.call_tool("search", {
                **iris, "query": "^vir", "column": "species", "regex": True, "limit": 5}))
            virginica = [i for i, row in enumerate(rows) if re.match("^vir", row["species"])]
            assert regex["count"] == len(virginica)
            assert [p["index"] for p in regex["points"]] == virginica[:5]

            near = _payload(await session.call_tool("neighbors", {
                **iris, "index": 7, "k": 6, "metric": "euclidean"}))
            distances, indices = NearestNeighbors(n_neighbors=7).fit(vectors).kneighbors(vectors[[7]])
            keep = indices[0] != 7
            assert near["of"] == [{"index": 7, **rows[7]}]
            # The k smallest distances, scikit-learn's; each at the point it names (iris has
            # tied distances, so which of equally near points comes first is not fixed).
            got = [p["index"] for p in near["neighbors"]]
            reported = [p["distance"] for p in near["neighbors"]]
            np.testing.assert_allclose(reported, distances[0][keep], atol=1e-5)
            np.testing.assert_allclose(np.linalg.norm(vectors[got] - vectors[7], axis=1),
                                       reported, atol=1e-5)
            assert 7 not in got and len(set(got)) == 6
            assert set(got) >= {int(i) for i, d in zip(indices[0][keep], distances[0][keep],
                                                        strict=True) if d < reported[-1] - 1e-5}

            pca = _payload(await session.call_tool("project", {**iris, "method": "pca"}))
            ours = np.array(pca["coordinates"])[:, :2]
            reference = PCA(2).fit_transform(vectors.astype(np.float64))
            np.testing.assert_allclose(ours * np.sign((ours * reference).sum(axis=0)), reference,
                                       atol=2e-4)
            umap = _payload(await session.call_tool("project", {
                **iris, "method": "umap", "params": {"n_epochs": 100, "seed": 1}}))
            assert umap["info"]["method"] == "umap"
            picture = np.array(umap["coordinates"])
            assert picture.shape == (150, 2)
            assert trustworthiness(vectors, picture, n_neighbors=10) >= 0.9

    anyio.run(session_run)
