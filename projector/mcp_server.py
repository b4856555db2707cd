"""``projector mcp LOGDIR``: the projector's data as MCP tools for an assistant (stdio).

A thin door onto :class:`projector_core.service.ProjectionService`, as the REST routes are:
the same projection jobs and result cache, the same limits (``k`` of a neighbour query), the
same HDBSCAN clusters as ``GET /api/jobs/ID/clusters``. What is its own is the size of the
answers: compact JSON once, rows capped by bounds every schema states, points named by the
label column the page picks, and every failure a sentence. The only writes are labels
(``annotate``), into the annotation store, never the LOGDIR; stdout belongs to the protocol,
so nothing else prints there.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import numpy as np
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, TypeAdapter, ValidationError, WithJsonSchema

from projector_core.data.catalog import Catalog
from projector_core.data.model import Embedding
from projector_core.errors import DataError
from projector_core.jobs.engine import Job, JobStatus
from projector_core.kernels.search import search as search_values
from projector_core.projection.methods import METHODS
from projector_core.projection.params import ProjectionRequest
from projector_core.service import NotDone, ProjectionService
from projector_core.service import label_column as naming_column

MAX_ROWS = 5000  # rows one answer may carry; more would swamp the assistant's context
PROGRESS_EVERY = 0.25
F = TypeVar("F", bound=Callable[..., Any])

Run = Annotated[str, Field(description="Run name, as list_runs gives it")]
EmbeddingName = Annotated[str, Field(description="Embedding name within the run")]
Method = Literal["pca", "tsne", "umap", "custom", "precomputed"]
# Typed per method in the schema the assistant reads: each method's parameter model from the
# registry, the models the parameter table (GET /api/projections/methods) is made from. Checked
# with the method's own model (``ProjectionRequest``), so a mistake is named once, not once per
# method it is not.
Params = Annotated[dict[str, Any] | None, WithJsonSchema({
    "anyOf": [*({**method.params_model.model_json_schema(), "title": f"method {name}"}
                for name, method in METHODS.items()), {"type": "null"}],
    "default": None,
    "description": "The parameters of `method` (one schema per method, titled by it); omitted: "
                   "its defaults. GET /api/projections/methods?run=&embedding= gives each "
                   "embedding's own bounds and defaults (perplexity at most (N - 1) / 3)"})]
Rows = Annotated[int, Field(ge=0, le=MAX_ROWS, description=f"Rows returned, at most {MAX_ROWS}")]
Metric = Literal["cosine", "euclidean"]
_REQUEST = TypeAdapter(ProjectionRequest)


def _message(error: BaseException) -> str:
    """One readable sentence for any failure (the SDK would hide all but its own)."""
    if isinstance(error, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
                         for e in error.errors(include_url=False))
    if isinstance(error, ValueError | LookupError | NotDone):
        return str(error)
    return f"internal error ({type(error).__name__}): {error}"


def answers(fn: F) -> F:
    """The tool's value as compact JSON text (once: no indented copy, no structured twin);
    any exception as its message."""
    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> str:
        try:
            if asyncio.iscoroutinefunction(fn):
                value = await fn(*args, **kwargs)
            else:  # a neighbour scan or a file read: off the protocol's event loop
                value = await asyncio.to_thread(fn, *args, **kwargs)
        except ToolError:
            raise
        except Exception as error:
            raise ToolError(_message(error)) from None
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_plain)
    return run  # type: ignore[return-value]


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _rounded(rows: np.ndarray) -> list[list[float] | None]:
    return [r.tolist() if np.isfinite(r).all() else None
            for r in np.round(rows.astype(np.float64), 4)]


class Tools:
    """The tools' logic, kept apart from MCP so that it reads (and fails) like plain Python."""

    def __init__(self, service: ProjectionService) -> None:
        self.service = service

    def row(self, embedding: Embedding, index: int) -> dict[str, Any]:
        """A point's metadata, its annotation columns' values included."""
        metadata = embedding.metadata()
        values = ({n: metadata.arrays[n][index].as_py() for n in metadata.names}
                  if metadata else {})
        values.update({name: coded.dictionary[int(coded.codes[index])]
                       for name, coded in embedding.added_columns().items()})
        return {"index": int(index), **values}

    def rows(self, embedding: Embedding, indices: list[int]) -> list[dict[str, Any]]:
        n = (embedding.shape or (0, 0))[0]
        bad = [i for i in indices if not 0 <= i < n]
        if bad:
            raise ValueError(f"index {bad[0]} out of range: {embedding.run}/{embedding.name} "
                             f"has {n} points (0..{n - 1})")
        return [self.row(embedding, i) for i in indices]

    def runs(self) -> list[dict[str, Any]]:
        return [{"run": r.name, "error": r.error, "embeddings": [
            {"name": e.name, "status": e.status,
             "shape": e.shape, "metadata_columns": e.metadata_columns(),
             "label_column": naming_column(e), "error": e.error}
            for e in r.embeddings]} for r in self.service.catalog.runs()]

    def rows_matching(self, embedding: Embedding, query: str, column: str | None,
                      regex: bool = False) -> list[int]:
        """Rows whose ``column`` (default: the label column) equals ``query`` (any case);
        failing that, contains it."""
        metadata = embedding.metadata()
        if metadata is None:
            raise ValueError(f"{embedding.run}/{embedding.name} has no metadata to search")
        column = column or naming_column(embedding)
        if column not in metadata.names:
            raise ValueError(f"unknown column {column!r}; the columns are {', '.join(metadata.names)}")
        values = metadata.column(column)
        if not regex:
            exact = [i for i, v in enumerate(values) if v.casefold() == query.casefold()]
            if exact:
                return exact
        return search_values(values, query, regex)

    def neighbors(self, embedding: Embedding, rows: list[int], k: int,
                  metric: Metric) -> list[dict[str, Any]]:
        """Nearest points to one row, or to the centroid of several (the rows left out)."""
        if len(rows) == 1:
            found, distances = self.service.neighbors(embedding, k, metric, index=rows[0])
        else:
            centroid = np.asarray(embedding.vectors()[rows], np.float64).mean(axis=0)
            found, distances = self.service.neighbors(embedding, k, metric, vector=centroid,
                                                      exclude=tuple(rows))
        return [{**self.row(embedding, int(i)), "distance": round(float(d), 5)}
                for i, d in zip(found[0], distances[0], strict=True) if i >= 0]

    async def projection(self, ctx: Context, run: str, embedding: str, method: Method,
                         dims: int, params: dict[str, Any] | None, job: str | None) -> Job:
        """The finished job ``job`` names, or the one answering this projection (shared with
        the page's identical requests, or from the result cache), awaited with progress."""
        if job is not None:
            found = self.service.job(job)
        else:
            request = _REQUEST.validate_python({"run": run, "embedding": embedding,
                                                "method": method, "dims": dims,
                                                "params": params or {}})
            found = await asyncio.to_thread(self.service.project, request)
        while not found.status.finished:
            await ctx.report_progress(found.progress, 1.0, f"{method}: {found.progress:.0%}")
            await asyncio.sleep(PROGRESS_EVERY)
        if found.status is not JobStatus.DONE:
            raise NotDone(found)
        await ctx.report_progress(1.0, 1.0, f"{method}: done")
        return found


def build_server(catalog: Catalog, device: str = "cpu") -> MCPServer:
    service = ProjectionService.standalone(catalog, device)
    tools = Tools(service)
    mcp = MCPServer("projector", instructions=(
        "Embeddings of a TensorBoard-style LOGDIR. Start with list_runs; neighbours answer "
        "'what is near X'; clusters gives the groups the Structure panel shows, with labels."))
    tool = mcp.tool(structured_output=False)

    @tool
    @answers
    def list_runs() -> Any:
        """Runs and their embeddings: status, shape (points x dimensions), metadata columns,
        the label column that names points."""
        catalog.refresh()
        return tools.runs()

    @tool
    @answers
    def metadata(run: Run, embedding: EmbeddingName,
                 indices: Annotated[list[Annotated[int, Field(ge=0)]] | None, Field(
                     max_length=MAX_ROWS, description="Point indices (default: the first "
                                                      "`limit`)")] = None,
                 limit: Annotated[int, Field(ge=1, le=MAX_ROWS)] = 20) -> Any:
        """Metadata rows of the given point indices (default: the first `limit` points)."""
        found = service.embedding(run, embedding)
        n = (found.shape or (0, 0))[0]
        return tools.rows(found, indices if indices is not None else list(range(min(limit, n))))

    @tool
    @answers
    def search(run: Run, embedding: EmbeddingName, query: str,
               column: Annotated[str | None, Field(description="Default: the label column")] = None,
               regex: bool = False, limit: Rows = 50) -> Any:
        """Points whose metadata `column` equals `query` (any case), else contains it."""
        found = service.embedding(run, embedding)
        rows = tools.rows_matching(found, query, column, regex)
        return {"count": len(rows), "column": column or naming_column(found),
                "points": [tools.row(found, i) for i in rows[:limit]]}

    @tool
    @answers
    def neighbors(run: Run, embedding: EmbeddingName,
                  index: Annotated[int | None, Field(ge=0, description="A point")] = None,
                  query: Annotated[str | None, Field(description="Or: its label")] = None,
                  column: str | None = None,
                  k: Annotated[int, Field(ge=1, le=1000, description="At most N - 1")] = 10,
                  metric: Metric = "cosine") -> Any:
        """The k nearest points, in the original space, to point `index` or to the points whose
        label (or `column`) is `query` (their centroid when several match)."""
        found = service.embedding(run, embedding)
        if (index is None) == (query is None):
            raise ValueError("give either index or query")
        rows = [index] if index is not None else tools.rows_matching(found, query or "", column)
        if not rows:
            raise ValueError(f"no point matches {query!r}")
        return {"of": tools.rows(found, rows[:10]), "of_count": len(rows),
                "neighbors": tools.neighbors(found, rows, k, metric)}

    @tool
    @answers
    async def project(run: Run, embedding: EmbeddingName, method: Method, ctx: Context,
                      dims: Literal[2, 3] = 2, params: Params = None,
                      max_points: Annotated[Rows, Field(
                          description="Coordinates returned (rounded to 4 decimals)")] = 200,
                      ) -> Any:
        """Run a projection to the end (progress is reported as it goes): its job id (for
        clusters and quality), its info and the coordinates of the first `max_points` points."""
        job = await tools.projection(ctx, run, embedding, method, dims, params, None)
        result = service.result(job)
        return {"job": job.id, "info": result.info, "rows": int(result.coordinates.shape[0]),
                "coordinates": _rounded(result.coordinates[:max_points])}

    @tool
    @answers
    async def clusters(run: Run, embedding: EmbeddingName, ctx: Context,
                       method: Method = "pca", dims: Literal[2, 3] = 2, params: Params = None,
                       job: Annotated[str | None, Field(
                           description="A finished projection job (from project) instead")] = None,
                       min_cluster_size: Annotated[int | None, Field(ge=2)] = None,
                       label_column: Annotated[str | None, Field(
                           description="Column naming the clusters; default: the label "
                                       "column")] = None,
                       space: Literal["projection", "original"] = "projection",
                       max_points: Annotated[Rows, Field(
                           description="Length of `assignment` returned")] = MAX_ROWS) -> Any:
        """The Structure panel's clusters of a projection (HDBSCAN, sub-clusters with a
        `parent`), exactly as GET /api/jobs/ID/clusters answers: each with size, label
        (commonest values of the label column) and its central point."""
        found = await tools.projection(ctx, run, embedding, method, dims, params, job)
        source = found.source if isinstance(found.source, Embedding) else None
        naming = label_column or (naming_column(source) if source is not None else None)
        answer = await asyncio.to_thread(service.clusters, found, min_cluster_size, naming, space)
        n = len(answer["assignment"])
        return {**answer, "assignment": answer["assignment"][:max_points], "job": found.id,
                **({"assignment_rows": n} if n > max_points else {})}

    @tool
    @answers
    async def quality(run: Run, embedding: EmbeddingName, ctx: Context,
                      method: Method = "pca", dims: Literal[2, 3] = 2, params: Params = None,
                      job: str | None = None,
                      k: Annotated[int, Field(ge=1, le=1000)] = 10, metric: Metric = "cosine",
                      worst: Annotated[int, Field(ge=0, le=100)] = 10) -> Any:
        """How faithful a projection is (GET /api/jobs/ID/quality without the per-point list):
        trustworthiness, continuity, mean neighbourhood kept, and the `worst` placed points."""
        found = await tools.projection(ctx, run, embedding, method, dims, params, job)
        answer = await asyncio.to_thread(service.quality, found, k, metric)
        per_point = np.array([math.nan if v is None else v for v in answer["per_point"]])
        order = [int(i) for i in np.argsort(per_point, kind="stable")
                 if math.isfinite(per_point[i])][:worst]
        source = found.source
        return {**{key: v for key, v in answer.items() if key != "per_point"}, "job": found.id,
                "worst": [{**tools.row(source, i), "kept": answer["per_point"][i]}
                          for i in order]}

    @tool
    @answers
    def compare(run: Run, embedding: EmbeddingName, other_run: Run, other_embedding: EmbeddingName,
                k: Annotated[int, Field(ge=1, le=200)] = 10, metric: Metric = "cosine",
                top: Annotated[int, Field(ge=0, le=100)] = 10) -> Any:
        """How much each point's neighbourhood changed from one embedding to another of the
        same points (GET /api/compare): the mean overlap and the `top` most changed points."""
        a, b = service.embedding(run, embedding), service.embedding(other_run, other_embedding)
        found = service.compare(a, b, k, metric, top)
        usable = found.per_point[np.isfinite(found.per_point)]
        return {"rows": int(found.per_point.shape[0]), "k": found.k,
                "mean": float(usable.mean()) if usable.size else None,
                "neighbors": found.neighbors, "recall": found.recall,
                "most_changed": [{**tools.row(a, int(i)), "overlap": round(float(
                    found.per_point[i]), 4)} for i in found.most_changed[:top]]}

    add_annotation_tools(tool, service, tools)
    return mcp


ASSISTANT = "assistant"  # the author of an assistant's edits in the history


def add_annotation_tools(tool: Callable[[Any], Any], service: ProjectionService, tools: Tools) -> None:
    """``annotate`` and ``annotations``: labels kept in the projector's store (the page,
    notebooks and clients read and write the same columns)."""

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
        found = service.embedding(run, embedding)
        chosen = [r for r in (rows, query, cluster) if r is not None]
        if len(chosen) != 1:
            raise ValueError("give exactly one of rows, query or cluster (with its job)")
        if cluster is not None:
            if job is None:
                raise ValueError("a cluster is named with the job its clusters came from")
            answer = await asyncio.to_thread(service.clusters, service.job(job))
            if cluster not in {c["id"] for c in answer["clusters"] if c["parent"] is None}:
                raise ValueError(f"no top-level cluster {cluster} in job {job}")
            picked = np.flatnonzero(np.asarray(answer["assignment"]) == cluster)
        elif query is not None:
            picked = np.asarray(tools.rows_matching(found, query, query_column), np.int64)
        else:
            picked = np.asarray(rows, np.int64)
        committed = await asyncio.to_thread(service.annotations.annotate, run, embedding,
                                            column, value, picked, ASSISTANT, kind)
        return {"column": column, "value": value, "edit": committed.edit.id,
                "rows": committed.edit.rows, "changed": committed.changed,
                "author": ASSISTANT, "rule": committed.rule,
                "sample": [tools.row(found, int(i)) for i in picked[:5]]}

    @tool
    @answers
    def annotations(run: Run, embedding: EmbeddingName,
                    history: Annotated[int, Field(ge=0, le=100, description="Latest edits "
                                                                           "listed")] = 10) -> Any:
        """The embedding's annotation columns (kind, whether shown, each value's count) and
        the latest edits, everyone's."""
        notes = service.annotations
        found = service.embedding(run, embedding)
        columns = []
        for column in notes.columns(run, embedding):
            entry: dict[str, Any] = {"name": column.name, "kind": column.kind,
                                     "shown": column.shown, "edits": column.edits}
            if column.shown:
                coded = found.added_columns()[column.name]
                entry["values"] = {v: int(c) for v, c in zip(coded.dictionary, coded.counts,
                                                             strict=True) if v and c}
            else:
                entry["reason"] = column.reason
            columns.append(entry)
        return {**notes.status(), "columns": columns,
                "history": [{"edit": e.id, "column": e.column, "action": e.action,
                             "author": e.author, "rows": e.rows, "value": e.value,
                             "undone": e.undone} for e in notes.history(run, embedding,
                                                                        limit=max(history, 1))
                            ][:history]}


def main(logdir: str | Path, device: str = "cpu") -> int:
    catalog = Catalog(Path(logdir))
    try:
        catalog.refresh()
    except DataError as exc:
        raise SystemExit(f"projector mcp: {exc}") from None
    build_server(catalog, device).run("stdio")
    return 0
