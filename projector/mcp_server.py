"""``projector mcp LOGDIR``: the projector's data as MCP tools for an assistant (stdio).

Over ``projector_core`` directly, not over HTTP: the runs of one LOGDIR, metadata, search,
neighbours of a point or of a word ("what is near 'blue'"), projections (blocking, with
progress notifications) and k-means clusters described by their members so that the assistant
can name them. Nothing is written; stdout belongs to the protocol, so nothing else prints there.
"""

from __future__ import annotations

import asyncio
import functools
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import TypeAdapter

from projector_core.catalog import Catalog
from projector_core.errors import DataError
from projector_core.jobs import JobManager, JobStatus
from projector_core.kernels.ann import neighbor_index
from projector_core.kernels.backend import get_backend
from projector_core.kernels.search import search as search_values
from projector_core.model import Embedding
from projector_core.projection_params import ProjectionRequest
from projector_core.projections import check, compute

MAX_ROWS = 5000  # coordinates returned by one call; more would swamp the assistant's context
PROGRESS_EVERY = 0.25
F = TypeVar("F", bound=Callable[..., Any])


def plain_errors(fn: F) -> F:
    """Bad requests and bad data (ValueError, DataError, validation) reach the assistant as
    their message; the SDK would hide any other exception behind a generic one."""
    if asyncio.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except ValueError as exc:
                raise ToolError(str(exc)) from None
        return run_async  # type: ignore[return-value]

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
    return run  # type: ignore[return-value]


def label_column(embedding: Embedding) -> str | None:
    """TensorBoard's default label: the first non-numeric metadata column, else the first."""
    metadata = embedding.metadata()
    if metadata is None:
        return None
    return next((n for n in metadata.names if not metadata.is_numeric(n)), metadata.names[0])


class Tools:
    """The tools' logic, kept apart from MCP so that it reads (and fails) like plain Python."""

    def __init__(self, catalog: Catalog, device: str = "cpu") -> None:
        self.catalog = catalog
        self.backend = get_backend(device)
        self.jobs = JobManager()

    def embedding(self, run: str, embedding: str) -> Embedding:
        try:
            return self.catalog.embedding(run, embedding)
        except KeyError:
            known = [f"{r.name}/{e.name}" for r in self.catalog.runs() for e in r.embeddings]
            raise ValueError(f"unknown embedding {run}/{embedding}; known: {', '.join(known)}") from None

    def row(self, embedding: Embedding, index: int) -> dict[str, Any]:
        metadata = embedding.metadata()
        values = {n: metadata.column(n)[index] for n in metadata.names} if metadata else {}
        return {"index": int(index), **values}

    def runs(self) -> list[dict[str, Any]]:
        return [{"run": r.name, "error": r.error, "embeddings": [
            {"name": e.name, "shape": e.shape, "metadata_columns": e.metadata_columns(),
             "label_column": None if "metadata" in e.errors else label_column(e), "error": e.error}
            for e in r.embeddings]} for r in self.catalog.runs()]

    def rows_matching(self, embedding: Embedding, query: str, column: str | None,
                      regex: bool = False) -> list[int]:
        """Rows whose ``column`` (default: the label column) equals ``query`` (any case);
        failing that, contains it."""
        metadata = embedding.metadata()
        if metadata is None:
            raise ValueError(f"{embedding.run}/{embedding.name} has no metadata to search")
        column = column or label_column(embedding)
        if column not in metadata.names:
            raise ValueError(f"unknown column {column!r}; the columns are {', '.join(metadata.names)}")
        values = metadata.column(column)
        if not regex:
            exact = [i for i, v in enumerate(values) if v.casefold() == query.casefold()]
            if exact:
                return exact
        return search_values(values, query, regex)

    def neighbors(self, embedding: Embedding, rows: list[int], k: int,
                  metric: Literal["cosine", "euclidean"]) -> list[dict[str, Any]]:
        """Nearest points to one row, or to the centroid of several (the rows left out)."""
        index = neighbor_index(embedding.fingerprint, embedding.vectors, metric, self.backend)
        if len(rows) == 1:
            found, distances = index.neighbors_of(rows, k, metric)
        else:
            centroid = np.asarray(embedding.vectors()[rows], np.float64).mean(axis=0)
            n = embedding.vectors().shape[0]
            found, distances = index.query(centroid, min(k + len(rows), n), metric)
        skip = set(rows)
        pairs = [(int(i), float(d)) for i, d in zip(found[0], distances[0], strict=True)
                 if int(i) not in skip and i >= 0][:k]
        return [{**self.row(embedding, i), "distance": round(d, 5)} for i, d in pairs]

    def clusters(self, embedding: Embedding, k: int, examples: int) -> list[dict[str, Any]]:
        from sklearn.cluster import KMeans

        vectors = np.asarray(embedding.vectors(), np.float32)
        valid = np.flatnonzero(np.isfinite(vectors).all(axis=1))
        model = KMeans(n_clusters=k, n_init=3, random_state=0).fit(vectors[valid])
        metadata = embedding.metadata()
        out = []
        for c in range(k):
            members = valid[model.labels_ == c]
            spread = np.linalg.norm(vectors[members] - model.cluster_centers_[c], axis=1)
            central = members[np.argsort(spread)[:examples]]
            summary: dict[str, Any] = {"cluster": c, "size": len(members),
                                       "central_points": [self.row(embedding, i) for i in central]}
            if metadata is not None:
                summary["common_values"] = {
                    n: Counter(metadata.column(n)[i] for i in members).most_common(3)
                    for n in metadata.names if not metadata.is_numeric(n)}
            out.append(summary)
        return out


def build_server(catalog: Catalog, device: str = "cpu") -> MCPServer:
    tools = Tools(catalog, device)
    mcp = MCPServer("projector", instructions=(
        "Embeddings of a TensorBoard-style LOGDIR. Start with list_runs; neighbours answer "
        "'what is near X'; clusters gives groups with their central points to name them."))

    @mcp.tool()
    @plain_errors
    def list_runs() -> list[dict[str, Any]]:
        """Runs and their embeddings: shape (points x dimensions), metadata columns, label column."""
        catalog.refresh()
        return tools.runs()

    @mcp.tool()
    @plain_errors
    def metadata(run: str, embedding: str, indices: list[int] | None = None,
                 limit: int = 20) -> list[dict[str, Any]]:
        """Metadata rows of the given point indices (default: the first `limit` points)."""
        found = tools.embedding(run, embedding)
        n = found.shape[0] if found.shape else 0
        rows = indices if indices is not None else list(range(min(limit, n)))
        bad = [i for i in rows if not 0 <= i < n]
        if bad:
            raise ValueError(f"indices out of range 0..{n - 1}: {bad[:5]}")
        return [tools.row(found, i) for i in rows[:MAX_ROWS]]

    @mcp.tool()
    @plain_errors
    def search(run: str, embedding: str, query: str, column: str | None = None,
               regex: bool = False, limit: int = 50) -> dict[str, Any]:
        """Points whose metadata `column` (default: the label column) matches `query`."""
        found = tools.embedding(run, embedding)
        rows = tools.rows_matching(found, query, column, regex)
        return {"count": len(rows), "points": [tools.row(found, i) for i in rows[:limit]]}

    @mcp.tool()
    @plain_errors
    def neighbors(run: str, embedding: str, index: int | None = None, query: str | None = None,
                  column: str | None = None, k: int = 10,
                  metric: Literal["cosine", "euclidean"] = "cosine") -> dict[str, Any]:
        """The k nearest points, in the original space, to point `index` or to the points whose
        label (or `column`) is `query` (their centroid when several match)."""
        found = tools.embedding(run, embedding)
        if (index is None) == (query is None):
            raise ValueError("give either index or query")
        rows = [index] if index is not None else tools.rows_matching(found, query or "", column)
        if not rows:
            raise ValueError(f"no point matches {query!r}")
        return {"of": [tools.row(found, i) for i in rows[:10]],
                "neighbors": tools.neighbors(found, rows, k, metric)}

    @mcp.tool()
    @plain_errors
    async def project(run: str, embedding: str, method: Literal["pca", "tsne", "umap"],
                      ctx: Context, dims: Literal[2, 3] = 2, params: dict[str, Any] | None = None,
                      include_coordinates: bool = True) -> dict[str, Any]:
        """Run a projection to the end (progress is reported as it goes); the coordinates come
        back for up to 5000 points, rounded to 4 decimals."""
        found = tools.embedding(run, embedding)
        request = TypeAdapter(ProjectionRequest).validate_python(
            {"run": run, "embedding": embedding, "method": method, "dims": dims,
             "params": params or {}})
        check(request, found)
        job = tools.jobs.submit(lambda jc: compute(request, found, tools.backend, jc))
        while not job.status.finished:
            await ctx.report_progress(job.progress, 1.0, f"{method}: {job.progress:.0%}")
            await asyncio.sleep(PROGRESS_EVERY)
        if job.status is not JobStatus.DONE:
            raise ValueError(f"{method} {job.status.value}: {job.error}")
        await ctx.report_progress(1.0, 1.0, f"{method}: done")
        result = job.result
        out: dict[str, Any] = {"info": result.info}
        if include_coordinates:
            coords = np.round(result.coordinates[:MAX_ROWS].astype(np.float64), 4)
            out["coordinates"] = [None if not np.isfinite(r).all() else r.tolist() for r in coords]
        return out

    @mcp.tool()
    @plain_errors
    def clusters(run: str, embedding: str, k: int = 8, examples: int = 8) -> list[dict[str, Any]]:
        """k-means groups of the points (original space): size, most central points and the
        commonest metadata values of each, to name the groups from."""
        if not 2 <= k <= 100:
            raise ValueError("k must be between 2 and 100")
        return tools.clusters(tools.embedding(run, embedding), k, examples)

    return mcp


def main(logdir: str | Path, device: str = "cpu") -> int:
    catalog = Catalog(Path(logdir))
    try:
        catalog.refresh()
    except DataError as exc:
        raise SystemExit(f"projector mcp: {exc}") from None
    build_server(catalog, device).run("stdio")
    return 0
