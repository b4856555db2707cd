"""Python client for a running Projector server: ``from projector import Client``.

Every route as a method; arrays come back as float32 numpy arrays (NaN rows for points
without coordinates), metadata as a pandas DataFrame. Blocking and streamed forms::

    client = Client("http://127.0.0.1:6006")   # token=... for `projector serve --token`
    xy = client.project("digits", "digits", "tsne", perplexity=30,
                        on_progress=lambda job: print(job["progress"]), timeout=600)

    async def main():
        await client.project_async("digits", "digits", "umap", dims=3,
                                   on_frame=lambda coords, iteration: ...,   # while it runs
                                   on_done=lambda projection: ...)           # coordinates + info

HTTP uses only the standard library; the streamed form needs the ``websockets`` package
(installed with uvicorn[standard]); ``metadata()`` needs pandas (the notebook extra).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from projector.client.annotations import AnnotationRoutes
from projector.client.answers import Neighbors, ProgressCallback, ProjectorError
from projector.client.events import SILENCE, EventReader, in_thread, landing_steps
from projector.client.job_routes import JobRoutes
from projector.client.uploads import upload_request
from projector.client.wire import OCTET_STREAM, float32, given, job_path, names

if TYPE_CHECKING:
    import pandas as pd


# The routes in groups: projections and jobs (job_routes.py), annotations (annotations.py), and
# here the data, neighbours and search, events, the tiles' questions, structure and comparison,
# and the shared view; HTTP itself is transport.py's Connection, which each group builds on.
class ProjectorClient(JobRoutes, AnnotationRoutes):
    """A running server's API. ``timeout``: seconds one HTTP request may take (the blocking
    projection calls take their own ``timeout`` for the whole wait).

    ``token``: the server's (``projector serve --token``), default ``$PROJECTOR_TOKEN``;
    sent as ``Authorization: Bearer`` with every request and stream. ``user``: who edits
    annotations (``X-Projector-User``; the server records "local" without one)."""

    # -- data ----------------------------------------------------------------------------------
    def health(self) -> bool:
        """Whether the server answers (``GET /api/health``)."""
        return self._json("GET", "/api/health")["status"] == "ok"

    def runs(self) -> list[dict[str, Any]]:
        """Runs with their embeddings: status, shape, metadata columns, label column, limits."""
        return self._json("GET", "/api/runs")

    def embedding(self, run: str, embedding: str) -> dict[str, Any]:
        """One embedding's description, as :meth:`runs` lists it; an unknown one is the
        server's 404, in its words."""
        for found in self.runs():
            if found["name"] == run:
                for item in found["embeddings"]:
                    if item["name"] == embedding:
                        item_found: dict[str, Any] = item
                        return item_found
        self.methods(run, embedding)  # the server's one sentence for an unknown name
        raise ProjectorError(404, f"{run}/{embedding} is not listed")  # gone since

    def tensor(self, run: str, embedding: str) -> np.ndarray:
        """The embedding's vectors, float32 N x D."""
        body, headers = self._request("GET", "/api/tensor", names(run, embedding))
        return float32(body, headers)

    def metadata(self, run: str, embedding: str) -> pd.DataFrame:
        """The metadata table (numbers as numbers, missing values as NaN)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Client.metadata needs pandas: "
                              "pip install 'embedding-projector[notebook]'") from None
        body, _ = self._request("GET", "/api/metadata", names(run, embedding),
                                accept="text/tab-separated-values")
        return pd.read_csv(io.BytesIO(body), sep="\t", quoting=csv.QUOTE_NONE, encoding="utf-8",
                           keep_default_na=False, na_values=[""])

    def metadata_column(self, run: str, embedding: str,
                        column: str) -> tuple[list[str], np.ndarray]:
        """One metadata column as the server holds it: its values (strings, in order of first
        appearance) and one int32 code per row into them, without a table to parse."""
        body, headers = self._request("GET", "/api/metadata/column", {
            **names(run, embedding), "column": column, "kind": "categorical"},
            accept=OCTET_STREAM)
        head = int(headers["x-dictionary-bytes"])
        return json.loads(body[:head]), np.frombuffer(body[head:], "<i4").copy()

    def bookmarks(self, run: str, embedding: str) -> list[dict[str, Any]]:
        """The LOGDIR's bookmark file's states, then the saved ones (with ``saved``: id,
        author, time)."""
        return self._json("GET", "/api/bookmarks", names(run, embedding))

    def save_bookmark(self, run: str, embedding: str, state: dict[str, Any]) -> dict[str, Any]:
        """Save a TensorBoard State in the server's store: it as listed (with ``saved``)."""
        return self._json("POST", "/api/bookmarks", body={**names(run, embedding), "state": state})

    def delete_bookmark(self, run: str, embedding: str, id: int) -> None:
        """Delete the saved bookmark ``id`` from the server's store."""
        self._json("DELETE", "/api/bookmarks", {**names(run, embedding), "id": id})

    def sprite(self, run: str, embedding: str) -> bytes:
        """The sprite image's own bytes (PNG or JPEG)."""
        return self._request("GET", "/api/sprite", names(run, embedding), accept="image/*")[0]

    def sprite_atlas(self, run: str, embedding: str, max_px: int = 8192) -> dict[str, Any]:
        """The thumbnails' layout on browser-safe pages (see :meth:`sprite_page`)."""
        return self._json("GET", "/api/sprite/atlas", {**names(run, embedding), "max_px": max_px})

    def sprite_page(self, run: str, embedding: str, page: int, max_px: int = 8192) -> bytes:
        """Atlas page ``page`` as PNG bytes."""
        return self._request("GET", "/api/sprite/page", {**names(run, embedding), "page": page,
                                                          "max_px": max_px}, accept="image/png")[0]

    def limits(self, run: str, embedding: str) -> dict[str, Any]:
        """What this data allows each method's parameters, and ``k`` of a neighbour query:
        :meth:`methods` for this embedding (its ``projections`` and ``neighbors``)."""
        return self.methods(run, embedding)

    def methods(self, run: str | None = None, embedding: str | None = None) -> dict[str, Any]:
        """The parameter table: ``methods[name]["params"][param]`` is each parameter's type,
        default, bounds and description, beside the method's capabilities (``quick``,
        ``starts_from_layout``, ``streams_frames``, ``supports_3d``); with ``run`` and
        ``embedding`` the bounds and defaults are that data's. The keyword parameters of
        :meth:`project` are these."""
        query = None if run is None or embedding is None else names(run, embedding)
        return self._json("GET", "/api/projections/methods", query)

    def steps(self, run: str) -> list[dict[str, Any]]:
        """The run's tags, each with the steps written for it (``step``, ``embedding``,
        ``rows``, and when it was ``written``)."""
        return self._json("GET", "/api/steps", {"run": run})["timelines"]

    # -- what changes, as it happens (GET /api/events) -------------------------------------------
    def events(self, last_id: str | None = None) -> EventReader:
        """Every change on the server as it happens: iterate for :class:`Event` values (runs,
        embeddings and steps added, changed or removed, ...); ``close()`` it to stop. Resumes
        after ``last_id`` (an event's ``id``) when given."""
        return EventReader(self.base_url, dict(self._auth), last_id)

    def follow_steps(self, run: str, *, tag: str | None = None, written: bool = False,
                     idle: float | None = None) -> Iterator[dict[str, Any]]:
        """Each new step of a training run as it lands (readable whole): ``{run, tag, step,
        embedding, rows, written}``, for as long as you iterate. ``written``: the steps
        already there first; ``idle``: stop after that many seconds without a new step."""
        reader = self._step_reader(idle)
        try:
            yield from landing_steps(reader, lambda: self.steps(run), run, tag, written, idle)
        finally:
            reader.close()

    def follow(self, run: str, on_step: Callable[[dict[str, Any]], Any], *,
               tag: str | None = None, written: bool = False, idle: float | None = None) -> int:
        """Calls ``on_step(step)`` for each new step of ``run`` as it lands (see
        :meth:`follow_steps`) until it returns False or ``idle`` seconds pass without one;
        returns how many it was called with."""
        count = 0
        for step in self.follow_steps(run, tag=tag, written=written, idle=idle):
            count += 1
            if on_step(step) is False:
                break
        return count

    async def follow_steps_async(self, run: str, *, tag: str | None = None,
                                 written: bool = False, idle: float | None = None,
                                 ) -> AsyncIterator[dict[str, Any]]:
        """:meth:`follow_steps` as an async iterator (``async for step in ...``), read on a
        thread; leaving the loop closes the stream."""
        reader = self._step_reader(idle)
        steps = landing_steps(reader, lambda: self.steps(run), run, tag, written, idle)
        async for step in in_thread(steps, reader.close):
            yield step

    def _step_reader(self, idle: float | None) -> EventReader:
        return EventReader(self.base_url, dict(self._auth),
                           silence=SILENCE if idle is None else min(SILENCE, idle))

    def upload(self, vectors: Any, metadata: Any = None, name: str = "upload.npy", *,
               vector_column: str | None = None) -> dict[str, Any]:
        """Serve data as a new run for this server session: its ``run``, ``embedding``, ``shape``.

        ``vectors`` and ``metadata`` take what ``Projector(...)`` and ``show()`` take (one
        normaliser, :mod:`projector_core.formats.inputs`): an array, a torch tensor, a list, a
        DataFrame (of numbers, or with a column of vectors: ``vector_column`` when several), an
        Arrow table; metadata as a DataFrame, Series, dict of columns or list. A path sends the
        file itself (a ``.npy`` or TSV tensor; a metadata TSV)."""
        query, raw, content_type = upload_request(vectors, metadata, name, vector_column)
        return self._json("POST", "/api/uploads", query, raw=raw, content_type=content_type)

    # -- neighbours and search -----------------------------------------------------------------
    def neighbors(self, run: str, embedding: str, index: int | None = None,
                  vector: np.ndarray | list[float] | None = None, k: int = 10,
                  metric: str = "cosine", *,
                  rows: list[int] | np.ndarray | None = None) -> Neighbors:
        """Nearest points to point ``index`` (itself excluded), to ``vector``, or to the
        centroid of ``rows`` ("more like these": search by example, those rows left out),
        ascending: a :class:`Neighbors` pair (``.indices``, ``.distances``; unpacked in that
        order)."""
        if sum(given is not None for given in (index, vector, rows)) != 1:
            raise ValueError("give exactly one of index, vector and rows")
        if rows is not None:
            answer = self._json("POST", "/api/neighbors", body={
                **names(run, embedding), "k": k, "metric": metric,
                "rows": [int(r) for r in np.asarray(rows).ravel()]})
        elif index is not None:
            answer = self._json("GET", "/api/neighbors", {**names(run, embedding),
                                                          "index": index, "k": k,
                                                          "metric": metric})
        else:
            answer = self._json("POST", "/api/neighbors", body={
                **names(run, embedding), "k": k, "metric": metric,
                "vector": [float(v) for v in np.asarray(vector).ravel()]})
        found = answer["neighbors"]
        return Neighbors(np.array([n["index"] for n in found], np.int64),
                         np.array([n["distance"] for n in found], np.float64))

    def search_meaning(self, run: str, embedding: str, text: str | list[str], k: int = 10,
                       job: str | None = None, *, on_progress: ProgressCallback | None = None,
                       timeout: float | None = None) -> dict[str, Any]:
        """Search by meaning: each phrase embedded by the model that made the vectors, its
        ``k`` nearest points (``results[i]["neighbors"]``: index, similarity), and with a
        finished projection ``job`` its ``marker`` on that map. While the server still loads
        the model, waits for its job (``on_progress(job)`` hears it; TimeoutError after
        ``timeout`` seconds), then asks again."""
        query = {**names(run, embedding), "text": [text] if isinstance(text, str) else text,
                 "k": k, **given(job=job)}
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                return self._json("GET", "/api/search/meaning", query)
            except ProjectorError as error:
                loading = error.body.get("job") if isinstance(error.body, dict) else None
                if error.status != 503 or loading is None:
                    raise
            with contextlib.suppress(ProjectorError):  # failed: asked again, the answer says why
                self.wait(loading, on_progress,
                          None if deadline is None else max(0.0, deadline - time.monotonic()))

    def search(self, run: str, embedding: str, column: str, query: str,
               regex: bool = False) -> list[int]:
        """The rows whose ``column`` matches ``query`` (a substring, or a regular expression)."""
        return self._json("GET", "/api/search", {
            **names(run, embedding), "column": column, "query": query,
            "regex": str(regex).lower()})["indices"]

    # -- questions over every point, answered from the tiles -------------------------------------
    def pick(self, job_id: str, x: float, y: float, radius: float,
             axes: str | None = None) -> dict[str, Any]:
        """The nearest point to (x, y) within ``radius``: ``row``, ``distance``, ``coords``
        (all None when no point is that near)."""
        return self._json("GET", job_path(job_id, "pick"),
                          {"x": x, "y": y, "radius": radius, **given(axes=axes)})

    def select(self, job_id: str, *, box: list[float] | None = None,
               polygon: list[list[float]] | None = None, limit: int = 10_000,
               column: str | None = None, axes: str | None = None) -> dict[str, Any]:
        """The points inside a box [x0, y0, x1, y1] or polygon: ``count``, the first
        ``limit`` ``rows``, ``truncated``, ``selection``, and with ``column`` its ``counts``."""
        return self._json("POST", job_path(job_id, "select"), body={
            **given(box=box, polygon=polygon, column=column, axes=axes), "limit": limit})

    def search_points(self, job_id: str, column: str, query: str, regex: bool = False,
                      limit: int = 10_000) -> dict[str, Any]:
        """A job's points whose ``column`` matches: ``count``, ``rows``, ``truncated`` and
        the matching dictionary ``codes`` (the tiles' codes with ``column``)."""
        return self._json("GET", job_path(job_id, "search"), {
            "column": column, "query": query, "regex": str(regex).lower(), "limit": limit})

    # -- structure and comparison ----------------------------------------------------------------
    def clusters(self, job_id: str, min_cluster_size: int | None = None,
                 label_column: str | None = None, space: str = "projection") -> dict[str, Any]:
        """HDBSCAN clusters of a finished projection: ``assignment`` and ``clusters``."""
        return self._json("GET", job_path(job_id, "clusters"), given(
            min_cluster_size=min_cluster_size, label_column=label_column, space=space))

    def quality(self, job_id: str, k: int = 10, metric: str = "cosine", *,
                on_progress: ProgressCallback | None = None,
                timeout: float | None = None) -> dict[str, Any]:
        """Per-point neighbourhood kept, trustworthiness and continuity of a projection (as
        a job, minutes on large data: ``on_progress`` hears its status, ``timeout`` bounds
        the wait)."""
        query = {"k": k, "metric": metric}
        measuring = self._json("GET", job_path(job_id, "quality"), {**query, "background": "true"})
        self.wait(measuring["job"], on_progress, timeout)
        return self._json("GET", job_path(job_id, "quality"), query)

    def compare(self, run: str, embedding: str, other_run: str, other_embedding: str,
                k: int = 10, metric: str = "cosine", top: int = 100,
                timeout: float | None = None) -> dict[str, Any]:
        """How each point's k-neighbourhood changed from A to B (as a job, so ``timeout``
        bounds the wait)."""
        query = {**names(run, embedding), "other_run": other_run,
                 "other_embedding": other_embedding, "k": k, "metric": metric, "top": top}
        job_id = self._json("GET", "/api/compare", {**query, "background": "true"})["job"]
        self.wait(job_id, timeout=timeout)
        return self._json("GET", "/api/compare", query)

    def compare_pairs(self) -> list[dict[str, Any]]:
        """Pairs worth comparing: consecutive steps of a tag, one tensor name in two runs."""
        return self._json("GET", "/api/compare/pairs")["pairs"]

    # -- the view a notebook widget shares with its page ----------------------------------------
    def session(self, since: int = -1, timeout: float = 0) -> dict[str, Any]:
        """The shared view (``selection``, ``color_by``, ``projection``...); with ``since``,
        waits up to ``timeout`` seconds for a version past it."""
        return self._json("GET", "/api/session/state", {"since": since, "timeout": timeout})

    def update_session(self, **changes: Any) -> dict[str, Any]:
        """Set fields of the shared view; an unknown column or an index past N is refused."""
        return self._json("POST", "/api/session/state", body=changes)


Client = ProjectorClient  # ``from projector import Client``
