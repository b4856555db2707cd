"""What the MCP tools do, as plain Python (:class:`Tools`): metadata rows with their values
typed, rows matching a label, neighbours named by their rows, a phrase searched by meaning, a
projection awaited with its progress reported. ``mcp_server.py`` and ``mcp_annotations.py``
declare the tools over it."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
from mcp.server.mcpserver import Context
from pydantic import TypeAdapter

from projector.mcp_answers import Answers
from projector.mcp_protocol import Method, Metric
from projector_core.projection.methods import METHODS
from projector_core.projection.params import ProjectionRequest
from projector_core.service.neighbors import check_rows

PROGRESS_EVERY = 0.25
_REQUEST = TypeAdapter(ProjectionRequest)


class Tools:
    """The tools' logic, kept apart from MCP so that it reads (and fails) like plain Python;
    every question goes to ``ask`` (a service of its own, or a running server's)."""

    def __init__(self, ask: Answers) -> None:
        self.ask = ask

    def rows(self, run: str, embedding: str, indices: list[int]) -> list[dict[str, Any]]:
        """The metadata rows of ``indices``, each with its ``index``."""
        info = self.ask.embedding(run, embedding)
        check_rows(f"{run}/{embedding}", (info["shape"] or (0, 0))[0], indices)
        columns = {name: _column(self.ask.column(run, embedding, name))
                   for name in info["metadata_columns"]} if indices else {}
        return [{"index": int(i), **{name: values[codes[i]]
                                     for name, (values, codes) in columns.items()}}
                for i in indices]

    def rows_matching(self, run: str, embedding: str, query: str, column: str | None,
                      regex: bool = False) -> list[int]:
        """Rows whose ``column`` (default: the label column) equals ``query`` (any case);
        failing that, contains it."""
        column = column or self.ask.embedding(run, embedding)["label_column"]
        if column is None:
            raise ValueError(f"{run}/{embedding} has no metadata to search")
        if not regex:
            values, codes = self.ask.column(run, embedding, column)
            wanted = [code for code, value in enumerate(values)
                      if value.casefold() == query.casefold()]
            if wanted:
                return [int(i) for i in np.flatnonzero(np.isin(codes, wanted))]
        return self.ask.search(run, embedding, column, query, regex)

    def neighbors(self, run: str, embedding: str, rows: list[int], k: int,
                  metric: Metric) -> list[dict[str, Any]]:
        """Nearest points to one row, or to the centroid of several (the rows left out)."""
        found = self.ask.neighbors(run, embedding, k, metric,
                                   **({"index": rows[0]} if len(rows) == 1 else {"rows": rows}))
        named = self.rows(run, embedding, [i for i, _ in found])
        return [{**row, "distance": round(d, 5)} for row, (_, d) in zip(named, found, strict=True)]

    async def meaning(self, ctx: Context, run: str, embedding: str, text: str,
                      k: int) -> dict[str, Any]:
        """The points nearest in meaning to a phrase, in the embedding's own model; while the
        model loads, its job's progress is reported and the phrase asked again."""
        loop = asyncio.get_running_loop()

        def loading(progress: float) -> None:
            asyncio.run_coroutine_threadsafe(
                ctx.report_progress(progress, 1.0, f"loading model: {progress:.0%}"), loop)

        answer = await asyncio.to_thread(self.ask.meaning, run, embedding, text, k, loading)
        named = await asyncio.to_thread(self.rows, run, embedding,
                                        [row for row, _ in answer["neighbors"]])
        return {**answer, "metric": "cosine", "neighbors": [
            {**row, "similarity": round(similarity, 5)}
            for row, (_, similarity) in zip(named, answer["neighbors"], strict=True)]}

    async def projection(self, ctx: Context, run: str, embedding: str, method: Method,
                         dims: int, params: dict[str, Any] | None, job: str | None) -> str:
        """The finished job ``job`` names, or the one answering this projection (shared with
        identical requests where the answers come from; see the server's description),
        awaited with progress; its id."""
        if job is None:
            request = _REQUEST.validate_python({"run": run, "embedding": embedding,
                                                "method": method, "dims": dims,
                                                "params": params or {}})
            job = await asyncio.to_thread(self.ask.start, request)
        own = (await asyncio.to_thread(self.ask.about, job)).get("method")
        title = METHODS[own].title if own in METHODS else own or "job"
        while True:
            status = await asyncio.to_thread(self.ask.status, job)
            if status["status"] in ("done", "failed", "cancelled"):
                break
            phase = f" {status['phase']}" if status.get("phase") else ""
            await ctx.report_progress(status["progress"], 1.0,
                                      f"{title}:{phase} {status['progress']:.0%}")
            await asyncio.sleep(PROGRESS_EVERY)
        if status["status"] != "done":
            await asyncio.to_thread(self.ask.result, job)  # NotDone: the service's sentence
        await ctx.report_progress(1.0, 1.0, f"{title}: done")
        return job

    async def projection_of(self, ctx: Context, run: str | None, embedding: str | None,
                            method: Method, dims: int, params: dict[str, Any] | None,
                            job: str | None) -> tuple[str, str, str]:
        """The job to read (``job``, else the projection's) and its run and embedding: a
        ``run``/``embedding`` beside a job must be the job's own (clusters labelled by
        another data set's names would be wrong, not approximate)."""
        if job is None:
            if run is None or embedding is None:
                raise ValueError("give run and embedding (a projection of them), or job")
            return await self.projection(ctx, run, embedding, method, dims, params, None), \
                run, embedding
        own_run, own_embedding = await asyncio.to_thread(self.source, job)
        asked = (run or own_run, embedding or own_embedding)
        if asked != (own_run, own_embedding):
            raise ValueError(f"the job is a projection of {own_run}/{own_embedding}, "
                             f"not of {asked[0]}/{asked[1]}")
        return await self.projection(ctx, own_run, own_embedding, method, dims, params, job), \
            own_run, own_embedding

    def source(self, job: str) -> tuple[str, str]:
        """The run and embedding a job projects."""
        about = self.ask.about(job)
        if not about.get("run") or not about.get("embedding"):
            raise ValueError(f"job {job} does not know its data")
        return about["run"], about["embedding"]


def _column(column: tuple[list[str], np.ndarray]) -> tuple[list[Any], np.ndarray]:
    values, codes = column
    return _typed(values), codes


def _typed(values: list[str]) -> list[Any]:
    """A column's distinct values as a reader of the TSV gets them (``Client.metadata``):
    numbers when every one is a number or empty (integers when all are, empty as null),
    else the strings."""
    present = [v.strip() for v in values if v.strip()]
    try:
        numbers: list[float] = [float(v) for v in present]
    except ValueError:
        return values
    if not present or not all(math.isfinite(x) for x in numbers):
        return values
    whole = all(x.is_integer() and "." not in v and "e" not in v.lower()
                for x, v in zip(numbers, present, strict=True))
    return [None if not v.strip() else int(v) if whole else float(v) for v in values]

