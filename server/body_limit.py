"""Bounds on request bodies, enforced while the body streams in (not after it is buffered).

The one place a body's size is decided: every request gets the app's limit, except the
paths given their own (``POST /api/uploads`` takes the upload limit and says it in its own
words), so no route has a second, shadowed limit of its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024


def _generic_message(max_bytes: int) -> str:
    return f"request body is larger than {max_bytes} bytes"


@dataclass(frozen=True)
class BodyLimit:
    """The most bytes a body may have, and what a 413 says when one has more."""

    max_bytes: int
    explain: Callable[[int], str] = _generic_message

    @property
    def message(self) -> str:
        return self.explain(self.max_bytes)


class BodySizeLimit:
    """Answers 413 as soon as a request body passes its limit (declared or streamed):
    ``max_bytes``, or the :class:`BodyLimit` that ``paths`` gives the request's path."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES,
                 paths: Mapping[str, BodyLimit] | None = None) -> None:
        self.app = app
        self.default = BodyLimit(max_bytes)
        self.paths = dict(paths or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, root = scope.get("path", ""), scope.get("root_path", "")
        route = path[len(root):] if root and path.startswith(root) else path  # /t/TOKEN/...
        limit = self.paths.get(route, self.default)
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > limit.max_bytes:
                await _reject(send, limit)
                return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit.max_bytes:
                    raise _TooLarge(limit)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _TooLarge:
            if not started:
                await _reject(send, limit)


async def _reject(send: Send, limit: BodyLimit) -> None:
    body = json.dumps({"detail": limit.message}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class _TooLarge(HTTPException):
    """Raised from ``receive``. An HTTPException, because FastAPI turns any other exception met
    while reading a body into "400 There was an error parsing the body"."""

    def __init__(self, limit: BodyLimit) -> None:
        super().__init__(413, limit.message)
