"""Which model made an embedding, made ready in the background and checked against its vectors.

An embedding's model is declared by ``projector serve --model`` (``declarations.py``; it wins)
or by the data itself (``Embedding.model``: the writer's sidecar ``projector_models.json``, a
text column's model). Making it ready is a job on the app's engine, listed by
``GET /api/jobs`` as kind ``model`` with its progress and phase: the model loaded
(``encoder.py``, once however many embeddings share it), checked against the vectors (its
output width, and whether it normalises, must be the embedding's: refused with both numbers
otherwise, a failed job whose error every query then answers), and the embedding's
neighbour index prepared (the exact index's norms, the approximate index's build started
above the exact budget), so the first phrase is answered at full speed.

The server starts these jobs at start for every declared model; a query never loads a model
itself: before its job is done it is answered :class:`ModelLoading` (503, the job and its
progress).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from projector_core.data.model import Embedding, Run
from projector_core.data.steps import split_name
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import Job, JobContext, JobStatus
from projector_core.jobs.phases import enter_phase
from projector_core.kernels.text_encoder import Encoder, load_encoder
from projector_core.semantic.declarations import Key
from projector_core.storage.recent import Recent

LENGTH_SAMPLE = 1024  # rows whose lengths say whether the vectors are normalised
# A row counts as unit length within this: float16 storage (the words sample) rounds to ~1e-3.
DATA_UNIT_TOLERANCE = 1e-2
KEEP_JOBS = 64  # readiness jobs remembered, one per (embedding version, model)
Prepare = Callable[[Embedding], object]


def model_of(declared: Mapping[Key, str], embedding: Embedding) -> str | None:
    """The model that made the embedding: the command line's (by name, then by tag), else
    the data's own."""
    tag, _ = split_name(embedding.name)
    return (declared.get((embedding.run, embedding.name)) or declared.get((embedding.run, tag))
            or embedding.model)


class ModelLoading(Exception):
    """The embedding's model is still being made ready: ask again shortly (a 503)."""

    def __init__(self, job: Job, model: str, embedding: Embedding) -> None:
        self.job = job
        super().__init__(f"model {model} for {embedding.run}/{embedding.name} is loading "
                         f"(job {job.id}, {job.progress:.0%}); ask again shortly")


def check_fit(encoder: Encoder, embedding: Embedding) -> None:
    """ValueError, with both numbers, when the model cannot have made these vectors."""
    where = f"{embedding.run}/{embedding.name}"
    vectors = embedding.vectors()
    if encoder.width != vectors.shape[1]:
        raise ValueError(f"model {encoder.name} makes {encoder.width} values per phrase but "
                         f"{where} has {vectors.shape[1]} per point: it did not make these "
                         "vectors")
    rows = np.unique(np.linspace(0, vectors.shape[0] - 1, min(LENGTH_SAMPLE, vectors.shape[0]))
                     .astype(np.int64))
    lengths = np.linalg.norm(np.asarray(vectors[rows], np.float64), axis=1)
    lengths = lengths[np.isfinite(lengths)]
    if lengths.size == 0:
        return
    unit = bool(np.all(np.abs(lengths - 1) < DATA_UNIT_TOLERANCE))
    if unit != encoder.unit_length:
        said = "normalised" if encoder.unit_length else "not normalised"
        raise ValueError(f"model {encoder.name} makes vectors of length "
                         f"{encoder.probe_length:.3g} ({said}) but {where}'s points have "
                         f"median length {float(np.median(lengths)):.3g}: it did not make "
                         "these vectors")


class Models:
    """The declared models and their readiness jobs on ``jobs``; ``prepare(embedding)``
    readies the neighbour index the searches will use."""

    def __init__(self, jobs: JobManager, declared: Mapping[Key, str] | None = None,
                 prepare: Prepare | None = None) -> None:
        self.jobs = jobs
        self.declared = dict(declared or {})
        self.prepare = prepare
        self._jobs: Recent[tuple[str, str], Job] = Recent(KEEP_JOBS)
        self._lock = threading.Lock()

    def model_of(self, embedding: Embedding) -> str | None:
        """The model that made the embedding (:func:`model_of` over these declarations)."""
        return model_of(self.declared, embedding)

    def declared_in(self, runs: list[Run]) -> list[tuple[str, str, str]]:
        """(run, embedding, model) for each embedding of ``runs`` that has a model."""
        return [(run.name, e.name, model) for run in runs for e in run.embeddings
                if (model := self.model_of(e)) is not None]

    def status_of(self, embedding: Embedding) -> dict[str, Any] | None:
        """What ``/api/runs`` says of the embedding's model (None: none declared), without
        starting anything: ``idle`` (no job yet: the first phrase starts it), ``loading``
        (with the job and its progress), ``ready`` or ``failed`` (with the error a phrase
        would get)."""
        model = self.model_of(embedding)
        if model is None:
            return None
        job = self._jobs.peek((embedding.fingerprint, model))
        status = "idle"
        if job is not None and job.status is not JobStatus.CANCELLED:
            status = {JobStatus.DONE: "ready", JobStatus.FAILED: "failed"}.get(job.status,
                                                                             "loading")
        return {"name": model, "status": status,
                "job": None if job is None or status == "idle" else job.id,
                "progress": round(job.progress, 4) if job is not None and status == "loading"
                else None,
                "error": job.error if job is not None and status == "failed" else None}

    def ready(self, embedding: Embedding) -> tuple[str, Encoder]:
        """(model, encoder) checked against the embedding; :class:`ModelLoading` before its
        job is done, ValueError when none is declared or it does not fit."""
        model = self.model_of(embedding)
        if model is None:
            raise ValueError(f"{embedding.run}/{embedding.name} declares no model, so it can be "
                             "searched by example but not by a phrase: serve it with --model "
                             "MODEL (or RUN/EMBEDDING=MODEL), or write it with "
                             "add_embedding(..., model=MODEL)")
        job = self.start(embedding)
        if job is None:  # no vectors to check it against: StillLoading or the tensor's error
            embedding.vectors()
            raise ValueError(f"{embedding.run}/{embedding.name} has no vectors")
        if job.status is JobStatus.DONE:
            return model, job.result
        if job.status is JobStatus.FAILED:
            if job.failed_with is not None and issubclass(job.failed_with, ValueError):
                raise ValueError(job.error)  # it names the model and the embedding
            raise RuntimeError(f"making model {model} ready failed: {job.error}")
        raise ModelLoading(job, model, embedding)

    def start(self, embedding: Embedding) -> Job | None:
        """The job making the embedding's model ready: running, done, failed or new (None
        without a declared model or data to check it against)."""
        model = self.model_of(embedding)
        if model is None or embedding.loading is not None or "tensor" in embedding.errors:
            return None
        key = (embedding.fingerprint, model)
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.status is JobStatus.CANCELLED:
                job = self.jobs.submit(lambda ctx: self._make_ready(ctx, model, embedding),
                                       key=f"model:{embedding.fingerprint}:{model}")
                job.about = {"kind": "model", "method": "model", "model": model,
                             "run": embedding.run, "embedding": embedding.name}
                self._jobs.put(key, job)
        return job

    def _make_ready(self, ctx: JobContext, model: str, embedding: Embedding) -> Encoder:
        def loading(done: float) -> None:
            enter_phase("loading model", done)
            ctx.step(None, 0.8 * done)

        loading(0.0)
        encoder = load_encoder(model, loading)
        enter_phase("checking vectors")
        check_fit(encoder, embedding)
        ctx.step(None, 0.85)
        enter_phase("neighbour index")
        if self.prepare is not None:
            self.prepare(embedding)
        ctx.step(None, 1.0)
        return encoder
