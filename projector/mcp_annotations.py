"""The MCP tools ``annotate`` and ``annotations``: labels kept in the projector's store, the
one the page, notebooks and clients read and write (a service of the tools' own, or the
running server's with ``--server``: ``mcp_answers.py``). An assistant's edits are recorded
with the author ``assistant`` (``mcp_answers.ASSISTANT``) and undone like anyone's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any, Literal

import numpy as np
from mcp.server.mcpserver import Context
from pydantic import Field

from projector.mcp_answers import ASSISTANT, Answers
from projector.mcp_protocol import EmbeddingName, Run, answers
from projector.mcp_tools import Tools


def add_annotation_tools(tool: Callable[[Any], Any], ask: Answers, tools: Tools) -> None:
    """``annotate`` and ``annotations`` on the server ``tool`` registers with."""

    @tool
    @answers
    async def annotate(run: Run, embedding: EmbeddingName, ctx: Context,
                       column: Annotated[str, Field(description="A new or existing annotation "
                                                    "column, e.g. label_fixed, duplicate")],
                       value: Annotated[str | bool | None, Field(
                           description="The label (true/false for a flag; null clears)")],
                       rows: Annotated[list[Annotated[int, Field(ge=0)]] | None, Field(
                           max_length=1_000_000, description="Point indices")] = None,
                       query: Annotated[str | None, Field(description="Or: the points whose "
                                                          "label column (or query_column) "
                                                          "is this")] = None,
                       query_column: str | None = None,
                       cluster: Annotated[int | None, Field(description="Or: the points of "
                                                            "this top-level cluster of `job` "
                                                            "(from clusters)")] = None,
                       job: str | None = None,
                       kind: Literal["label", "flag", "note"] | None = None) -> Any:
        """Label points in one edit the user sees at once and can undo: name a cluster, flag
        duplicates, fix labels. Answers what changed: the edit, how many rows now hold another
        value, and a few of them."""
        chosen = [r for r in (rows, query, cluster) if r is not None]
        if len(chosen) != 1:
            raise ValueError("give exactly one of rows, query or cluster (with its job)")
        if cluster is not None:
            if job is None:
                raise ValueError("a cluster is named with the job its clusters came from")
            found = await asyncio.to_thread(ask.clusters, job, None, None, "projection")
            if cluster not in {c["id"] for c in found["clusters"] if c["parent"] is None}:
                raise ValueError(f"no top-level cluster {cluster} in job {job}")
            picked = [int(i) for i in np.flatnonzero(np.asarray(found["assignment"]) == cluster)]
        elif query is not None:
            picked = await asyncio.to_thread(tools.rows_matching, run, embedding, query,
                                             query_column)
        else:
            picked = list(rows or [])
        committed = await asyncio.to_thread(ask.annotate, run, embedding, column, value, picked,
                                            kind)
        sample = await asyncio.to_thread(tools.rows, run, embedding, picked[:5])
        return {"column": column, "value": value, "edit": committed["edit"]["id"],
                "rows": committed["edit"]["rows"], "changed": committed["changed"],
                "author": ASSISTANT, "rule": committed["rule"], "sample": sample}

    @tool
    @answers
    def annotations(run: Run, embedding: EmbeddingName,
                    history: Annotated[int, Field(ge=0, le=100, description="Latest edits "
                                                                           "listed")] = 10) -> Any:
        """The embedding's annotation columns (kind, whether shown, each value's count) and
        the latest edits, everyone's."""
        found = ask.annotation_columns(run, embedding)
        columns = []
        for column in found["columns"]:
            entry: dict[str, Any] = {key: column[key] for key in ("name", "kind", "shown", "edits")}
            if column["shown"]:
                values, codes = ask.column(run, embedding, column["name"])
                counts = np.bincount(codes, minlength=len(values))
                entry["values"] = {v: int(c) for v, c in zip(values, counts, strict=True)
                                   if v and c}
            else:
                entry["reason"] = column["reason"]
            columns.append(entry)
        edits = ask.annotation_history(run, embedding, max(history, 1))[:history]
        return {"enabled": found["enabled"], "reason": found["reason"], "rule": found["rule"],
                "columns": columns,
                "history": [{"edit": e["id"], **{key: e[key] for key in (
                    "column", "action", "author", "rows", "value", "undone")}} for e in edits]}
