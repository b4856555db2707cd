"""Shared request dependencies: the catalog and the embedding a request names."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request

from projector_core.catalog import Catalog
from projector_core.model import Embedding


def get_catalog(request: Request) -> Catalog:
    return request.app.state.catalog


def get_embedding(
    run: Annotated[str, Query(description="Run name as listed by /api/runs ('.' for LOGDIR)")],
    embedding: Annotated[str, Query(description="Embedding (tensor) name within the run")],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> Embedding:
    return lookup_embedding(catalog, run, embedding)


def lookup_embedding(catalog: Catalog, run: str, embedding: str) -> Embedding:
    """The embedding or a 404 naming what is unknown (for routes that take names in a body)."""
    try:
        found_run = catalog.run(run)
    except KeyError:
        raise HTTPException(404, f"unknown run {run!r}") from None
    try:
        return found_run.embedding(embedding)
    except KeyError:
        raise HTTPException(404, f"unknown embedding {embedding!r} in run {run!r}") from None


CatalogDep = Annotated[Catalog, Depends(get_catalog)]
EmbeddingDep = Annotated[Embedding, Depends(get_embedding)]
