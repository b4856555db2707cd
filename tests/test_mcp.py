"""The MCP server (``projector mcp LOGDIR``) driven by the official SDK's client over stdio."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx
import numpy as np
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import InitializeResult
from sklearn.decomposition import PCA
from sklearn.manifold import trustworthiness
from sklearn.neighbors import NearestNeighbors

ROOT = Path(__file__).resolve().parent.parent


def _env(cache: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT), "PROJECTOR_CACHE_DIR": str(cache), "PATH": os.environ["PATH"],
            "PROJECTOR_ANNOTATIONS": os.environ["PROJECTOR_ANNOTATIONS"]}  # conftest's store


def _server(logdir: Path | None, cache: Path, *options: str) -> StdioServerParameters:
    """``projector mcp [LOGDIR] [options]`` as an assistant starts it."""
    where = [str(logdir)] if logdir is not None else []
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "projector.server.cli", "mcp", *where, *options],
                                 env=_env(cache), cwd=str(ROOT))


def _payload(result) -> object:
    """The answer: one compact JSON text, and nothing beside it."""
    assert not result.is_error, result.content
    assert result.structured_content is None and len(result.content) == 1
    text = result.content[0].text
    value = json.loads(text)
    assert text == json.dumps(value, separators=(",", ":"), ensure_ascii=False), "compact JSON"
    return value


def _error(result) -> str:
    assert result.is_error
    return result.content[0].text


def _session(logdir: Path | None, cache: Path,
             body: Callable[[ClientSession], Awaitable[None]], *options: str) -> InitializeResult:
    """Runs ``body`` in a session with ``projector mcp [LOGDIR] [options]``; what the server
    said of itself when the session began."""
    began: list[InitializeResult] = []

    async def run() -> None:
        async with stdio_client(_server(logdir, cache, *options)) as (read, write), \
                ClientSession(read, write) as session:
            began.append(await session.initialize())
            await body(session)

    anyio.run(run)
    return began[0]


@pytest.mark.slow
def test_an_assistant_asks_what_is_near_blue_and_projects(sample_logdir, tmp_path):
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    async def body(session: ClientSession) -> None:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"list_runs", "metadata", "search", "neighbors", "project", "clusters",
                "quality", "compare"} <= names

        runs = _payload(await session.call_tool("list_runs", {}))
        words = next(r for r in runs if r["run"] == "words")["embeddings"][0]
        assert words["label_column"] == "word" and words["shape"][0] == 4000
        assert words["status"] == "ready"

        near = _payload(await session.call_tool("neighbors", {
            "run": "words", "embedding": words["name"], "query": "blue", "k": 10}))
        assert [p["word"] for p in near["of"]] == ["blue"]
        neighbours = near["neighbors"]
        assert len(neighbours) == 10 and "blue" not in [p["word"] for p in neighbours]
        assert sum(p["category"] == "colour" for p in neighbours) >= 5, neighbours

        unknown = await session.call_tool("neighbors", {"run": "words", "embedding": words["name"],
                                                        "query": "zzzzqq"})
        assert "zzzzqq" in _error(unknown)

        projected = _payload(await session.call_tool("project", {
            "run": "iris", "embedding": "iris",
            "method": "tsne", "params": {"perplexity": 10, "n_iter": 300}},
            progress_callback=on_progress))
        assert projected["info"]["method"] == "tsne" and len(projected["coordinates"]) == 150
        assert progress and progress[-1] == 1.0

        groups = _payload(await session.call_tool("clusters", {"run": "iris", "embedding": "iris",
                                                               "job": projected["job"]}))
        top = [c for c in groups["clusters"] if c["parent"] is None]
        assert groups["rows"] == 150 and "assignment" not in groups and len(top) >= 2
        assert sum(c["size"] for c in top) <= 150
        assert any(c["label"] == "setosa (100%)" for c in top), "named by the label column"

    _session(sample_logdir, tmp_path / "cache", body)


@pytest.mark.slow
def test_mcp_clusters_are_the_rest_clusters_of_the_same_projection(sample_logdir, tmp_path,
                                                                    serve):
    """The Structure panel and an assistant name the same groups: HDBSCAN, same labels,
    same hierarchy, for the same request."""
    base = serve(sample_logdir)
    request = {"run": "digits", "embedding": "digits", "method": "umap", "dims": 2,
               "params": {"n_neighbors": 10, "n_epochs": 50, "seed": 3}}
    done = httpx.post(f"{base}/api/projections", params={"wait": "true"}, json=request,
                      timeout=300)
    job = done.headers["x-job"]
    rest = httpx.get(f"{base}/api/jobs/{job}/clusters",
                     params={"label_column": "label", "min_cluster_size": 30}, timeout=120).json()
    answers: dict[str, object] = {}

    async def body(session: ClientSession) -> None:
        answers["project"] = _payload(await session.call_tool("project", {
            **request, "max_points": 0}))
        answers["mcp"] = _payload(await session.call_tool("clusters", {
            **request, "label_column": "label", "min_cluster_size": 30, "max_points": 1797}))
        answers["default"] = _payload(await session.call_tool("clusters", {
            **request, "min_cluster_size": 30}))

    _session(sample_logdir, tmp_path / "cache", body)  # the server's cache directory
    projected = answers["project"]
    assert isinstance(projected, dict)
    assert projected["info"] == done.json()["info"], "the same result, from the result cache"
    mcp = answers["mcp"]
    assert isinstance(mcp, dict) and mcp.pop("job") and mcp.pop("rows") == 1797
    assert mcp == rest, "every point's cluster, asked for"
    assert len([c for c in rest["clusters"] if c["parent"] is None]) >= 5
    default = answers["default"]
    assert isinstance(default, dict) and default["clusters"] == rest["clusters"], \
        "by default the clusters are named by the label column the page picks"


@pytest.mark.slow
def test_answers_are_sized_and_every_failure_says_what_is_wrong(sample_logdir, tmp_path):
    async def body(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        project = tools["project"].input_schema
        assert project["properties"]["max_points"]["maximum"] == 5000
        assert "perplexity" in json.dumps(project["properties"]["params"]), "typed params"
        assert tools["neighbors"].input_schema["properties"]["k"]["maximum"] == 1000
        assert tools["search"].input_schema["properties"]["limit"]["maximum"] == 5000

        runs = _payload(await session.call_tool("list_runs", {}))
        digits = next(r for r in runs if r["run"] == "digits")["embeddings"][0]
        assert digits["label_column"] == "label"
        sevens = _payload(await session.call_tool("search", {
            "run": "digits", "embedding": "digits", "query": "7", "limit": 3}))
        assert sevens["column"] == "label" and sevens["count"] == 179
        assert [p["label"] for p in sevens["points"]] == [7] * 3, "numbers as numbers"

        pca = await session.call_tool("project", {"run": "digits", "embedding": "digits",
                                                  "method": "pca", "max_points": 100})
        assert len(pca.content[0].text) < 12_000, "not 285 KB of indented text"
        assert len(_payload(pca)["coordinates"]) == 100 and _payload(pca)["rows"] == 1797

        past = await session.call_tool("metadata", {"run": "iris", "embedding": "iris",
                                                    "indices": [3, 150]})
        assert _error(past).endswith("index 150 out of range: iris/iris has 150 points (0..149)")
        far = await session.call_tool("neighbors", {"run": "iris", "embedding": "iris",
                                                    "index": 500})
        assert "index 500 out of range: iris/iris has 150 points" in _error(far)
        many = await session.call_tool("neighbors", {"run": "iris", "embedding": "iris",
                                                     "index": 0, "k": 150})
        assert "k 150 is more than the 149 other points" in _error(many), "the REST k limit"
        bad = await session.call_tool("project", {"run": "iris", "embedding": "iris",
                                                  "method": "tsne",
                                                  "params": {"perplexity": 100}})
        assert "perplexity 100 is too large for 150 points" in _error(bad)
        wide = await session.call_tool("project", {"run": "iris", "embedding": "iris",
                                                   "method": "umap",
                                                   "params": {"n_neighbors": 5000}})
        assert _error(wide).endswith("umap.params.n_neighbors: Input should be less than or "
                                     "equal to 200"), "named once, by the method's own model"
        nowhere = await session.call_tool("metadata", {"run": "nope", "embedding": "x"})
        assert "unknown run 'nope' (runs: digits, iris" in _error(nowhere), "the service's sentence"

    _session(sample_logdir, tmp_path / "cache", body)


def _iris(sample_logdir: Path) -> tuple[np.ndarray, list[dict[str, object]]]:
    """The iris tensor as written (float32, as served) and its metadata rows, read here
    (the measurements as numbers)."""
    vectors = np.loadtxt(sample_logdir / "iris" / "tensors.tsv", delimiter="\t", dtype=np.float32)
    lines = (sample_logdir / "iris" / "metadata.tsv").read_text().splitlines()
    names = lines[0].split("\t")
    return vectors, [{name: value if name == "species" else float(value)
                      for name, value in zip(names, line.split("\t"), strict=True)}
                     for line in lines[1:]]


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


@pytest.mark.slow
def test_a_job_alone_names_its_data_and_what_is_not_its_own_is_refused(sample_logdir,
                                                                        tmp_path):
    """clusters and quality take a job alone (as project says to ask them); a run or
    embedding that is not the job's is refused in one sentence, not answered under the wrong
    name; a UMAP's progress is the UMAP's; clusters are a summary unless rows are asked;
    an argument a tool does not have, or a dims it cannot give, is refused by name."""
    messages: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    answers: dict[str, object] = {}

    async def body(session: ClientSession) -> None:
        iris = {"run": "iris", "embedding": "iris"}
        umap = _payload(await session.call_tool("project", {
            **iris, "method": "umap", "params": {"n_epochs": 50, "seed": 2}, "max_points": 0},
            progress_callback=on_progress))
        job = umap["job"]
        answers["alone"] = _payload(await session.call_tool("clusters", {"job": job}))
        answers["rows"] = _payload(await session.call_tool("clusters", {"job": job,
                                                                        "max_points": 10}))
        answers["quality"] = _payload(await session.call_tool("quality", {"job": job, "worst": 2}))
        answers["named"] = _payload(await session.call_tool("clusters", {**iris, "job": job}))
        other = {"run": "digits", "embedding": "digits", "job": job}
        answers["other_clusters"] = _error(await session.call_tool("clusters", other))
        answers["other_quality"] = _error(await session.call_tool("quality", other))
        answers["nothing"] = _error(await session.call_tool("clusters", {}))
        answers["unknown"] = _error(await session.call_tool("neighbors", {
            **iris, "label": "setosa"}))
        answers["dims"] = _error(await session.call_tool("project", {
            **iris, "method": "pca", "dims": 4}))
        answers["metadata"] = _payload(await session.call_tool("metadata", {**iris, "limit": 1}))

    began = _session(sample_logdir, tmp_path / "cache", body)
    from importlib.metadata import version
    assert began.server_info.version == version("embedding-projector")
    assert messages and all(m.startswith("UMAP") for m in messages), messages
    assert messages[-1] == "UMAP: done"
    alone, rows, named = answers["alone"], answers["rows"], answers["named"]
    assert isinstance(alone, dict) and isinstance(rows, dict) and isinstance(named, dict)
    assert alone["rows"] == 150 and "assignment" not in alone, "a summary by default"
    assert alone["clusters"] == named["clusters"] == rows["clusters"]
    assert any(c["label"] == "setosa (100%)" for c in alone["clusters"]), "the job's own names"
    assert len(rows["assignment"]) == 10
    quality = answers["quality"]
    assert isinstance(quality, dict) and len(quality["worst"]) == 2
    assert isinstance(quality["worst"][0]["sepal_length"], float)
    refusal = "the job is a projection of iris/iris, not of digits/digits"
    assert answers["other_clusters"] == f"Error executing tool clusters: {refusal}"
    assert answers["other_quality"] == f"Error executing tool quality: {refusal}"
    assert str(answers["nothing"]).endswith("give run and embedding (a projection of them), "
                                            "or job")
    assert "unknown argument 'label'" in str(answers["unknown"])
    assert answers["dims"] == "Error executing tool project: pca.dims: Input should be 2 or 3"
    assert answers["metadata"] == [{"index": 0, "species": "setosa", "sepal_length": 5.1,
                                    "sepal_width": 3.5, "petal_length": 1.4, "petal_width": 0.2}]


@pytest.mark.slow
def test_with_server_the_assistants_jobs_are_the_pages(sample_logdir, tmp_path, serve):
    """``projector mcp --server URL`` asks the running server: the assistant's projection is
    the job the page's identical request gets, listed in the server's jobs, and a refusal is
    the server's own sentence. Without it the server says truly that it computes alone."""
    base = serve(sample_logdir)
    request = {"run": "iris", "embedding": "iris", "method": "umap", "dims": 2,
               "params": {"n_neighbors": 10, "n_epochs": 50, "seed": 3}}
    answers: dict[str, object] = {}

    async def body(session: ClientSession) -> None:
        answers["project"] = _payload(await session.call_tool("project", {
            **request, "max_points": 3}))
        answers["clusters"] = _payload(await session.call_tool("clusters", {
            "run": "iris", "embedding": "iris", "job": _job(answers), "min_cluster_size": 10}))
        answers["near"] = _payload(await session.call_tool("neighbors", {
            "run": "words", "embedding": "words", "query": "blue", "k": 5}))
        answers["nowhere"] = _error(await session.call_tool("metadata", {"run": "nope",
                                                                        "embedding": "x"}))
        answers["annotate"] = _payload(await session.call_tool("annotate", {
            "run": "iris", "embedding": "iris", "column": "checked", "value": "yes",
            "rows": [0, 1, 2]}))

    began = _session(None, tmp_path / "mcp-cache", body, "--server", base)
    assert began.server_info.description is not None and base in began.server_info.description
    assert began.server_info.version, "the installed version"
    job = _job(answers)
    page = httpx.post(f"{base}/api/projections", json=request).json()["job"]
    assert page == job, "the page's identical request shares the assistant's job"
    assert job in [j["id"] for j in httpx.get(f"{base}/api/jobs").json()["jobs"]]
    rest = httpx.get(f"{base}/api/jobs/{job}/clusters",
                     params={"label_column": "species", "min_cluster_size": 10}).json()
    clusters = answers["clusters"]
    assert isinstance(clusters, dict) and clusters["clusters"] == rest["clusters"]
    near = answers["near"]
    assert isinstance(near, dict) and [p["word"] for p in near["of"]] == ["blue"]
    unknown = httpx.get(f"{base}/api/neighbors", params={"run": "nope", "embedding": "x",
                                                         "index": 0}).json()["detail"]
    assert str(answers["nowhere"]).endswith(unknown), "the server's sentence, as REST says it"
    labelled = answers["annotate"]
    assert isinstance(labelled, dict) and labelled["changed"] == 3
    history = httpx.get(f"{base}/api/annotations/history",
                        params={"run": "iris", "embedding": "iris"}).json()
    assert [(e["id"], e["author"]) for e in history] == [(labelled["edit"], "assistant")], \
        "the server's store holds the assistant's edit"

    async def alone(session: ClientSession) -> None:
        runs = _payload(await session.call_tool("list_runs", {}))
        assert {"digits", "iris", "words"} <= {r["run"] for r in runs}, "the samples, as serve"

    began = _session(None, tmp_path / "cache", alone)
    assert "its own jobs" in (began.server_info.description or "")


def _job(answers: dict[str, object]) -> str:
    projected = answers["project"]
    assert isinstance(projected, dict)
    return str(projected["job"])


@pytest.mark.parametrize(("where", "said"), [
    (["data/nope"], "projector mcp: LOGDIR data/nope does not exist"),
    (["--server", "http://127.0.0.1:9"], "projector mcp: cannot reach http://127.0.0.1:9"),
    (["data/nope", "--server", "http://127.0.0.1:9"], "give a LOGDIR or --server URL, not both"),
])
def test_what_mcp_cannot_serve_is_said_on_stderr_before_the_protocol(where, said, tmp_path):
    """Not a traceback an MCP client reads as "Connection closed": a sentence and exit 2."""
    done = subprocess.run([sys.executable, "-m", "projector.server.cli", "mcp", *where],
                          capture_output=True, text=True, env=_env(tmp_path), cwd=str(ROOT),
                          stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert said in done.stderr and "Traceback" not in done.stderr
