"""Python client for a running Projector server.

Two forms, like a job function whose result you either wait for or receive by callback::

    client = ProjectorClient("http://127.0.0.1:6006")   # token=... for `projector serve --token`
    xy = client.project("digits", "digits", "tsne", perplexity=30)       # blocks, returns N x 2

    async def main():
        await client.project_async("digits", "digits", "umap", dims=3,
                                   on_frame=lambda coords, iteration: ...,   # while it runs
                                   on_done=lambda projection: ...)           # coordinates + info

HTTP uses only the standard library; the streamed form needs the ``websockets`` package
(installed with uvicorn[standard]). Coordinates are float32 arrays, NaN rows for points
without coordinates.
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

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


class ProjectorClient:
    """``token``: the server's (``projector serve --token``), default ``$PROJECTOR_TOKEN``;
    sent as ``Authorization: Bearer`` with every request and stream."""

    def __init__(self, base_url: str = "http://127.0.0.1:6006", timeout: float = 60.0,
                 token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        token = token if token is not None else os.environ.get("PROJECTOR_TOKEN")
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}

    # -- data ----------------------------------------------------------------------------------
    def runs(self) -> list[dict[str, Any]]:
        return self._json("GET", "/api/runs")

    def tensor(self, run: str, embedding: str) -> np.ndarray:
        body, headers = self._request("GET", "/api/tensor", {"run": run, "embedding": embedding})
        return _float32(body, headers)

    def neighbors(self, run: str, embedding: str, index: int | None = None,
                  vector: np.ndarray | list[float] | None = None, k: int = 10,
                  metric: str = "cosine") -> tuple[np.ndarray, np.ndarray]:
        """Nearest points to point ``index`` (itself excluded) or to ``vector``, ascending:
        (indices, distances)."""
        if (index is None) == (vector is None):
            raise ValueError("give exactly one of index and vector")
        if index is not None:
            answer = self._json("GET", "/api/neighbors", {"run": run, "embedding": embedding,
                                                          "index": index, "k": k,
                                                          "metric": metric})
        else:
            answer = self._json("POST", "/api/neighbors", body={
                "run": run, "embedding": embedding, "k": k, "metric": metric,
                "vector": [float(v) for v in np.asarray(vector).ravel()]})
        found = answer["neighbors"]
        return (np.array([n["index"] for n in found], np.int64),
                np.array([n["distance"] for n in found], np.float64))

    def search(self, run: str, embedding: str, column: str, query: str,
               regex: bool = False) -> list[int]:
        return self._json("GET", "/api/search", {
            "run": run, "embedding": embedding, "column": column, "query": query,
            "regex": str(regex).lower()})["indices"]

    # -- projections ---------------------------------------------------------------------------
    def project(self, run: str, embedding: str, method: str, dims: int = 2,
                device: str | None = None, **params: Any) -> np.ndarray:
        """Compute a projection and wait for it: float32 [N, k]."""
        return self.projection(run, embedding, method, dims, device, **params).coordinates

    def projection(self, run: str, embedding: str, method: str, dims: int = 2,
                   device: str | None = None, **params: Any) -> Projection:
        """As :meth:`project`, with the result's info (e.g. explained variance ratios)."""
        body, headers = self._request(
            "POST", "/api/projections", {"wait": "true"},
            _projection_body(run, embedding, method, dims, device, params),
            accept=OCTET_STREAM, wait=True)
        return Projection(_float32(body, headers), json.loads(headers.get("x-info", "{}")),
                          headers.get("x-job", ""))

    def start(self, run: str, embedding: str, method: str, dims: int = 2,
              device: str | None = None, **params: Any) -> str:
        """Queue a projection; returns the job id."""
        return self._json("POST", "/api/projections",
                          body=_projection_body(run, embedding, method, dims, device,
                                                params))["job"]

    def job(self, job_id: str) -> dict[str, Any]:
        return self._json("GET", f"/api/jobs/{urllib.parse.quote(job_id)}")

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self._json("DELETE", f"/api/jobs/{urllib.parse.quote(job_id)}")

    def result(self, job_id: str) -> Projection:
        body, headers = self._request("GET", f"/api/jobs/{urllib.parse.quote(job_id)}/result",
                                      accept=OCTET_STREAM)
        return Projection(_float32(body, headers), json.loads(headers.get("x-info", "{}")),
                          job_id)

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

    # -- HTTP ----------------------------------------------------------------------------------
    def _json(self, method: str, path: str, query: dict[str, Any] | None = None,
              body: Any = None) -> Any:
        content, _ = self._request(method, path, query, body)
        return json.loads(content)

    def _request(self, method: str, path: str, query: dict[str, Any] | None = None,
                 body: Any = None, accept: str = "application/json",
                 wait: bool = False) -> tuple[bytes, dict[str, str]]:
        """(body, headers with lower-case names); ``wait`` lifts the timeout."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers={
            "Accept": accept, **({"Content-Type": "application/json"} if data else {}),
            **self._auth})
        try:
            with urllib.request.urlopen(request, timeout=None if wait else self.timeout
                                        ) as response:
                headers = {name.lower(): value for name, value in response.headers.items()}
                return response.read(), headers
        except urllib.error.HTTPError as error:
            raise ProjectorError(error.code, _detail(error.read())) from None


def _projection_body(run: str, embedding: str, method: str, dims: int, device: str | None,
                     params: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"run": run, "embedding": embedding, "method": method, "dims": dims,
                            "params": params}
    if device is not None:
        body["device"] = device
    return body


def _float32(body: bytes, headers: dict[str, str]) -> np.ndarray:
    shape = tuple(int(s) for s in headers["x-shape"].split(","))
    return np.frombuffer(body, "<f4").reshape(shape).copy()


def _detail(body: bytes) -> str:
    try:
        detail = json.loads(body)["detail"]
    except (ValueError, KeyError, TypeError):
        return body.decode(errors="replace")
    return detail if isinstance(detail, str) else json.dumps(detail)
