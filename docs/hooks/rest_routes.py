"""mkdocs hook: the REST API page's route list is the app's own OpenAPI document, at build time.

A page holding the marker ``<!-- rest-routes -->`` gets every route ``create_app`` serves, with
the first line of its description, so a new route is listed without anyone remembering to.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

MARKER = "<!-- rest-routes -->"


def _route_table() -> str:
    from projector.server.app import create_app

    with tempfile.TemporaryDirectory() as empty:  # no LOGDIR needed: the routes are the same
        spec = create_app(empty, cache_dir=Path(empty) / "cache").openapi()
    rows = ["| method | route | what it does |", "|---|---|---|"]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            said = (operation.get("description") or operation.get("summary") or "").strip()
            first = said.split("\n\n")[0].replace("\n", " ").replace("|", "\\|")
            rows.append(f"| {method.upper()} | `{path}` | {first} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker with the route table; other pages pass unchanged."""
    return markdown.replace(MARKER, _route_table()) if MARKER in markdown else markdown
