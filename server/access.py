"""Who may drive the server: only its own pages, and a token when one is set.

A browser sends a request to any address a page names, with the user's network position: a
page from another site could start jobs or upload data into a server on 127.0.0.1 (a
``multipart/form-data`` POST needs no CORS preflight), or make it compute with an ``<img>``
pointing at a costly GET (no answer needs to come back for the work to be done). And a server
bound beyond loopback is open to everyone on the network. Jupyter answers both the same way:
same-origin checks, and a token. Both are pure ASGI middlewares so that the WebSocket
handshake passes through them too, which FastAPI's HTTP middlewares never see.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit

from fastapi import FastAPI
from starlette.requests import cookie_parser
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

# A navigation the browser marks with these destinations opens a page: a link (document) or an
# iframe (the notebook widget's); an <object> or <embed> navigates too, but is a resource.
PAGE_DESTINATIONS = frozenset({"document", "iframe", "frame"})
TOKEN_PARAMETER = "token"
TOKEN_PATH = "/token/"  # /token/TOKEN/...: the app under a prefix that carries the token
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def add_access_control(app: FastAPI, token: str | None = None,
                       allowed_origins: Iterable[str] | None = None,
                       pages: Iterable[str] = ()) -> None:
    """Register both checks (the token one inside, so a foreign request is 403 either way,
    refused before any work or token check).

    ``allowed_origins``: origins other than the server's own whose pages may use it, such as
    a notebook proxy's; by default the origin of ``$PROJECTOR_PROXY_URL`` when it names one.
    ``pages``: the paths of the app's pages, which a link or an iframe of another site may open.
    """
    if token:
        app.add_middleware(TokenRequired, token=token)
    app.add_middleware(OwnPagesOnly, pages=frozenset(pages), allowed_origins=list(
        proxy_origins() if allowed_origins is None else allowed_origins))


def proxy_origins() -> list[str]:
    """The origin of ``$PROJECTOR_PROXY_URL`` (``https://hub.example/user/me/proxy/{port}/``);
    none for a relative one (``/proxy/{port}/``): those pages are judged by Sec-Fetch-Site."""
    origin = origin_of(os.environ.get("PROJECTOR_PROXY_URL", ""))
    return [origin] if origin else []


def origin_of(url: str) -> str | None:
    """``scheme://host:port`` with the default port spelt out, lower case; None if not a URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme.lower(), parts.scheme.lower())
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port or DEFAULT_PORTS[scheme]}"


def _headers(scope: Scope) -> dict[str, str]:
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}


def own_origin(scope: Scope, headers: dict[str, str]) -> str | None:
    """The origin a browser used to reach this request: its scheme and its Host header."""
    host = headers.get("host")
    return origin_of(f"{scope.get('scheme', 'http')}://{host}") if host else None


class OwnPagesOnly:
    """403, before any work starts, for a request a browser says a page of another origin
    made (Fetch Metadata resource isolation), on every route and the WebSocket.

    A browser says where a request comes from: ``Sec-Fetch-Site``, which no page can forge
    (``same-site`` is another port of this host too: refused), and ``Origin`` on writes,
    WebSockets and CORS reads (compared with the request's own scheme, Host and port, and
    with ``allowed_origins``). ``same-origin`` is trusted even when the Origin differs from
    Host: a proxy (Colab, jupyter-server-proxy, a TLS front) rewrote the Host, but the browser
    saw one origin. One exception: a link or an iframe of another site (the notebook widget
    inside Jupyter's page) may open one of the app's pages, whose own requests are then
    same-origin; a navigation to anything else (``/api/export/site``) is refused too.
    Requests with neither header come from no browser (curl, scripts, the Python client) and
    pass.
    """

    def __init__(self, app: ASGIApp, pages: frozenset[str] = frozenset(),
                 allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.pages = pages
        self.allowed = {found for found in map(origin_of, allowed_origins) if found}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reason = (self.refusal(scope) if scope["type"] in ("http", "websocket")
                  and not self._opens_a_page(scope) else None)
        if reason is None:
            await self.app(scope, receive, send)
            return
        await refuse(scope, receive, send, JSONResponse({"detail": reason}, status_code=403))

    def refusal(self, scope: Scope) -> str | None:
        """Why the request is refused, or None."""
        headers = _headers(scope)
        site = headers.get("sec-fetch-site")
        if site == "same-origin":
            return None
        origin = headers.get("origin")
        if origin is not None:
            found = origin_of(origin)
            if found is not None and (found == own_origin(scope, headers) or found in self.allowed):
                return None
            return (f"cross-site request refused: a page of {origin[:100]} may not use this "
                    "server; only its own pages may")
        if site is not None and site != "none":
            return (f"cross-site request refused (Sec-Fetch-Site: {site[:20]}): only this "
                    "server's own pages may use it")
        return None

    def _opens_a_page(self, scope: Scope) -> bool:
        """A link or an iframe opening one of the app's pages (see the class's docstring)."""
        if scope["type"] != "http" or scope["method"] != "GET":
            return False
        headers = _headers(scope)
        return (headers.get("sec-fetch-mode") == "navigate"
                and headers.get("sec-fetch-dest", "document") in PAGE_DESTINATIONS
                and route_path(scope) in self.pages)


def route_path(scope: Scope) -> str:
    """The path the router will see: without the server's root path and the token prefix."""
    path, root = scope["path"], scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):]
    if path.startswith(TOKEN_PATH):
        path = "/" + path[len(TOKEN_PATH):].partition("/")[2]
    return path or "/"


class TokenRequired:
    """401 for any request (route, static file, WebSocket) without the server's token.

    The token comes as ``Authorization: Bearer TOKEN`` (scripts, the Python client), or once as
    ``?token=TOKEN`` in a page's URL: that sets an HttpOnly, SameSite=Strict cookie (which
    the page's own requests then carry, and no other site's) and redirects to the URL without
    it, so the token leaves the address bar. A WebSocket, which cannot follow a redirect, may
    also carry ``?token=``. Compared in constant time.

    A page in an iframe of another site (the notebook widget in Jupyter, VS Code or Colab) gets
    no SameSite cookie, so the app is also served under ``/token/TOKEN/``: the page's URLs are
    all relative, so its every request, static file and WebSocket carries the token there.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()
        # the cookie holds a digest, not the token: any user-chosen token fits a cookie value
        self.cookie_value = hmac.new(self.token, b"projector cookie", hashlib.sha256).hexdigest()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if scope["path"].startswith(TOKEN_PATH):
            given, _, _ = scope["path"][len(TOKEN_PATH):].partition("/")
            if not self._matches(given):
                await refuse(scope, receive, send, _unauthorized(scope, "wrong token"))
                return
            prefix = scope.get("root_path", "") + TOKEN_PATH + given
            await self.app({**scope, "root_path": prefix}, receive, send)  # routed without it
            return
        headers = _headers(scope)
        given = _query_token(scope)
        if given is not None and self._matches(given):
            if scope["type"] == "websocket":
                await self.app(scope, receive, send)
            elif scope["method"] in ("GET", "HEAD"):
                await self._set_cookie_and_redirect(scope, receive, send)
            else:
                await refuse(scope, receive, send, _unauthorized(
                    scope, "send the token as Authorization: Bearer TOKEN, not in the URL"))
            return
        if self._bearer_ok(headers) or (given is None and self._cookie_ok(scope, headers)):
            await self.app(scope, receive, send)
            return
        message = "wrong token" if given is not None or "authorization" in headers else (
            "this server needs a token: open the page with ?token=TOKEN, or send "
            "Authorization: Bearer TOKEN")
        await refuse(scope, receive, send, _unauthorized(scope, message))

    def _matches(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token)

    def _bearer_ok(self, headers: dict[str, str]) -> bool:
        scheme, _, credential = headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and self._matches(credential.strip())

    def _cookie_ok(self, scope: Scope, headers: dict[str, str]) -> bool:
        cookie = cookie_parser(headers.get("cookie", "")).get(cookie_name(scope), "")
        return hmac.compare_digest(cookie.encode(), self.cookie_value.encode())

    async def _set_cookie_and_redirect(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = RedirectResponse(_clean_location(scope), status_code=303)
        response.set_cookie(cookie_name(scope), self.cookie_value, httponly=True,
                            samesite="strict", path="/")
        await response(scope, receive, send)


def cookie_name(scope: Scope) -> str:
    """Per port: browsers send a host's cookies to all its ports, so two servers on one
    machine must not overwrite each other's."""
    server = scope.get("server")
    return f"projector-token-{server[1] if server else 0}"


def _query_token(scope: Scope) -> str | None:
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    return next((value for name, value in pairs if name == TOKEN_PARAMETER), None)


def _clean_location(scope: Scope) -> str:
    """The request's URL without ``token``, relative to its folder: it stays right behind a
    proxy that serves the app under a path prefix."""
    raw = scope.get("raw_path") or scope["path"].encode()
    last = raw.decode("latin-1").rsplit("/", 1)[-1]
    kept = [part for part in scope.get("query_string", b"").decode("latin-1").split("&")
            if part and unquote(part.split("=", 1)[0]) != TOKEN_PARAMETER]
    return "./" + last + ("?" + "&".join(kept) if kept else "")


def _unauthorized(scope: Scope, message: str) -> Response:
    headers = {"WWW-Authenticate": "Bearer"}
    path = route_path(scope)
    if path.startswith("/api") or path == "/openapi.json":
        return JSONResponse({"detail": message}, status_code=401, headers=headers)
    return PlainTextResponse(f"401 Unauthorized: {message}\n", status_code=401, headers=headers)


async def refuse(scope: Scope, receive: Receive, send: Send, response: Response) -> None:
    """Answer with ``response``; a WebSocket handshake gets it as its HTTP answer where the
    server supports that (uvicorn does), else a policy-violation close (HTTP 403)."""
    if scope["type"] == "websocket" and "websocket.http.response" not in scope.get(
            "extensions", {}):
        await send({"type": "websocket.close", "code": 1008})
        return
    await response(scope, receive, send)


def serving_token(token: str | None, no_token: bool, loopback: bool) -> tuple[str | None, bool]:
    """``projector serve``'s token and whether it was generated: the one given; else, bound
    beyond loopback and not opted out with ``--no-token``, a new one (as Jupyter does)."""
    if no_token:
        return None, False
    if token:
        return token, False
    return (None, False) if loopback else (secrets.token_urlsafe(24), True)
