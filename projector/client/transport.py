"""HTTP and the job stream, as the client speaks them: one request over the standard library
(a refusal raised as :class:`ProjectorError` with the server's detail), the
:class:`Connection` every group of routes asks through (address, token, user), and a job's
WebSocket stream read to its end (frames handed on, the final coordinates returned)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import numpy as np

from projector.client.answers import FrameCallback, Projection, ProjectorError
from projector.client.wire import OCTET_STREAM, USER_HEADER, detail, json_body


def request(base_url: str, auth: dict[str, str], timeout: float, method: str, path: str,
            query: dict[str, Any] | None = None, body: Any = None,
            accept: str = "application/json", raw: bytes | None = None,
            content_type: str = OCTET_STREAM) -> tuple[bytes, dict[str, str]]:
    """(body, headers with lower-case names); ``body`` is sent as JSON, ``raw`` as is."""
    url = base_url + path
    if query:
        url += "?" + urllib.parse.urlencode(query, doseq=True)  # a list: repeated
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    kind = content_type if raw is not None else "application/json"
    sent = urllib.request.Request(url, data=data, method=method, headers={
        "Accept": accept, **({"Content-Type": kind} if data is not None else {}), **auth})
    try:
        with urllib.request.urlopen(sent, timeout=timeout) as response:
            headers = {name.lower(): value for name, value in response.headers.items()}
            return response.read(), headers
    except urllib.error.HTTPError as error:
        answer = error.read()
        raise ProjectorError(error.code, detail(answer), json_body(answer)) from None


class Connection:
    """One server: its address, the token and user sent with every request, and the two ways
    a route is asked (for JSON, for bytes). The client's groups of routes build on it."""

    def __init__(self, base_url: str = "http://127.0.0.1:6006", timeout: float = 60.0,
                 token: str | None = None, user: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.user = user
        token = token if token is not None else os.environ.get("PROJECTOR_TOKEN")
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}
        if user:
            self._auth[USER_HEADER] = user

    def _json(self, method: str, path: str, query: dict[str, Any] | None = None,
              body: Any = None, **send: Any) -> Any:
        content, _ = self._request(method, path, query, body, **send)
        return json.loads(content)

    def _request(self, method: str, path: str, query: dict[str, Any] | None = None,
                 body: Any = None, accept: str = "application/json", raw: bytes | None = None,
                 content_type: str = OCTET_STREAM) -> tuple[bytes, dict[str, str]]:
        """(body, headers with lower-case names); ``body`` is sent as JSON, ``raw`` as is."""
        return request(self.base_url, self._auth, self.timeout, method, path, query, body,
                       accept, raw, content_type)


async def follow_stream(base_url: str, auth: dict[str, str], job_id: str,
                        on_frame: FrameCallback | None) -> Projection:
    """The job's stream read to its end: ``on_frame(coordinates, iteration)`` for each
    intermediate frame; the done projection, or :class:`ProjectorError` for a job that
    failed or was cancelled."""
    import websockets

    url = base_url.replace("http", "ws", 1) + f"/api/jobs/{job_id}/stream"
    header: dict[str, Any] = {}
    final: np.ndarray | None = None
    status: dict[str, Any] = {}
    async with websockets.connect(url, max_size=None, additional_headers=auth) as socket:
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
