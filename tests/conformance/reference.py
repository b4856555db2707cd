"""What every door must answer: computed here, in this process, on a cache of its own.

Where an answer has an independent truth it is computed from it (neighbours and search with
numpy over the data as written; PCA checked against scikit-learn's by a test of its own);
where it has none (a t-SNE or UMAP layout, HDBSCAN's clusters, quality, a comparison, a
picture) it is the core's answer to the request, asked of ``projector_core`` directly. The
contract the issue states is written here, not read from any door: PCA with ``dims`` is
``N x dims`` (the core's first ``dims`` components), a refusal is the core's sentence.
"""

from __future__ import annotations

import io
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter, ValidationError

from projector_core.annotations.service import LOCAL_AUTHOR
from projector_core.data.catalog import Catalog
from projector_core.export.render import AUTO, projection_picture
from projector_core.projection.default_request import default_request
from projector_core.projection.params import ProjectionRequest
from projector_core.service import ProjectionService
from projector_core.service.names import label_column
from tests.conformance.answers import (
    Refused,
    clusters_answer,
    column_answer,
    edit_answer,
    png_pixels,
    quality_answer,
)
from tests.conformance.cases import Case, request_of
from tests.conformance.dataset import EMBEDDING, RUN, Blobs

_REQUEST = TypeAdapter(ProjectionRequest)


def cosine_neighbors(vectors: np.ndarray, target: np.ndarray, k: int,
                     exclude: list[int]) -> dict[str, Any]:
    """The ``k`` rows nearest ``target`` by 1 - cosine similarity, ``exclude`` left out."""
    data = vectors.astype(np.float64)
    unit = data / np.linalg.norm(data, axis=1, keepdims=True)
    distances = 1.0 - unit @ (target / np.linalg.norm(target))
    distances[exclude] = np.inf
    order = np.argsort(distances, kind="stable")[:k]
    return {"indices": [int(i) for i in order], "distances": [float(distances[i]) for i in order]}


def neighbor_table(vectors: np.ndarray, k: int) -> np.ndarray:
    """Every row's ``k`` cosine neighbours (itself excluded), as an export writes them."""
    return np.array([cosine_neighbors(vectors, vectors[i], k, [i])["indices"]
                     for i in range(len(vectors))], np.int32)


def validation_sentence(error: ValidationError) -> str:
    """A parameter model's refusal as one sentence: ``field: message`` for each problem."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}"
                     for e in error.errors(include_url=False))


class Reference:
    """The expected answer of each case (:meth:`answer`), computed once per case."""

    def __init__(self, blobs: Blobs, cache: Path) -> None:
        self.blobs = blobs
        self.catalog = Catalog(blobs.logdir, cache_dir=cache)
        self.catalog.refresh()
        self.service = ProjectionService.standalone(  # labels in a store of its own
            self.catalog, annotations=cache / "annotations.sqlite")
        self._answers: dict[tuple[str, str], Any] = {}

    def answer(self, case: Case) -> Any:
        key = (case.operation, case.name)
        if key not in self._answers:
            try:
                self._answers[key] = getattr(self, case.operation)(request_of(case))
            except Refused as refused:
                self._answers[key] = refused
        return self._answers[key]

    # -- helpers -----------------------------------------------------------------------------
    def _embedding(self, request: dict[str, Any]) -> Any:
        try:
            return self.service.embedding(request.get("run", RUN), request.get("embedding", EMBEDDING))
        except LookupError as error:
            raise Refused(str(error)) from None

    def _job(self, request: dict[str, Any]) -> Any:
        body = {"run": request.get("run", RUN), "embedding": request.get("embedding", EMBEDDING),
                **request}
        self._embedding(body)
        try:
            job = self.service.project(_REQUEST.validate_python(body))
        except ValidationError as error:
            raise Refused(validation_sentence(error)) from None
        except ValueError as error:
            raise Refused(str(error)) from None
        job.wait()
        return job

    def _coordinates(self, request: dict[str, Any]) -> np.ndarray:
        coordinates = self.service.result(self._job(request)).coordinates
        return np.asarray(coordinates[:, :request["dims"]], np.float32)

    def _metadata(self) -> dict[str, list[Any]]:
        return {"group": list(self.blobs.group), "size": list(self.blobs.size)}

    # -- the operations ----------------------------------------------------------------------
    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"rows": len(self.blobs.vectors), "metadata": self.blobs.table(request)}

    def pca_2d(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates({"method": "pca", "dims": 2, **request})

    def pca_3d(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates({"method": "pca", "dims": 3, **request})

    def tsne(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates({"method": "tsne", "dims": 2, **request})

    def umap(self, request: dict[str, Any]) -> np.ndarray:
        return self._coordinates({"method": "umap", "dims": 2, **request})

    def neighbors_of_row(self, request: dict[str, Any]) -> dict[str, Any]:
        embedding = self._embedding(request)
        try:  # the core's sentence for a k or an index out of range
            self.service.neighbors(embedding, request["k"], "cosine", index=request["index"])
        except ValueError as error:
            raise Refused(str(error)) from None
        vectors = self.blobs.vectors
        return cosine_neighbors(vectors, vectors[request["index"]].astype(np.float64),
                                request["k"], [request["index"]])

    def neighbors_of_label(self, request: dict[str, Any]) -> dict[str, Any]:
        rows = [i for i, g in enumerate(self.blobs.group) if g == request["query"]]
        centroid = self.blobs.vectors[rows].astype(np.float64).mean(axis=0)
        return cosine_neighbors(self.blobs.vectors, centroid, request["k"], rows)

    def search(self, request: dict[str, Any]) -> list[int]:
        query = request["query"].casefold()
        return [i for i, g in enumerate(self.blobs.group) if query in g.casefold()]

    @staticmethod
    def _named_as_the_job(request: dict[str, Any]) -> None:
        """A job asked for under the name of another embedding is refused, naming both."""
        named = request.get("named")
        if named is not None and (named["run"], named["embedding"]) != (request["run"],
                                                                        request["embedding"]):
            raise Refused(f"the job is a projection of {request['run']}/{request['embedding']}, "
                          f"not of {named['run']}/{named['embedding']}")

    def clusters(self, request: dict[str, Any]) -> dict[str, Any]:
        self._named_as_the_job(request)
        job = self._job(request["of"])
        naming = request.get("label_column") or label_column(job.source)
        found = self.service.clusters(job, request.get("min_cluster_size"), naming)
        return clusters_answer(found)

    def quality(self, request: dict[str, Any]) -> dict[str, Any]:
        self._named_as_the_job(request)
        found = self.service.quality(self._job(request["of"]), request["k"], request["metric"])
        return quality_answer(found)

    def compare(self, request: dict[str, Any]) -> dict[str, Any]:
        a = self._embedding(request)
        b = self._embedding({"run": request["other_run"], "embedding": request["other_embedding"]})
        found = self.service.compare(a, b, request["k"], request["metric"], request["top"])
        return {"k": int(found["k"]), "mean": float(found["mean"]),
                "most_changed": [int(i) for i in found["most_changed"][:request["top"]]]}

    def export(self, request: dict[str, Any]) -> dict[str, Any]:
        embedding = self._embedding(request)
        asked = {m: default_request(embedding, m) for m in request["projection"]}
        return {"n": len(self.blobs.vectors), "d": self.blobs.vectors.shape[1],
                "metadata": self._metadata(), "requests": asked,
                "projections": {m: self._coordinates({"method": m, **r}) for m, r in asked.items()},
                "neighbors": neighbor_table(self.blobs.vectors, request["neighbors"])}

    def render(self, request: dict[str, Any]) -> np.ndarray:
        embedding = self._embedding(request)
        method = request["projection"]
        coordinates = self.service.result(self._job(
            {"method": method, **default_request(embedding, method)})).coordinates
        picture = projection_picture(embedding, coordinates, request["width"], AUTO)
        buffer = io.BytesIO()
        picture.save(buffer, format="PNG")
        return png_pixels(buffer.getvalue())

    def _edited(self, request: dict[str, Any]) -> list[int]:
        """The case's edits made in the reference's store, then its undo: the rows each edit
        changed."""
        notes, names = self.service.annotations, (request["run"], request["embedding"])
        try:
            changed = [notes.annotate(*names, request["column"], edit["value"], edit["rows"]).changed
                       for edit in request["edits"]]
        except (ValueError, LookupError) as error:
            raise Refused(str(error)) from None
        if request.get("undo"):
            notes.undo(*names)
        return changed

    def annotate(self, request: dict[str, Any]) -> dict[str, Any]:
        changed = self._edited(request)
        found = self.service.annotations.values(request["run"], request["embedding"],
                                                request["column"])
        return column_answer(changed, [found.dictionary[c] for c in found.codes])

    def annotation_history(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self._edited(request)
        edits = self.service.annotations.history(request["run"], request["embedding"],
                                                 request["column"])
        return [edit_answer(asdict(e), LOCAL_AUTHOR) for e in edits]
