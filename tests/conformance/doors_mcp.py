"""The MCP door: ``projector mcp`` in a subprocess, driven by the ``mcp`` SDK's own stdio client.

One session is held open for the whole suite (starting the server costs seconds): its event
loop runs in a thread of its own (anyio's blocking portal), and each tool call is sent to it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from projector.mcp_answers import ASSISTANT
from tests.conformance.answers import (
    Refused,
    clusters_answer,
    column_answer,
    edit_answer,
    quality_answer,
)
from tests.conformance.dataset import Blobs, N

ROOT = Path(__file__).resolve().parents[2]
WAIT = 600  # seconds a tool call may take on a loaded two-core machine


class McpSession:
    """A started ``projector mcp ARGS`` and its initialised client session."""

    def __init__(self, portal: BlockingPortal, args: list[str], cache: Path) -> None:
        env = {**os.environ, "PROJECTOR_CACHE_DIR": str(cache),  # NUMBA_CACHE_DIR shared
               "PROJECTOR_ANNOTATIONS": str(cache / "annotations.sqlite")}
        server = StdioServerParameters(command=sys.executable,
                                       args=["-m", "projector.server.cli", "mcp", *args],
                                       env=env, cwd=str(ROOT))
        self.portal = portal
        with contextlib.ExitStack() as stack:  # closed here if the server does not start
            read, write = stack.enter_context(portal.wrap_async_context_manager(stdio_client(server)))
            self.session = stack.enter_context(portal.wrap_async_context_manager(
                ClientSession(read, write, read_timeout_seconds=WAIT)))
            portal.call(self.session.initialize)
            self._stack = stack.pop_all()

    def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """The tool's answer (JSON), or :class:`Refused` with the error it sent (less the
        SDK's framing, "Error executing tool NAME: ", as the HTTP status is the REST door's)."""
        result = self.portal.call(self.session.call_tool, tool, arguments)
        text = result.content[0].text
        if result.is_error:
            raise Refused(text.removeprefix(f"Error executing tool {tool}: "))
        return json.loads(text)

    def close(self) -> None:
        self._stack.close()


@contextlib.contextmanager
def mcp_sessions() -> Iterator[BlockingPortal]:
    with start_blocking_portal() as portal:
        yield portal


class Mcp:
    """Each operation as an assistant asks it: one tool call (two where a job comes first)."""

    def __init__(self, portal: BlockingPortal, blobs: Blobs, cache: Path) -> None:
        self.portal = portal
        self.blobs = blobs
        self.cache = cache
        self.main = McpSession(portal, [str(blobs.logdir)], cache)
        self._jobs: dict[str, str] = {}

    def close(self) -> None:
        self.main.close()

    def _project(self, method: str, dims: int, request: dict[str, Any]) -> dict[str, Any]:
        return self.main.call("project", {
            "run": request["run"], "embedding": request["embedding"], "method": method,
            "dims": request.get("dims", dims), "params": request.get("params"),
            "max_points": N})

    def _coordinates(self, method: str, dims: int, request: dict[str, Any]) -> np.ndarray:
        return np.array(self._project(method, dims, request)["coordinates"], np.float32)

    def _job(self, request: dict[str, Any]) -> str:
        of = request["of"]
        key = repr(sorted(of.items()))
        if key not in self._jobs:
            projected = self._project(of["method"], of["dims"], {**request, "max_points": 0})
            self._jobs[key] = projected["job"]
        return self._jobs[key]

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        session = McpSession(self.portal, [str(self.blobs.npy), "--metadata", str(self.blobs.tsv)],
                             self.cache / "load")
        try:
            (run,) = session.call("list_runs", {})
            (embedding,) = run["embeddings"]
            rows = session.call("metadata", {"run": run["run"], "embedding": embedding["name"],
                                             "limit": embedding["shape"][0]})
        finally:
            session.close()
        columns = [name for name in rows[0] if name != "index"]
        return {"rows": embedding["shape"][0],
                "metadata": {name: [row[name] for row in rows] for name in columns}}

    def pca_2d(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates("pca", 2, request)

    def pca_3d(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates("pca", 3, request)

    def tsne(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates("tsne", 2, request)

    def umap(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates("umap", 2, request)

    def _neighbors(self, request: dict[str, Any], **where: Any) -> dict[str, Any]:
        found = self.main.call("neighbors", {"run": request["run"], "embedding": request["embedding"],
                                             "k": request["k"], "metric": request["metric"], **where})
        return {"indices": [n["index"] for n in found["neighbors"]],
                "distances": [n["distance"] for n in found["neighbors"]]}

    def neighbors_of_row(self, request: dict[str, Any]) -> dict[str, Any]:
        return self._neighbors(request, index=request["index"])

    def neighbors_of_label(self, request: dict[str, Any]) -> dict[str, Any]:
        return self._neighbors(request, query=request["query"], column=request["column"])

    def search(self, request: dict[str, Any]) -> list[int]:
        found = self.main.call("search", {"run": request["run"], "embedding": request["embedding"],
                                          "column": request["column"], "query": request["query"],
                                          "limit": N})
        return sorted(point["index"] for point in found["points"])

    def clusters(self, request: dict[str, Any]) -> dict[str, Any]:
        job = self._job(request)
        if "named" in request:  # the job, asked under the name of another embedding
            asked = {**request["named"], "job": job}
        elif "label_column" not in request:  # the job alone, as `project` says to ask
            asked = {"job": job}
        else:
            asked = {"run": request["run"], "embedding": request["embedding"], "job": job,
                     "label_column": request["label_column"],
                     "min_cluster_size": request["min_cluster_size"]}
        return clusters_answer(self.main.call("clusters", {**asked, "max_points": N}))

    def quality(self, request: dict[str, Any]) -> dict[str, Any]:
        names = request.get("named", {"run": request["run"], "embedding": request["embedding"]})
        return quality_answer(self.main.call("quality", {
            **names, "job": self._job(request), "k": request["k"], "metric": request["metric"]}))

    def compare(self, request: dict[str, Any]) -> dict[str, Any]:
        found = self.main.call("compare", request)
        return {"k": found["k"], "mean": found["mean"],
                "most_changed": [row["index"] for row in found["most_changed"]]}

    def _edited(self, request: dict[str, Any]) -> list[int]:
        names = {"run": request["run"], "embedding": request["embedding"]}
        return [self.main.call("annotate", {**names, "column": request["column"], **edit})["changed"]
                for edit in request["edits"]]

    def annotate(self, request: dict[str, Any]) -> dict[str, Any]:
        """The column's values read from the metadata tool, its counts from annotations."""
        changed = self._edited(request)
        names = {"run": request["run"], "embedding": request["embedding"]}
        rows = self.main.call("metadata", {**names, "limit": N})
        listed = self.main.call("annotations", {**names, "history": 0})["columns"]
        (column,) = [c for c in listed if c["name"] == request["column"]]
        return column_answer(changed, [row[request["column"]] for row in rows], column["values"])

    def annotation_history(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self._edited(request)
        found = self.main.call("annotations", {"run": request["run"],
                                               "embedding": request["embedding"], "history": 100})
        return [edit_answer(e, ASSISTANT) for e in found["history"]
                if e["column"] == request["column"]]
