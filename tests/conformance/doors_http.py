"""The REST door (httpx against uvicorn on 127.0.0.1) and the Python ``Client`` door, each over
a server of its own, built as ``projector serve`` builds it, on a cache of its own."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pandas as pd

from projector import Client, ProjectorError
from projector_core.annotations.service import LOCAL_AUTHOR
from tests.conformance.answers import (
    Refused,
    clusters_answer,
    column_answer,
    edit_answer,
    frame_columns,
    quality_answer,
    typed_table,
)
from tests.conformance.dataset import Blobs, metadata_tsv
from tests.conformance.site import site_answer, unzip

WAIT = 600  # seconds a projection may take on a loaded two-core machine


class Rest:
    """Each operation as a user of the HTTP API asks it."""

    def __init__(self, url: str, blobs: Blobs, work: Path) -> None:
        self.http = httpx.Client(base_url=url, timeout=WAIT)
        self.blobs = blobs
        self.work = work
        self._jobs: dict[str, str] = {}

    def _json(self, method: str, path: str, **send: Any) -> Any:
        response = self.http.request(method, path, **send)
        if response.is_error:
            raise Refused(response.json()["detail"])
        return response.json()

    def _job(self, request: dict[str, Any]) -> str:
        key = repr(sorted(request.items()))
        if key not in self._jobs:
            job = self._json("POST", "/api/projections", json=request)["job"]
            while (status := self._json("GET", f"/api/jobs/{job}"))["status"] in ("queued", "running"):
                time.sleep(0.05)
            assert status["status"] == "done", status
            self._jobs[key] = job
        return self._jobs[key]

    def _coordinates(self, request: dict[str, Any]) -> np.ndarray:
        job = self._job(request)
        response = self.http.get(f"/api/jobs/{job}/result",
                                 headers={"Accept": "application/octet-stream"})
        shape = tuple(int(s) for s in response.headers["x-shape"].split(","))
        return np.frombuffer(response.content, "<f4").reshape(shape).copy()

    @staticmethod
    def _projection(method: str, dims: int, request: dict[str, Any]) -> dict[str, Any]:
        return {"run": request["run"], "embedding": request["embedding"], "method": method,
                "dims": request.get("dims", dims), "params": request.get("params", {})}

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        files = {"tensor": ("blobs.npy", self.blobs.npy.read_bytes()),
                 "metadata": ("meta.tsv", metadata_tsv(self.blobs.group, self.blobs.size))}
        run = self._json("POST", "/api/uploads", files=files)
        table = self.http.get("/api/metadata", params={"run": run["run"],
                                                       "embedding": run["embedding"]})
        return {"rows": run["shape"][0], "metadata": typed_table(table.text)}

    def pca_2d(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates(self._projection("pca", 2, request))

    def pca_3d(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates(self._projection("pca", 3, request))

    def tsne(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates(self._projection("tsne", 2, request))

    def umap(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates(self._projection("umap", 2, request))

    def neighbors_of_row(self, request: dict[str, Any]) -> dict[str, Any]:
        found = self._json("GET", "/api/neighbors", params=request)["neighbors"]
        return {"indices": [n["index"] for n in found], "distances": [n["distance"] for n in found]}

    def search(self, request: dict[str, Any]) -> list[int]:
        return sorted(self._json("GET", "/api/search", params=request)["indices"])

    def clusters(self, request: dict[str, Any]) -> dict[str, Any]:
        job = self._job(self._projection(request["of"]["method"], request["of"]["dims"], request))
        asked = {k: request[k] for k in ("label_column", "min_cluster_size") if k in request}
        return clusters_answer(self._json("GET", f"/api/jobs/{job}/clusters", params=asked))

    def quality(self, request: dict[str, Any]) -> dict[str, Any]:
        job = self._job(self._projection(request["of"]["method"], request["of"]["dims"], request))
        asked = {"k": request["k"], "metric": request["metric"]}
        return quality_answer(self._json("GET", f"/api/jobs/{job}/quality", params=asked))

    def compare(self, request: dict[str, Any]) -> dict[str, Any]:
        found = self._json("GET", "/api/compare", params=request)
        return {"k": found["k"], "mean": found["mean"],
                "most_changed": found["most_changed"][:request["top"]]}

    def export(self, request: dict[str, Any]) -> dict[str, Any]:
        response = self.http.get("/api/export/site", params={
            "run": request["run"], "embedding": request["embedding"],
            "projection": ",".join(request["projection"]), "neighbors": request["neighbors"]})
        if response.is_error:
            raise Refused(response.json()["detail"])
        site = unzip(response.content, self.work / f"rest-site-{len(request['projection'])}")
        return site_answer(site, request["run"], request["embedding"])


    def _edited(self, request: dict[str, Any]) -> list[int]:
        names = {"run": request["run"], "embedding": request["embedding"]}
        changed = [self._json("POST", "/api/annotations", json={
            **names, "column": request["column"], **edit})["changed"] for edit in request["edits"]]
        if request.get("undo"):
            self._json("POST", "/api/annotations/undo", json=names)
        return changed

    def annotate(self, request: dict[str, Any]) -> dict[str, Any]:
        changed = self._edited(request)
        response = self.http.get("/api/annotations/export", params={
            "run": request["run"], "embedding": request["embedding"], "format": "tsv"})
        return column_answer(changed, typed_table(response.text)[request["column"]])

    def annotation_history(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self._edited(request)
        edits = self._json("GET", "/api/annotations/history", params={
            "run": request["run"], "embedding": request["embedding"], "column": request["column"]})
        return [edit_answer(e, LOCAL_AUTHOR) for e in edits]

class ClientDoor:
    """Each operation through ``projector.Client``, as its docstrings show it."""

    def __init__(self, url: str, blobs: Blobs) -> None:
        self.client = Client(url, timeout=WAIT)
        self.blobs = blobs
        self._jobs: dict[str, str] = {}

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self.client, method)(*args, **kwargs)
        except ProjectorError as error:
            raise Refused(error.detail) from None

    def _projection(self, method: str, dims: int, request: dict[str, Any]) -> np.ndarray:
        return self._call("project", request["run"], request["embedding"], method,
                          request.get("dims", dims), timeout=WAIT, **request.get("params", {}))

    def _job(self, request: dict[str, Any]) -> str:
        of = request["of"]
        key = repr(sorted(of.items()))
        if key not in self._jobs:
            self._jobs[key] = self._call("projection", request["run"], request["embedding"],
                                         of["method"], of["dims"], timeout=WAIT).job
        return self._jobs[key]

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        frame = pd.DataFrame(self.blobs.table(request))
        run = self._call("upload", self.blobs.vectors, metadata=frame)
        table = self._call("metadata", run["run"], run["embedding"])
        return {"rows": run["shape"][0], "metadata": frame_columns(table)}

    def pca_2d(self, request: dict[str, Any]) -> np.ndarray:
        return self._projection("pca", 2, request)

    def pca_3d(self, request: dict[str, Any]) -> np.ndarray:
        return self._projection("pca", 3, request)

    def tsne(self, request: dict[str, Any]) -> np.ndarray:
        return self._projection("tsne", 2, request)

    def umap(self, request: dict[str, Any]) -> np.ndarray:
        return self._projection("umap", 2, request)

    def neighbors_of_row(self, request: dict[str, Any]) -> dict[str, Any]:
        indices, distances = self._call("neighbors", request["run"], request["embedding"],
                                        index=request["index"], k=request["k"],
                                        metric=request["metric"])
        return {"indices": indices.tolist(), "distances": distances.tolist()}

    def search(self, request: dict[str, Any]) -> list[int]:
        return sorted(self._call("search", request["run"], request["embedding"],
                                 request["column"], request["query"]))

    def clusters(self, request: dict[str, Any]) -> dict[str, Any]:
        return clusters_answer(self._call("clusters", self._job(request),
                                          min_cluster_size=request.get("min_cluster_size"),
                                          label_column=request.get("label_column")))

    def quality(self, request: dict[str, Any]) -> dict[str, Any]:
        return quality_answer(self._call("quality", self._job(request), k=request["k"],
                                         metric=request["metric"]))

    def compare(self, request: dict[str, Any]) -> dict[str, Any]:
        found = self._call("compare", request["run"], request["embedding"], request["other_run"],
                           request["other_embedding"], k=request["k"], metric=request["metric"],
                           top=request["top"], timeout=WAIT)
        return {"k": found["k"], "mean": found["mean"],
                "most_changed": found["most_changed"][:request["top"]]}

    def _edited(self, request: dict[str, Any]) -> list[int]:
        names = (request["run"], request["embedding"])
        changed = [self._call("annotate", *names, edit["rows"], request["column"],
                              edit["value"])["changed"] for edit in request["edits"]]
        if request.get("undo"):
            self._call("undo", *names)
        return changed

    def annotate(self, request: dict[str, Any]) -> dict[str, Any]:
        changed = self._edited(request)
        frame = self._call("annotations", request["run"], request["embedding"])
        return column_answer(changed, frame[request["column"]].tolist())

    def annotation_history(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self._edited(request)
        edits = self._call("annotation_history", request["run"], request["embedding"],
                           request["column"])
        return [edit_answer(e, LOCAL_AUTHOR) for e in edits]
