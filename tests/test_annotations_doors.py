"""Every door writes and reads the same annotation columns through the one service: the
Client (HTTP, ``user=``), the notebook widget (its server in this process) and an assistant
over MCP (the SDK's stdio client, a process of its own on the same store)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import numpy as np
import pandas as pd
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from projector import Client, Projector, ProjectorError

ROOT = Path(__file__).resolve().parent.parent
IRIS = ("iris", "iris")


def test_the_client_labels_reads_undoes_and_keeps_bookmarks(serve, sample_logdir):
    url = serve(sample_logdir, refresh_seconds=0)
    ann, bob = Client(url, user="ann"), Client(url, user="bob")
    done = ann.annotate(*IRIS, np.array([4, 2]), "label_fixed", "cat")
    assert done["edit"]["author"] == "ann" and done["changed"] == 2
    bob.annotate(*IRIS, [2, 3], "label_fixed", "dog")
    bob.annotate(*IRIS, [0], "duplicate", True)
    frame = bob.annotations(*IRIS)
    assert list(frame.columns) == ["label_fixed", "duplicate"] and len(frame) == 150
    assert frame["label_fixed"].iloc[:5].tolist()[2:] == ["dog", "dog", "cat"]
    assert pd.isna(frame["label_fixed"].iloc[0]) and frame["duplicate"].iloc[0] == "true"
    assert ann.undo(*IRIS)["edit"]["target"] == done["edit"]["id"]
    after = ann.annotations(*IRIS)["label_fixed"]
    assert after.iloc[2:4].tolist() == ["dog", "dog"] and pd.isna(after.iloc[4])  # bob's stays
    assert [e["author"] for e in ann.annotation_history(*IRIS)] == ["ann", "bob", "bob", "ann"]
    with pytest.raises(ProjectorError) as taken:
        ann.annotate(*IRIS, [0], "species", "x")
    assert taken.value.status == 422 and "species" in taken.value.detail
    assert "label_fixed" in Client(url).metadata(*IRIS).columns  # a metadata column too
    saved = ann.save_bookmark(*IRIS, {"label": "the dogs"})
    assert [b["label"] for b in bob.bookmarks(*IRIS)] == ["the dogs"]
    bob.delete_bookmark(*IRIS, saved["saved"]["id"])
    assert bob.bookmarks(*IRIS) == []
    assert ann.export_annotations(*IRIS, "csv").decode().splitlines()[0].endswith(
        '"label_fixed","duplicate"')


def test_the_widget_and_a_client_on_its_server_share_the_columns():
    vectors = np.random.default_rng(0).random((30, 4)).astype(np.float32)
    widget = Projector(vectors, {"group": ["a", "b", "c"] * 10})
    try:
        widget.selection = [1, 2]
        done = widget.annotate("checked", True)
        assert done["rows"] == 2 and done["changed"] == 2
        client = Client(widget.url, user="script")
        names = ("memory", "embedding")
        assert client.annotations(*names)["checked"].iloc[:3].isna().tolist() == [True, False,
                                                                                    False]
        client.annotate(*names, [5], "group_fixed", "d")
        frame = widget.annotations
        assert list(frame.columns) == ["checked", "group_fixed"]
        assert frame["group_fixed"].iloc[5] == "d"
        assert widget.selected_frame()["checked"].tolist() == ["true", "true"]
        assert widget.undo()["undid"] == done["edit"]
        assert widget.annotations["checked"].isna().all()
    finally:
        widget.close()


def _mcp(logdir: Path, cache: Path) -> StdioServerParameters:
    env = {"PYTHONPATH": str(ROOT), "PROJECTOR_CACHE_DIR": str(cache), "PATH": os.environ["PATH"],
           "PROJECTOR_ANNOTATIONS": os.environ["PROJECTOR_ANNOTATIONS"]}
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "projector.server.cli", "mcp", str(logdir)],
                                 env=env, cwd=str(ROOT))


@pytest.mark.slow
def test_an_assistant_names_a_cluster_and_flags_points_the_page_and_client_see(
        serve, sample_logdir, tmp_path):
    url = serve(sample_logdir, refresh_seconds=0)  # the same store (PROJECTOR_ANNOTATIONS)
    client = Client(url, user="ann")
    client.annotate(*IRIS, [0, 1], "reviewed", "yes")
    answers: dict[str, object] = {}

    async def body(session: ClientSession) -> None:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"annotate", "annotations"} <= names
        listed = await session.call_tool("annotations", {"run": "iris", "embedding": "iris"})
        answers["listed"] = json.loads(listed.content[0].text)
        flagged = await session.call_tool("annotate", {
            "run": "iris", "embedding": "iris", "column": "odd_one", "value": True,
            "query": "virginica", "query_column": "species"})
        answers["flagged"] = json.loads(flagged.content[0].text)
        projected = await session.call_tool("project", {"run": "iris", "embedding": "iris",
                                                        "method": "pca", "max_points": 0})
        job = json.loads(projected.content[0].text)["job"]
        groups = json.loads((await session.call_tool("clusters", {
            "run": "iris", "embedding": "iris", "job": job})).content[0].text)
        top = next(c for c in groups["clusters"] if c["parent"] is None)
        answers["top"] = top
        named = await session.call_tool("annotate", {
            "run": "iris", "embedding": "iris", "column": "group", "value": "first group",
            "cluster": top["id"], "job": job})
        answers["named"] = json.loads(named.content[0].text)
        wrong = await session.call_tool("annotate", {
            "run": "iris", "embedding": "iris", "column": "species", "value": "x", "rows": [0]})
        answers["wrong"] = wrong.content[0].text if wrong.is_error else None

    async def run() -> None:
        async with stdio_client(_mcp(sample_logdir, tmp_path / "cache")) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            await body(session)

    anyio.run(run)
    listed = answers["listed"]
    assert isinstance(listed, dict)
    assert listed["columns"][0] | {"edits": 0} == {"name": "reviewed", "kind": "label",
                                                   "shown": True, "edits": 0,
                                                   "values": {"yes": 2}}
    assert listed["history"][0]["author"] == "ann"
    flagged, named, top = answers["flagged"], answers["named"], answers["top"]
    assert isinstance(flagged, dict) and isinstance(named, dict) and isinstance(top, dict)
    assert flagged["rows"] == flagged["changed"] == 50 and flagged["author"] == "assistant"
    assert all(p["species"] == "virginica" for p in flagged["sample"])
    assert named["rows"] == top["size"] and named["sample"][0]["group"] == "first group"
    assert "already a metadata column" in str(answers["wrong"])
    frame = client.annotations(*IRIS)  # the server reads what the assistant wrote
    assert int((frame["odd_one"] == "true").sum()) == 50
    assert int((frame["group"] == "first group").sum()) == top["size"]
    history = client.annotation_history(*IRIS)
    assert [e["author"] for e in history[:2]] == ["assistant", "assistant"]
