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
the LOGDIR; stdout belongs to the protocol, so nothing else prints there.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import numpy as np
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, TypeAdapter, ValidationError, WithJsonSchema

from projector.mcp_answers import Answers, OwnService, RunningServer, ServerRefused
from projector.server.plain_arguments import load_catalog
from projector_core.data.catalog import PlainOptions
from projector_core.data.steps import Step, Timeline, step_and_before
from projector_core.errors import DataError
from projector_core.projection.methods import METHODS
from projector_core.projection.params import ProjectionRequest
from projector_core.semantic.declarations import found_models
from projector_core.service import NotDone
from projector_core.service.neighbors import check_rows

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
# Checked by the request model (ProjectionRequest), so a wrong value is refused with the
# sentence every door says ("pca.dims: Input should be 2 or 3"); the schema still says 2 or 3.
Dims = Annotated[int, WithJsonSchema({
    "type": "integer", "enum": [2, 3], "default": 2,
    "description": "Output dimensions: the columns returned (PCA: params.components when "
                   "given)"})]
OptionalRun = Annotated[str | None, Field(description="Run name; default: the job's")]
OptionalEmbedding = Annotated[str | None, Field(description="Embedding name; default: the job's")]
JobId = Annotated[str | None, Field(description="A finished projection job (from project); "
                                                "run and embedding are then its own")]
Metric = Literal["cosine", "euclidean"]
_REQUEST = TypeAdapter(ProjectionRequest)


def _message(error: BaseException) -> str:
    """One readable sentence for any failure (the SDK would hide all but its own)."""
    if isinstance(error, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
                         for e in error.errors(include_url=False))
    if isinstance(error, ValueError | LookupError | NotDone | ServerRefused):
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


class _Server(MCPServer):
    """An MCP server whose tools refuse what they cannot take in one sentence: an argument
    they do not have is named (the SDK would drop it and answer something else), a value
    of the wrong type is said as ``field: message``, not as pydantic's dump."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        tool = next((t for t in await self.list_tools() if t.name == name), None)
        if tool is not None:
            known = tool.input_schema.get("properties", {})
            unknown = [key for key in arguments if key not in known]
            if unknown:
                raise ToolError(f"Error executing tool {name}: unknown argument "
                                f"{', '.join(map(repr, unknown))}; {name} takes "
                                f"{', '.join(known)}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if isinstance(error.__cause__, ValidationError):
                raise ToolError(f"Error executing tool {name}: "
                                f"{_message(error.__cause__)}") from None
            raise


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


def build_server(ask: Answers) -> MCPServer:
    tools = Tools(ask)
    mcp = _Server("projector", version=_version(), description=ask.description, instructions=(
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

    from projector.mcp_annotations import add_annotation_tools  # it builds on this module

    add_annotation_tools(tool, ask, tools)
    return mcp


def _column(column: tuple[list[str], np.ndarray]) -> tuple[list[Any], np.ndarray]:
    values, codes = column
    return _typed(values), codes


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
