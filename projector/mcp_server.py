"""``projector mcp [LOGDIR]``: the projector's data as MCP tools for an assistant (stdio).

A thin door, as the REST routes are: what the tools ask is answered by a projection service
(``mcp_answers.py``): one of its own over LOGDIR (default: the bundled samples, as ``serve``),
or with ``--server URL`` a running server's, through its REST API, so the assistant's jobs
are the page's. The server info and the tools' descriptions say which. Either way the same
projection jobs and result cache, the same limits (``k`` of a neighbour query), the same
HDBSCAN clusters as ``GET /api/jobs/ID/clusters``, the same error sentences. What is its own
is the size of the answers: compact JSON once, rows capped by bounds every schema states,
points named by the label column the page picks, and every failure a sentence. The only
writes are labels (``annotate``, ``mcp_annotations.py``), into the annotation store, never
the LOGDIR; stdout belongs to the protocol, so nothing else prints there. Here: the tools as
the assistant sees them, and the command; their logic is ``mcp_tools.py``, how each speaks
(arguments' schema, answers, refusals) ``mcp_protocol.py``.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from projector.mcp_annotations import add_annotation_tools
from projector.mcp_answers import Answers, OwnService, RunningServer
from projector.mcp_protocol import (
    MAX_ROWS,
    Dims,
    EmbeddingName,
    JobId,
    Method,
    Metric,
    OptionalEmbedding,
    OptionalRun,
    Params,
    Rows,
    Run,
    ToolServer,
    answers,
)
from projector.mcp_tools import Tools
from projector.server.plain_arguments import load_catalog
from projector_core.data.catalog import PlainOptions
from projector_core.data.steps import Step, Timeline, step_and_before
from projector_core.errors import DataError
from projector_core.semantic.declarations import found_models


def build_server(ask: Answers) -> MCPServer:
    tools = Tools(ask)
    mcp = ToolServer("projector", version=_version(), description=ask.description, instructions=(
        "Embeddings of a TensorBoard-style LOGDIR. Start with list_runs; neighbours answer "
        "'what is near X' (a point, a label, or with text= a phrase by its meaning when "
        "list_runs names the embedding's model); clusters gives the groups the Structure "
        "panel shows, with labels. "
        + ask.description))
    tool = mcp.tool(structured_output=False)

    @tool
    @answers
    def list_runs() -> Any:
        """Runs and their embeddings: status, shape (points x dimensions), metadata columns,
        the label column that names points."""
        return ask.runs()

    @tool
    @answers
    def metadata(run: Run, embedding: EmbeddingName,
                 indices: Annotated[list[Annotated[int, Field(ge=0)]] | None, Field(
                     max_length=MAX_ROWS, description="Point indices (default: the first "
                                                      "`limit`)")] = None,
                 limit: Annotated[int, Field(ge=1, le=MAX_ROWS)] = 20) -> Any:
        """Metadata rows of the given point indices (default: the first `limit` points)."""
        n = (ask.embedding(run, embedding)["shape"] or (0, 0))[0]
        return tools.rows(run, embedding,
                          indices if indices is not None else list(range(min(limit, n))))

    @tool
    @answers
    def search(run: Run, embedding: EmbeddingName, query: str,
               column: Annotated[str | None, Field(description="Default: the label column")] = None,
               regex: bool = False, limit: Rows = 50) -> Any:
        """Points whose metadata `column` equals `query` (any case), else contains it."""
        rows = tools.rows_matching(run, embedding, query, column, regex)
        return {"count": len(rows),
                "column": column or ask.embedding(run, embedding)["label_column"],
                "points": tools.rows(run, embedding, rows[:limit])}

    @tool
    @answers
    async def neighbors(run: Run, embedding: EmbeddingName, ctx: Context,
                        index: Annotated[int | None, Field(ge=0, description="A point")] = None,
                        query: Annotated[str | None, Field(description="Or: its label")] = None,
                        text: Annotated[str | None, Field(description=(
                            "Or: a phrase, searched by its meaning: embedded by the model "
                            "that made the vectors (list_runs names it), similarity by "
                            "cosine"))] = None,
                        column: str | None = None,
                        k: Annotated[int, Field(ge=1, le=1000, description="At most N - 1")] = 10,
                        metric: Metric = "cosine") -> Any:
        """The k nearest points, in the original space, to point `index`, to the points whose
        label (or `column`) is `query` (their centroid when several match), or to the meaning
        of the phrase `text` ("what is near 'refund request'")."""
        asked = [name for name, value in (("index", index), ("query", query), ("text", text))
                 if value is not None]
        if len(asked) != 1:
            raise ValueError(
                "give one of index (a point), query (a label) or text (a phrase, by meaning)"
                + (f", not {' and '.join(asked)} together" if asked else ""))
        if text is not None:
            return await tools.meaning(ctx, run, embedding, text, k)

        def found() -> dict[str, Any]:
            rows = ([index] if index is not None
                    else tools.rows_matching(run, embedding, query or "", column))
            if not rows:
                raise ValueError(f"no point matches {query!r}")
            return {"of": tools.rows(run, embedding, rows[:10]), "of_count": len(rows),
                    "neighbors": tools.neighbors(run, embedding, rows, k, metric)}
        return await asyncio.to_thread(found)

    @tool
    @answers
    async def project(run: Run, embedding: EmbeddingName, method: Method, ctx: Context,
                      dims: Dims = 2, params: Params = None,
                      max_points: Annotated[Rows, Field(
                          description="Coordinates returned (rounded to 4 decimals)")] = 200,
                      ) -> Any:
        """Run a projection to the end (progress is reported as it goes): its job id (for
        clusters and quality), its info and the coordinates of the first `max_points` points."""
        job = await tools.projection(ctx, run, embedding, method, dims, params, None)
        coordinates, info = await asyncio.to_thread(ask.result, job)
        return {"job": job, "info": info, "rows": int(coordinates.shape[0]),
                "coordinates": _rounded(coordinates[:max_points])}

    @tool
    @answers
    async def clusters(ctx: Context, run: OptionalRun = None, embedding: OptionalEmbedding = None,
                       method: Method = "pca", dims: Dims = 2, params: Params = None,
                       job: JobId = None,
                       min_cluster_size: Annotated[int | None, Field(ge=2)] = None,
                       label_column: Annotated[str | None, Field(
                           description="Column naming the clusters; default: the label "
                                       "column")] = None,
                       space: Literal["projection", "original"] = "projection",
                       max_points: Annotated[Rows, Field(
                           description="Rows of `assignment` (each point's cluster, -1: "
                                       "none) returned; default none, the clusters "
                                       "alone")] = 0) -> Any:
        """The Structure panel's clusters of a projection (HDBSCAN, sub-clusters with a
        `parent`), exactly as GET /api/jobs/ID/clusters answers: each with size, label
        (commonest values of the label column) and its central point. Give `job` (from
        project) alone, or run and embedding with the projection's method, dims, params."""
        found, run, embedding = await tools.projection_of(ctx, run, embedding, method, dims,
                                                          params, job)
        naming = label_column
        if naming is None:
            naming = (await asyncio.to_thread(ask.embedding, run, embedding))["label_column"]
        answer = await asyncio.to_thread(ask.clusters, found, min_cluster_size, naming, space)
        assignment = answer["assignment"]  # the service's cached answer: read, not changed
        return {**{key: v for key, v in answer.items() if key != "assignment"}, "job": found,
                "rows": len(assignment),
                **({"assignment": assignment[:max_points]} if max_points else {})}

    @tool
    @answers
    async def quality(ctx: Context, run: OptionalRun = None, embedding: OptionalEmbedding = None,
                      method: Method = "pca", dims: Dims = 2, params: Params = None,
                      job: JobId = None,
                      k: Annotated[int, Field(ge=1, le=1000)] = 10, metric: Metric = "cosine",
                      worst: Annotated[int, Field(ge=0, le=100)] = 10) -> Any:
        """How faithful a projection is (GET /api/jobs/ID/quality without the per-point list):
        trustworthiness, continuity, mean neighbourhood kept, and the `worst` placed points.
        Give `job` (from project) alone, or run and embedding with the projection's method,
        dims, params."""
        found, run, embedding = await tools.projection_of(ctx, run, embedding, method, dims,
                                                          params, job)
        answer = await asyncio.to_thread(ask.quality, found, k, metric)
        per_point = np.array([math.nan if v is None else v for v in answer["per_point"]])
        order = [int(i) for i in np.argsort(per_point, kind="stable")
                 if math.isfinite(per_point[i])][:worst]
        rows = await asyncio.to_thread(tools.rows, run, embedding, order)
        return {**{key: v for key, v in answer.items() if key != "per_point"}, "job": found,
                "worst": [{**row, "kept": answer["per_point"][i]}
                          for row, i in zip(rows, order, strict=True)]}

    @tool
    @answers
    def compare(run: Run, embedding: EmbeddingName, other_run: Run, other_embedding: EmbeddingName,
                k: Annotated[int, Field(ge=1, le=200)] = 10, metric: Metric = "cosine",
                top: Annotated[int, Field(ge=0, le=100)] = 10) -> Any:
        """How much each point's neighbourhood changed from one embedding to another of the
        same points (GET /api/compare): the mean overlap and the `top` most changed points."""
        found = ask.compare((run, embedding), (other_run, other_embedding), k, metric, top)
        changed = found["most_changed"][:top]
        return {"rows": found["rows"], "k": found["k"], "mean": found["mean"],
                "neighbors": found["neighbors"], "recall": found["recall"],
                "most_changed": [{**row, "overlap": _round(found["per_point"][i])}
                                 for row, i in zip(tools.rows(run, embedding, changed), changed,
                                                   strict=True)]}

    # -- a training run's steps (issue 36): what was written, and how the newest changed --------
    async def step_timelines(run: str) -> list[Timeline]:
        listed = await asyncio.to_thread(ask.steps, run)
        return [Timeline(run, t["tag"], tuple(Step(s["step"], s["embedding"], s["rows"])
                                              for s in t["steps"])) for t in listed]

    @tool
    @answers
    def steps(run: Run) -> Any:
        """A training run's steps (embeddings written with global_step): each tag with its
        steps ascending, each with its embedding name, rows and when it was written (seconds
        since the epoch); as GET /api/steps."""
        return ask.steps(run)

    @tool
    @answers
    async def compare_steps(run: Run,
                            tag: Annotated[str | None, Field(
                                description="Default: the first tag with two steps")] = None,
                            step: Annotated[int | None, Field(
                                description="Default: the newest step")] = None,
                            k: Annotated[int, Field(ge=1, le=200)] = 10, metric: Metric = "cosine",
                            top: Annotated[int, Field(ge=0, le=100)] = 10) -> Any:
        """How each point's neighbourhood changed from the step before to `step` (default:
        the newest) of a training run: `compare`'s answer for those two steps, which it names."""
        timeline, before, after = step_and_before(await step_timelines(run), tag, step)
        answer = json.loads(await compare(run, before.embedding, run, after.embedding, k, metric,
                                          top))
        return {"tag": timeline.tag, "from": {"step": before.step, "embedding": before.embedding},
                "to": {"step": after.step, "embedding": after.embedding}, **answer}

    add_annotation_tools(tool, ask, tools)
    return mcp


def _rounded(rows: np.ndarray) -> list[list[float] | None]:
    return [r.tolist() if np.isfinite(r).all() else None
            for r in np.round(rows.astype(np.float64), 4)]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _version() -> str:
    """The installed distribution's version (what the server info says)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("embedding-projector")
    except PackageNotFoundError:
        return "unknown"


def main(logdir: str | Path | None, device: str = "cpu", server: str | None = None,
         token: str | None = None, plain: PlainOptions | None = None,
         model_flags: list[str] | None = None) -> int:
    """Serve the tools on stdio; a LOGDIR or server that cannot be used is said on stderr
    (exit 2) before the protocol starts, never as a broken connection. ``model_flags`` as
    ``serve --model`` (with ``server``, that server's own declarations answer)."""
    ask: Answers
    try:
        if server is not None and model_flags:
            raise ValueError("--model declares a model for this process's own LOGDIR; a "
                             "running server answers phrases with its own (serve --model)")
        if server is not None:
            remote = RunningServer(server, token)
            remote.check()
            ask = remote
        else:
            catalog = load_catalog(logdir, plain)  # as `projector serve` loads it
            models = found_models(model_flags or [], [
                (run.name, e.name) for run in catalog.runs() for e in run.embeddings])
            ask = OwnService(catalog, device, models)
    except (ValueError, DataError, ConnectionError) as error:
        print(f"projector mcp: {error}", file=sys.stderr)
        return 2
    build_server(ask).run("stdio")
    return 0
