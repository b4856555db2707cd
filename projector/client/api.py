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

import asyncio
import csv
import io
import json
import os
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from projector.client.wire import (
    detail,
    float32,
    given,
    job_path,
    names,
    part,
    projection_body,
)

if TYPE_CHECKING:
    import pandas as pd

OCTET_STREAM = "application/octet-stream"


class ProjectorError(RuntimeError):
    """The server refused a request; ``status`` is the HTTP status, the message its detail."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail


@dataclass(frozen=True)
class Projection:
    coordinates: np.ndarray  # float32 [N, k]
    info: dict[str, Any]
    job: str


FrameCallback = Callable[[np.ndarray, "int | None"], Any]
DoneCallback = Callable[[Projection], Any]
ProgressCallback = Callable[[dict[str, Any]], Any]
POLL_SECONDS = 0.2


class ProjectorClient:
    """A running server's API. ``timeout``: seconds one HTTP request may take (the blocking
    projection calls take their own ``timeout`` for the whole wait).

    ``token``: the server's (``projector serve --token``), default ``$PROJECTOR_TOKEN``;
    sent as ``Authorization: Bearer`` with every request and stream."""

    def __init__(self, base_url: str = "http://127.0.0.1:6006", timeout: float = 60.0,
                 token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        token = token if token is not None else os.environ.get("PROJECTOR_TOKEN")
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}

    # -- data ----------------------------------------------------------------------------------
    def health(self) -> bool:
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
        return self._json("GET", "/api/bookmarks", names(run, embedding))

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
        """The run's tags, each with the steps written for it."""
        return self._json("GET", "/api/steps", {"run": run})["timelines"]

    def upload(self, vectors: np.ndarray | str | Path, metadata: Any = None,
               name: str = "upload.npy") -> dict[str, Any]:
        """Serve an array (or a .npy/TSV file) as a new run for this server session, with
        optional metadata (a DataFrame, or a TSV file): its ``run``, ``embedding``, ``shape``."""
        if isinstance(vectors, str | Path):
            name, tensor = Path(vectors).name, Path(vectors).read_bytes()
        else:
            buffer = io.BytesIO()
            np.save(buffer, np.asarray(vectors, np.float32), allow_pickle=False)
            tensor = buffer.getvalue()
        if metadata is None:
            return self._json("POST", "/api/uploads", {"name": name}, raw=tensor)
        if isinstance(metadata, str | Path):
            table, table_name = Path(metadata).read_bytes(), Path(metadata).name
        else:
            table, table_name = metadata.to_csv(sep="\t", index=False).encode(), "metadata.tsv"
        boundary = secrets.token_hex(16)
        body = b"".join(part(boundary, field, filename, data) for field, filename, data in
                        (("tensor", name, tensor), ("metadata", table_name, table)))
        return self._json("POST", "/api/uploads", raw=body + f"--{boundary}--\r\n".encode(),
                          content_type=f"multipart/form-data; boundary={boundary}")

    # -- neighbours and search -----------------------------------------------------------------
    def neighbors(self, run: str, embedding: str, index: int | None = None,
                  vector: np.ndarray | list[float] | None = None, k: int = 10,
                  metric: str = "cosine", *,
                  rows: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Nearest points to point ``index`` (itself excluded), to ``vector``, or to the
        centroid of ``rows`` (those rows left out), ascending: (indices, distances)."""
        if sum(given is not None for given in (index, vector, rows)) != 1:
            raise ValueError("give exactly one of index, vector and rows")
        if rows is not None:
            answer = self._json("POST", "/api/neighbors", body={
                **names(run, embedding), "k": k, "metric": metric, "rows": list(rows)})
        elif index is not None:
            answer = self._json("GET", "/api/neighbors", {**names(run, embedding),
                                                          "index": index, "k": k,
                                                          "metric": metric})
        else:
            answer = self._json("POST", "/api/neighbors", body={
                **names(run, embedding), "k": k, "metric": metric,
                "vector": [float(v) for v in np.asarray(vector).ravel()]})
        found = answer["neighbors"]
        return (np.array([n["index"] for n in found], np.int64),
                np.array([n["distance"] for n in found], np.float64))

    def search(self, run: str, embedding: str, column: str, query: str,
               regex: bool = False) -> list[int]:
        return self._json("GET", "/api/search", {
            **names(run, embedding), "column": column, "query": query,
            "regex": str(regex).lower()})["indices"]

    # -- projections ---------------------------------------------------------------------------
    def project(self, run: str, embedding: str, method: str, dims: int = 2,
                device: str | None = None, *, on_progress: ProgressCallback | None = None,
                timeout: float | None = None, **params: Any) -> np.ndarray:
        """Compute a projection and wait for it: float32 [N, k] (see :meth:`projection`).
        ``params`` are the method's parameters, as :meth:`methods` lists them."""
        return self.projection(run, embedding, method, dims, device, on_progress=on_progress,
                               timeout=timeout, **params).coordinates

    def projection(self, run: str, embedding: str, method: str, dims: int = 2,
                   device: str | None = None, *, on_progress: ProgressCallback | None = None,
                   timeout: float | None = None, **params: Any) -> Projection:
        """As :meth:`project`, with the result's info (e.g. explained variance ratios) and
        job id. ``on_progress(job)`` hears the job's status as it runs; ``timeout`` seconds
        bound the wait (TimeoutError; the job goes on: :meth:`wait` for it again)."""
        job_id = self.start(run, embedding, method, dims, device, **params)
        self.wait(job_id, on_progress, timeout)
        return self.result(job_id)

    def start(self, run: str, embedding: str, method: str, dims: int = 2,
              device: str | None = None, **params: Any) -> str:
        """Queue a projection; returns the job id."""
        return self._json("POST", "/api/projections",
                          body=projection_body(run, embedding, method, dims, device,
                                                params))["job"]

    def wait(self, job_id: str, on_progress: ProgressCallback | None = None,
             timeout: float | None = None) -> dict[str, Any]:
        """Block until the job is done (its status); ProjectorError when it fails or is
        cancelled, TimeoutError after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.job(job_id)
            if on_progress is not None:
                on_progress(status)
            if status["status"] == "done":
                return status
            if status["status"] in ("failed", "cancelled"):
                raise ProjectorError(409, f"job {job_id} {status['status']}"
                                          + (f": {status['error']}" if status["error"] else ""))
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} is still {status['status']} after {timeout} s "
                                   f"({status['progress']:.0%})")
            time.sleep(POLL_SECONDS)

    def jobs(self) -> list[dict[str, Any]]:
        """Every job the server keeps, with what it computes (kind, method, run, embedding)."""
        return self._json("GET", "/api/jobs")["jobs"]

    def job(self, job_id: str) -> dict[str, Any]:
        return self._json("GET", job_path(job_id))

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self._json("DELETE", job_path(job_id))

    def pause(self, job_id: str) -> dict[str, Any]:
        return self._json("POST", job_path(job_id, "pause"))

    def resume(self, job_id: str) -> dict[str, Any]:
        return self._json("POST", job_path(job_id, "resume"))

    def result(self, job_id: str) -> Projection:
        body, headers = self._request("GET", job_path(job_id, "result"), accept=OCTET_STREAM)
        return Projection(float32(body, headers), json.loads(headers.get("x-info", "{}")),
                          job_id)

    def lod_order(self, job_id: str, axes: str | None = None) -> np.ndarray:
        """A done job's points in level-of-detail order (int32): any prefix covers the map
        evenly, as the page draws large data."""
        body, _ = self._request("GET", job_path(job_id, "lod"), given(axes=axes),
                                accept=OCTET_STREAM)
        return np.frombuffer(body, "<i4").copy()

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

    async def project_async(self, run: str, embedding: str, method: str, dims: int = 2, *,
                            on_frame: FrameCallback | None = None,
                            on_done: DoneCallback | None = None,
                            on_start: Callable[[str], Any] | None = None,
                            device: str | None = None, **params: Any) -> Projection:
        """Start a projection and follow its stream: ``on_start(job_id)`` once queued,
        ``on_frame(coordinates, iteration)`` for each intermediate frame (a read-only array),
        ``on_done(projection)`` at the end; the projection is also returned.

        Cancelling the awaiting task cancels the job on the server. A job that fails or is
        cancelled raises :class:`ProjectorError`.
        """
        job_id = await asyncio.to_thread(self.start, run, embedding, method, dims, device,
                                         **params)
        if on_start is not None:
            on_start(job_id)
        try:
            projection = await self._follow(job_id, on_frame)
        except asyncio.CancelledError:
            await asyncio.to_thread(self.cancel, job_id)
            raise
        if on_done is not None:
            on_done(projection)
        return projection

    async def _follow(self, job_id: str, on_frame: FrameCallback | None) -> Projection:
        import websockets

        url = self.base_url.replace("http", "ws", 1) + f"/api/jobs/{job_id}/stream"
        header: dict[str, Any] = {}
        final: np.ndarray | None = None
        status: dict[str, Any] = {}
        async with websockets.connect(url, max_size=None, additional_headers=self._auth) as socket:
            async for message in socket:
                if isinstance(message, str):
                    decoded = json.loads(message)
                    if decoded.get("type") == "frame":
                        header = decoded
                    else:
                        status = decoded
                    continue
                coordinates = np.frombuffer(message, "<f4").reshape(header["shape"])
                if header.get("final"):
                    final = coordinates
                elif on_frame is not None:
                    on_frame(coordinates, header.get("iteration"))
        if status.get("status") != "done" or final is None:
            raise ProjectorError(409, f"job {job_id} ended {status.get('status', 'unexpectedly')}"
                                      + (f": {status['error']}" if status.get("error") else ""))
        return Projection(final, status.get("info", {}), job_id)

    # -- the view a notebook widget shares with its page ----------------------------------------
    def session(self, since: int = -1, timeout: float = 0) -> dict[str, Any]:
        """The shared view (``selection``, ``color_by``, ``projection``...); with ``since``,
        waits up to ``timeout`` seconds for a version past it."""
        return self._json("GET", "/api/session/state", {"since": since, "timeout": timeout})

    def update_session(self, **changes: Any) -> dict[str, Any]:
        """Set fields of the shared view; an unknown column or an index past N is refused."""
        return self._json("POST", "/api/session/state", body=changes)

    # -- HTTP ----------------------------------------------------------------------------------
    def _json(self, method: str, path: str, query: dict[str, Any] | None = None,
              body: Any = None, **send: Any) -> Any:
        content, _ = self._request(method, path, query, body, **send)
        return json.loads(content)

    def _request(self, method: str, path: str, query: dict[str, Any] | None = None,
                 body: Any = None, accept: str = "application/json", raw: bytes | None = None,
                 content_type: str = "application/octet-stream") -> tuple[bytes, dict[str, str]]:
        """(body, headers with lower-case names); ``body`` is sent as JSON, ``raw`` as is."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        kind = content_type if raw is not None else "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers={
            "Accept": accept, **({"Content-Type": kind} if data is not None else {}),
            **self._auth})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                headers = {name.lower(): value for name, value in response.headers.items()}
                return response.read(), headers
        except urllib.error.HTTPError as error:
            raise ProjectorError(error.code, detail(error.read())) from None


Client = ProjectorClient  # ``from projector import Client``
