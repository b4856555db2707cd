"""An assistant asks about a training run over MCP (``projector mcp LOGDIR``, the official
SDK's client over stdio): the steps written, and how the newest one changed (the answer
GET /api/compare gives for those two steps)."""

from __future__ import annotations

from pathlib import Path

import httpx
from mcp import ClientSession

from projector_core.formats.writer import add_embedding
from tests.builders import vectors
from tests.test_mcp import _error, _payload, _session


def test_steps_and_how_the_newest_changed(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    for step in (0, 10, 20):
        add_embedding(logdir / "train", vectors(60, 5, step), metadata=[f"p{i}" for i in
                                                                        range(60)],
                      global_step=step)
    add_embedding(logdir / "train", vectors(60, 5, 9), tag="enc", global_step=0)
    url = serve(logdir)

    async def body(session: ClientSession) -> None:
        steps = _payload(await session.call_tool("steps", {"run": "train"}))
        assert [(t["tag"], [s["step"] for s in t["steps"]]) for t in steps] == [
            ("default", [0, 10, 20]), ("enc", [0])]
        rest = httpx.get(f"{url}/api/steps", params={"run": "train"}).json()["timelines"]
        assert steps == rest  # what the page and the client are told

        newest = _payload(await session.call_tool("compare_steps", {"run": "train", "top": 5}))
        assert (newest["tag"], newest["from"]["step"], newest["to"]["step"]) == ("default", 10, 20)
        answer = httpx.get(f"{url}/api/compare", params={
            "run": "train", "embedding": "default:00010", "other_run": "train",
            "other_embedding": "default:00020", "top": 5}).json()
        assert newest["mean"] == answer["mean"] and newest["rows"] == 60
        assert [p["index"] for p in newest["most_changed"]] == answer["most_changed"]
        assert [p["label"] for p in newest["most_changed"]] == [
            f"p{i}" for i in answer["most_changed"]]
        earlier = _payload(await session.call_tool("compare_steps", {"run": "train",
                                                                     "step": 10}))
        assert (earlier["from"]["step"], earlier["to"]["step"]) == (0, 10)

        lone = await session.call_tool("compare_steps", {"run": "train", "tag": "enc"})
        assert "no two steps of the same points to compare (the steps: enc: 0)" in _error(lone)
        nowhere = await session.call_tool("steps", {"run": "nope"})
        assert "unknown run 'nope' (runs: train)" in _error(nowhere)

    _session(logdir, tmp_path / "cache", body)
