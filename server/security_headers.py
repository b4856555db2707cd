"""Headers on every answer (pages, API, static files, errors) that tell a browser to trust
nothing but this server's own files.

- ``Content-Security-Policy``: scripts, styles, fetches, WebSockets, workers and images from
  this origin only; no inline script or style attribute runs, so markup that reached a page
  (a metadata string, escaped everywhere already) could not run either. The pages hold no
  inline script (the theme is read by ``static/js/theme_first.js``, ``/docs`` starts Swagger
  UI from a file). Images may also be ``blob:`` (sprite thumbnails made from the atlas pages)
  and ``data:`` (Swagger UI's icons are in its stylesheet).
- ``frame-ancestors``: which pages may frame the app: its own and the allowed origins (a
  notebook proxy's), or any page for the notebook widget's server, framed by a notebook page
  whose origin the kernel cannot know (Jupyter, a hub, Colab, VS Code's webviews).
- ``X-Content-Type-Options: nosniff``: a file is only ever read as the type it is sent as.
- ``Referrer-Policy: no-referrer``: a URL may hold the token (``/token/TOKEN/``); no request
  the page makes carries it elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob: data:",
    "connect-src 'self'",  # 'self' covers ws: and wss: to this host and port (CSP 3)
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
])


def content_security_policy(frame_ancestors: Iterable[str] | None) -> str:
    """The policy, with ``frame-ancestors`` (left out: any page may frame the app)."""
    if frame_ancestors is None:
        return CONTENT_SECURITY_POLICY
    return f"{CONTENT_SECURITY_POLICY}; frame-ancestors {' '.join(frame_ancestors)}"


class SecurityHeaders:
    """Adds the headers above to every HTTP answer, and to a refused WebSocket handshake's."""

    def __init__(self, app: ASGIApp, frame_ancestors: Iterable[str] | None = ("'self'",)) -> None:
        self.app = app
        self.headers = {
            "Content-Security-Policy": content_security_policy(frame_ancestors),
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] in ("http.response.start", "websocket.http.response.start"):
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
