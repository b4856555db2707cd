"""``projector mcp LOGDIR``: the projector's data as MCP tools for an assistant (stdio).

A thin door onto :class:`projector_core.service.ProjectionService`, as the REST routes are:
the same projection jobs and result cache, the same limits (``k`` of a neighbour query), the
same HDBSCAN clusters as ``GET /api/jobs/ID/clusters``. What is its own is the size of the
answers: compact JSON once, rows capped by bounds every schema states, points named by the
label column the page picks, and every failure a sentence. Nothing is written; stdout
belongs to the protocol, so nothing else prints there.
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
from projector_core.jobs.engine import Job, JobStatus
from projector_core.kernels.search import search as search_values
from projector_core.kernels.text_encoder import resolve_model
from projector_core.projection.methods import METHODS
from projector_core.projection.params import ProjectionRequest
from projector_core.semantic.declarations import declared_models
from projector_core.semantic.models import ModelLoading
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
        metadata = embedding.metadata()
        values = ({n: metadata.arrays[n][index].as_py() for n in metadata.names}
                  if metadata else {})
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
             "label_column": naming_column(e), "error": e.error,
             "model": self.service.models.status_of(e)}
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
            found, distances = self.service.neighbors(embedding, k, metric, rows=rows)
        return [{**self.row(embedding, int(i)), "distance": round(float(d), 5)}
                for i, d in zip(found[0], distances[0], strict=True) if i >= 0]

    async def meaning(self, ctx: Context, embedding: Embedding, text: str,
                      k: int) -> dict[str, Any]:
        """The points nearest in meaning to a phrase, in the embedding's own model; while the
        model loads, its job's progress is reported and the phrase asked again."""
        while True:
            try:
                answer = await asyncio.to_thread(self.service.search_meaning, embedding, [text], k)
                break
            except ModelLoading as loading:
                progress = loading.job.progress
                await ctx.report_progress(progress, 1.0, f"loading model: {progress:.0%}")
                await asyncio.sleep(PROGRESS_EVERY)
        [phrase] = answer.phrases
        return {"text": phrase.text, "model": answer.model, "index": answer.index,
                "metric": "cosine", "neighbors": [
                    {**self.row(embedding, row), "similarity": round(similarity, 5)}
                    for row, similarity in zip(phrase.rows, phrase.similarities, strict=True)]}

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


def build_server(catalog: Catalog, device: str = "cpu",
                 models: dict[tuple[str, str], str] | None = None) -> MCPServer:
    """The tools over ``catalog``; ``models`` as ``serve --model`` declares them (made ready
    in the background from the start, with the data's own declarations)."""
    service = ProjectionService.standalone(catalog, device, models)
    service.start_models()
    tools = Tools(service)
    mcp = MCPServer("projector", instructions=(
        "Embeddings of a TensorBoard-style LOGDIR. Start with list_runs; neighbours answer "
        "'what is near X' (a point, a label, or with text= a phrase by its meaning when "
        "list_runs names the embedding's model); clusters gives the groups the Structure "
        "panel shows, with labels."))
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
        found = service.embedding(run, embedding)
        asked = [name for name, value in (("index", index), ("query", query), ("text", text))
                 if value is not None]
        if len(asked) != 1:
            raise ValueError(
                "give one of index (a point), query (a label) or text (a phrase, by meaning)"
                + (f", not {' and '.join(asked)} together" if asked else ""))
        if text is not None:
            return await tools.meaning(ctx, found, text, k)
        rows = [index] if index is not None else tools.rows_matching(found, query or "", column)
        if not rows:
            raise ValueError(f"no point matches {query!r}")
        return {"of": tools.rows(found, rows[:10]), "of_count": len(rows),
                "neighbors": await asyncio.to_thread(tools.neighbors, found, rows, k, metric)}

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

    return mcp


def main(logdir: str | Path, device: str = "cpu", model_flags: list[str] | None = None) -> int:
    catalog = Catalog(Path(logdir))
    try:
        catalog.refresh()
        models = declared_models(model_flags or [], [(run.name, e.name) for run in catalog.runs()
                                                     for e in run.embeddings])
        for model in set(models.values()):
            resolve_model(model)
    except ValueError as exc:  # DataError included
        raise SystemExit(f"projector mcp: {exc}") from None
    build_server(catalog, device, models).run("stdio")
    return 0
