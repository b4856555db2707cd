"""The MCP server (``projector mcp LOGDIR``) driven by the official SDK's client over stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

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
