"""Who answers the MCP tools (``mcp_server.py``): a projection service of their own, or a
running server.

``projector mcp LOGDIR`` asks :class:`OwnService`: a :class:`ProjectionService` in this
process with its own job engine (over the same result cache as ``projector serve``, so a
projection either computed is read back, not computed again), sharing no job with any page.
``projector mcp --server URL`` asks :class:`RunningServer`: that server's REST API through
the HTTP client, so the tools' jobs are the page's jobs (an assistant's t-SNE is the one the
page shows, followed in the same job list). Both answer in the same shapes and with the
service's sentences (a server's refusal is its detail, said as it is).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

from projector.client.answers import ProjectorError
from projector.client.api import ProjectorClient
from projector_core.annotations import Edit
from projector_core.data.catalog import Catalog
from projector_core.data.steps import timelines
from projector_core.projection.params import ProjectionRequest
from projector_core.semantic.models import ModelLoading
from projector_core.service import ProjectionService
from projector_core.service.names import describe, label_column

ASSISTANT = "assistant"  # the author of an assistant's edits in the history
Column = tuple[list[str], np.ndarray]  # a column's values and one int32 code per row into them
Neighbors = list[tuple[int, float]]  # (row, distance), nearest first
Loading = Callable[[float], None]  # hears a model's loading progress, 0..1
LOADING_EVERY = 0.25  # seconds between looks at a model still loading


class Answers(Protocol):
    """What the tools ask; every unknown name, bad value or failure is an exception whose
    message is the service's sentence."""

    description: str  # where the tools' work is done, said truly

    def runs(self) -> list[dict[str, Any]]: ...

    def embedding(self, run: str, name: str) -> dict[str, Any]:
        """``shape``, ``metadata_columns``, ``label_column`` of an embedding."""
        ...

    def column(self, run: str, name: str, column: str) -> Column: ...

    def search(self, run: str, name: str, column: str, query: str, regex: bool) -> list[int]: ...

    def neighbors(self, run: str, name: str, k: int, metric: str, *, index: int | None = None,
                  rows: list[int] | None = None) -> Neighbors: ...

    def meaning(self, run: str, name: str, text: str, k: int,
                loading: Loading) -> dict[str, Any]:
        """A phrase's ``k`` nearest points in the embedding's own model: ``text``, ``model``,
        ``index`` (which one answered) and ``neighbors`` as (row, similarity); waits for a
        model still loading, its progress told to ``loading``."""
        ...

    def start(self, request: ProjectionRequest) -> str:
        """The job answering ``request`` (shared by identical requests): its id."""
        ...

    def status(self, job_id: str) -> dict[str, Any]:
        """Its ``status``, ``progress`` and ``error``."""
        ...

    def about(self, job_id: str) -> dict[str, Any]:
        """What it computes: ``method``, ``run``, ``embedding``."""
        ...

    def result(self, job_id: str) -> tuple[np.ndarray, dict[str, Any]]: ...

    def clusters(self, job_id: str, min_cluster_size: int | None, label_column: str | None,
                 space: str) -> dict[str, Any]: ...

    def quality(self, job_id: str, k: int, metric: str) -> dict[str, Any]: ...

    def compare(self, a: tuple[str, str], b: tuple[str, str], k: int, metric: str,
                top: int) -> dict[str, Any]: ...

    def steps(self, run: str) -> list[dict[str, Any]]:
        """A training run's tags, each with its ``steps`` (``step``, ``embedding``, ``rows``,
        ``written``) ascending: GET /api/steps's ``timelines``."""
        ...

    def annotate(self, run: str, name: str, column: str, value: str | bool | None,
                 rows: list[int], kind: str | None) -> dict[str, Any]:
        """One edit by the assistant, as ``POST /api/annotations`` answers it: ``edit``
        (``id``, ``rows``), ``changed``, ``rule``."""
        ...

    def annotation_columns(self, run: str, name: str) -> dict[str, Any]:
        """``enabled``, ``reason``, ``rule`` and the embedding's ``columns`` (``name``,
        ``kind``, ``shown``, ``reason``, ``edits``)."""
        ...

    def annotation_history(self, run: str, name: str, limit: int) -> list[dict[str, Any]]:
        """Everyone's latest edits, newest first (``id``, ``column``, ``action``, ``author``,
        ``rows``, ``value``, ``undone``)."""
        ...


class OwnService:
    """A projection service in this process, with a job engine of its own."""

    def __init__(self, catalog: Catalog, device: str = "cpu",
                 models: Mapping[tuple[str, str], str] | None = None) -> None:
        """``models`` as ``serve --model`` declares them: made ready in the background from
        the start, with the data's own declarations."""
        self.service = ProjectionService.standalone(catalog, device, models=models)
        self.service.start_models()
        self.description = (
            f"Computes in this process, with its own jobs over {catalog.logdir}: a page open on "
            "`projector serve` shares no job with it (a finished projection is read back from "
            "the result cache both use). Start it with --server URL to share a server's.")

    def runs(self) -> list[dict[str, Any]]:
        self.service.catalog.refresh()
        return [{"run": r.name, "error": r.error, "embeddings": [
            {"name": e.name, "status": e.status, "shape": e.shape,
             "metadata_columns": e.metadata_columns(), "label_column": label_column(e),
             "error": e.error, "model": self.service.models.status_of(e)}
            for e in r.embeddings]} for r in self.service.runs()]

    def embedding(self, run: str, name: str) -> dict[str, Any]:
        found = self.service.embedding(run, name)
        return {"shape": found.shape, "metadata_columns": found.metadata_columns(),
                "label_column": label_column(found)}

    def column(self, run: str, name: str, column: str) -> Column:
        return self.service.embedding(run, name).categorical(column)

    def search(self, run: str, name: str, column: str, query: str, regex: bool) -> list[int]:
        return self.service.search_metadata(self.service.embedding(run, name), column, query,
                                            regex)

    def neighbors(self, run: str, name: str, k: int, metric: str, *, index: int | None = None,
                  rows: list[int] | None = None) -> Neighbors:
        found, distances = self.service.neighbors(self.service.embedding(run, name), k,
                                                  metric,  # type: ignore[arg-type]
                                                  index=index, rows=rows)
        return [(int(i), float(d)) for i, d in zip(found[0], distances[0], strict=True)
                if i >= 0]

    def meaning(self, run: str, name: str, text: str, k: int,
                loading: Loading) -> dict[str, Any]:
        embedding = self.service.embedding(run, name)
        while True:
            try:
                answer = self.service.search_meaning(embedding, [text], k)
                break
            except ModelLoading as still:
                loading(still.job.progress)
                time.sleep(LOADING_EVERY)
        [phrase] = answer.phrases
        return {"text": phrase.text, "model": answer.model, "index": answer.index,
                "neighbors": [(int(row), float(similarity)) for row, similarity
                              in zip(phrase.rows, phrase.similarities, strict=True)]}

    def start(self, request: ProjectionRequest) -> str:
        return self.service.project(request).id

    def status(self, job_id: str) -> dict[str, Any]:
        return self.service.job(job_id).snapshot()

    def about(self, job_id: str) -> dict[str, Any]:
        return describe(self.service.job(job_id))

    def result(self, job_id: str) -> tuple[np.ndarray, dict[str, Any]]:
        found = self.service.result(self.service.job(job_id))
        return np.asarray(found.coordinates), found.info

    def clusters(self, job_id: str, min_cluster_size: int | None, label_column: str | None,
                 space: str) -> dict[str, Any]:
        return self.service.clusters(self.service.job(job_id), min_cluster_size, label_column,
                                     space)  # type: ignore[arg-type]

    def quality(self, job_id: str, k: int, metric: str) -> dict[str, Any]:
        return self.service.quality(self.service.job(job_id), k, metric)  # type: ignore[arg-type]

    def compare(self, a: tuple[str, str], b: tuple[str, str], k: int, metric: str,
                top: int) -> dict[str, Any]:
        return self.service.compare(self.service.embedding(*a), self.service.embedding(*b), k,
                                    metric, top)  # type: ignore[arg-type]

    def steps(self, run: str) -> list[dict[str, Any]]:
        catalog = self.service.catalog
        catalog.refresh()
        return [{"tag": t.tag, "steps": [
            {"step": s.step, "embedding": s.embedding, "rows": s.rows,
             "written": catalog.written(run, s.embedding)} for s in t.steps]}
            for t in timelines(self.service.run(run))]

    def annotate(self, run: str, name: str, column: str, value: str | bool | None,
                 rows: list[int], kind: str | None) -> dict[str, Any]:
        committed = self.service.annotations.annotate(run, name, column, value,
                                                      np.asarray(rows, np.int64), ASSISTANT,
                                                      kind)
        return {"edit": _edit(committed.edit), "changed": committed.changed,
                "rule": committed.rule}

    def annotation_columns(self, run: str, name: str) -> dict[str, Any]:
        notes = self.service.annotations
        status = notes.status()
        return {"enabled": status["enabled"], "reason": status["reason"],
                "rule": status["rule"],
                "columns": [{"name": c.name, "kind": c.kind, "shown": c.shown,
                             "reason": c.reason, "edits": c.edits}
                            for c in notes.columns(run, name)]}

    def annotation_history(self, run: str, name: str, limit: int) -> list[dict[str, Any]]:
        return [_edit(e) for e in self.service.annotations.history(run, name, limit=limit)]


def _edit(edit: Edit) -> dict[str, Any]:
    return {"id": edit.id, "column": edit.column, "action": edit.action,
            "author": edit.author, "rows": edit.rows, "value": edit.value,
            "undone": edit.undone}


class ServerRefused(Exception):
    """A running server's refusal: its detail, the service's sentence, said as it is."""


class RunningServer:
    """A running ``projector serve`` (or widget server), asked through its REST API."""

    WAIT = 3600.0  # seconds one request may take: clusters and quality answer when computed

    def __init__(self, url: str, token: str | None = None) -> None:
        self.client = ProjectorClient(url, timeout=self.WAIT, token=token, user=ASSISTANT)
        self.description = (
            f"Answers through the projector server at {self.client.base_url}: its jobs are "
            "the page's jobs (an identical request shares one), listed in its job list.")

    def check(self) -> None:
        """ConnectionError saying why the server cannot be asked."""
        try:
            self.client.health()
        except ProjectorError as error:
            raise ConnectionError(f"{self.client.base_url} answers {error}") from None
        except OSError as error:
            raise ConnectionError(f"cannot reach {self.client.base_url}: "
                                  f"{getattr(error, 'reason', error)}") from None

    def _ask(self, question: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return question(*args, **kwargs)
        except ProjectorError as error:
            raise ServerRefused(error.detail) from None

    def runs(self) -> list[dict[str, Any]]:
        listed = self._ask(self.client.runs)
        return [{"run": r["name"], "error": r["error"], "embeddings": [
            {key: e.get(key) for key in ("name", "status", "shape", "metadata_columns",
                                         "label_column", "error", "model")}
            for e in r["embeddings"]]} for r in listed]

    def embedding(self, run: str, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self._ask(self.client.embedding, run, name)
        return found

    def column(self, run: str, name: str, column: str) -> Column:
        found: Column = self._ask(self.client.metadata_column, run, name, column)
        return found

    def search(self, run: str, name: str, column: str, query: str, regex: bool) -> list[int]:
        found: list[int] = self._ask(self.client.search, run, name, column, query, regex)
        return found

    def neighbors(self, run: str, name: str, k: int, metric: str, *, index: int | None = None,
                  rows: list[int] | None = None) -> Neighbors:
        found, distances = self._ask(self.client.neighbors, run, name, index, None, k, metric,
                                     rows=None if index is not None else rows)
        return [(int(i), float(d)) for i, d in zip(found, distances, strict=True)]

    def meaning(self, run: str, name: str, text: str, k: int,
                loading: Loading) -> dict[str, Any]:
        answer: dict[str, Any] = self._ask(self.client.search_meaning, run, name, text, k,
                                           on_progress=lambda job: loading(job["progress"]))
        [phrase] = answer["results"]
        return {"text": phrase["text"], "model": answer["model"], "index": answer["index"],
                "neighbors": [(n["index"], n["similarity"]) for n in phrase["neighbors"]]}

    def start(self, request: ProjectionRequest) -> str:
        params = request.params.model_dump(mode="json", exclude_unset=True)
        job_id: str = self._ask(self.client.start, request.run, request.embedding,
                                request.method, request.dims, request.device, **params)
        return job_id

    def status(self, job_id: str) -> dict[str, Any]:
        status: dict[str, Any] = self._ask(self.client.job, job_id)
        return status

    def about(self, job_id: str) -> dict[str, Any]:
        self.status(job_id)  # an unknown job: the server's sentence
        listed: list[dict[str, Any]] = self._ask(self.client.jobs)
        return next((j for j in listed if j["id"] == job_id), {"kind": "unknown"})

    def result(self, job_id: str) -> tuple[np.ndarray, dict[str, Any]]:
        found = self._ask(self.client.result, job_id)
        return found.coordinates, found.info

    def clusters(self, job_id: str, min_cluster_size: int | None, label_column: str | None,
                 space: str) -> dict[str, Any]:
        found: dict[str, Any] = self._ask(self.client.clusters, job_id, min_cluster_size,
                                          label_column, space)
        return found

    def quality(self, job_id: str, k: int, metric: str) -> dict[str, Any]:
        found: dict[str, Any] = self._ask(self.client.quality, job_id, k, metric)
        return found

    def compare(self, a: tuple[str, str], b: tuple[str, str], k: int, metric: str,
                top: int) -> dict[str, Any]:
        found: dict[str, Any] = self._ask(self.client.compare, *a, *b, k, metric, top)
        return found

    def steps(self, run: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self._ask(self.client.steps, run)
        return found

    def annotate(self, run: str, name: str, column: str, value: str | bool | None,
                 rows: list[int], kind: str | None) -> dict[str, Any]:
        found: dict[str, Any] = self._ask(self.client.annotate, run, name, rows, column, value,
                                          kind=kind)
        return found

    def annotation_columns(self, run: str, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self._ask(self.client.annotation_columns, run, name)
        return found

    def annotation_history(self, run: str, name: str, limit: int) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self._ask(self.client.annotation_history, run, name,
                                                limit=limit)
        return found
