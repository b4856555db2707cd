"""Names a request gives, looked up once for every door: a run, an embedding, a job.

An unknown one is :class:`~projector_core.errors.UnknownName` (the web layer's one 404),
said in one sentence that names what is known, whichever door asked (REST, the HTTP client,
MCP, the widget): the catalogue says it for runs and embeddings, this module for jobs.
"""

from __future__ import annotations

from typing import Any

from projector_core.data.catalog import Catalog
from projector_core.data.label_column import default_label_column
from projector_core.data.model import Embedding
from projector_core.errors import UnknownName
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import Job


def find_embedding(catalog: Catalog, run: str, name: str) -> Embedding:
    """The embedding, or :class:`UnknownName`; ``StillLoading`` (a 503 with its progress)
    while its tensor is still being read."""
    embedding = catalog.embedding(run, name)
    embedding.raise_if_loading()
    return embedding


def find_job(jobs: JobManager, job_id: str) -> Job:
    """The job, or :class:`UnknownName`."""
    try:
        return jobs.get(job_id)
    except KeyError:
        raise UnknownName(f"unknown job {job_id!r} (finished jobs are kept for a while, "
                          "then forgotten)") from None


def label_column(embedding: Embedding) -> str | None:
    """The column that names the embedding's points (see :mod:`~projector_core.data.label_column`)."""
    if "metadata" in embedding.errors or embedding.loading is not None:
        return None
    return default_label_column(embedding.metadata_columns(), embedding.is_numeric)


def describe(job: Job) -> dict[str, Any]:
    """A job's status and what it computes: kind, method, run, embedding."""
    return {**job.snapshot(), **(job.about or {"kind": "unknown"})}
