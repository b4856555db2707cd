"""The read API: runs, tensors, metadata, sprites and bookmarks, as TensorBoard's plugin serves them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import numpy as np
from fastapi import APIRouter, HTTPException
from fastapi.responses import Response, StreamingResponse
from projector.server.deps import CatalogDep, EmbeddingDep
from projector.server.error_responses import EMBEDDING_ERRORS, ErrorOut, ProgressOut
from projector.server.limits_models import DataLimitsOut
from pydantic import BaseModel

from projector_core.data.model import Embedding
from projector_core.projection.methods import data_limits
from projector_core.service import label_column

router = APIRouter(prefix="/api", tags=["data"])

STREAM_CHUNK_BYTES = 1024 * 1024


class SpriteOut(BaseModel):
    """The configured image's cells, as /api/sprite serves it; /api/sprite/atlas gives every
    thumbnail at full size (also from sprite pages the config's image only shows scaled)."""

    single_image_dim: tuple[int, int]


class EmbeddingOut(BaseModel):
    name: str
    status: Literal["loading", "ready", "error"]
    progress: ProgressOut | None  # while loading: how much of the tensor file is read
    shape: tuple[int, int] | None
    metadata_columns: list[str]
    sprite: SpriteOut | None
    has_bookmarks: bool
    error: str | None
    warnings: list[str]
    sources: dict[str, str]
    limits: DataLimitsOut | None  # what the data allows each method's parameters (shape known)
    label_column: str | None  # the column that names points (``projector_core.data.label_column``)

    @classmethod
    def of(cls, embedding: Embedding) -> EmbeddingOut:
        sprite = embedding.sprite
        loading = embedding.loading
        return cls(
            name=embedding.name,
            status=embedding.status,
            progress=None if loading is None else ProgressOut(
                fraction=loading.fraction, bytes_done=loading.bytes_done,
                bytes_total=loading.bytes_total),
            shape=embedding.shape,
            metadata_columns=embedding.metadata_columns(),
            sprite=SpriteOut(single_image_dim=sprite.image.thumb) if sprite else None,
            has_bookmarks=embedding.has_bookmarks,
            error=embedding.error,
            warnings=embedding.warnings,
            sources=embedding.sources,
            limits=None if embedding.shape is None else DataLimitsOut(**data_limits(
                *embedding.shape)),
            label_column=label_column(embedding),
        )


class RunOut(BaseModel):
    name: str
    error: str | None
    embeddings: list[EmbeddingOut]


class Health(BaseModel):
    status: str


@router.get("/health")
def health() -> Health:
    return Health(status="ok")


@router.get("/runs")
def list_runs(catalog: CatalogDep) -> list[RunOut]:
    return [
        RunOut(name=run.name, error=run.error,
               embeddings=[EmbeddingOut.of(e) for e in run.embeddings])
        for run in catalog.runs()
    ]


def _float32_chunks(vectors: np.ndarray) -> Iterator[memoryview]:
    """Views of the rows, not copies: concurrent downloads of a large tensor would otherwise
    each hold a chunk-sized copy, and the server's memory would grow with the load."""
    rows_per_chunk = max(1, STREAM_CHUNK_BYTES // max(1, vectors.shape[1] * 4))
    for start in range(0, vectors.shape[0], rows_per_chunk):
        block = np.ascontiguousarray(vectors[start:start + rows_per_chunk], dtype="<f4")
        yield block.data.cast("B")  # ``block`` is a view when already float32, C order


@router.get(
    "/tensor",
    response_class=Response,
    responses={**EMBEDDING_ERRORS,
               200: {"content": {"application/octet-stream": {}},
                     "description": "float32 little-endian, row-major, N x D"}},
)
def get_tensor(embedding: EmbeddingDep) -> StreamingResponse:
    vectors = embedding.vectors()  # DataError: the app answers 422 naming the file
    n, d = vectors.shape
    return StreamingResponse(
        _float32_chunks(vectors),
        media_type="application/octet-stream",
        headers={"Content-Length": str(n * d * 4), "X-Shape": f"{n},{d}"},
    )


@router.get(
    "/metadata",
    response_class=Response,
    responses={**EMBEDDING_ERRORS, 200: {"content": {"text/tab-separated-values": {}}}},
)
def get_metadata(embedding: EmbeddingDep) -> Response:
    text = embedding.metadata_or_index().to_tsv()  # DataError: a 422 naming the file
    return Response(text, media_type="text/tab-separated-values; charset=utf-8")


@router.get("/sprite", response_class=Response,
            responses={**EMBEDDING_ERRORS,
                       200: {"content": {"image/png": {}, "image/jpeg": {}}},
                       404: {"model": ErrorOut,
                             "description": "Unknown run or embedding, or it has no sprite"},
                       409: {"model": ErrorOut,
                             "description": "The image is too large to hand to a browser; "
                                            "load /api/sprite/atlas and its pages instead"}})
def get_sprite(embedding: EmbeddingDep) -> Response:
    """The configured sprite file's own bytes, when a browser can safely decode it."""
    if "sprite" in embedding.errors:
        raise HTTPException(422, embedding.errors["sprite"])
    if embedding.sprite is None:
        raise HTTPException(404, f"embedding {embedding.name!r} has no sprite")
    if not embedding.sprite.image.raw_safe:
        width, height = embedding.sprite.image_size
        raise HTTPException(409, f"{embedding.sources['sprite']}: the sprite is {width}x{height} "
                                 "px, too large for a browser to decode as one image; load "
                                 "/api/sprite/atlas and /api/sprite/page instead")
    image = embedding.sprite.read(embedding.sources["sprite"])  # DataError: a 422
    return Response(image, media_type=embedding.sprite.content_type)


@router.get("/bookmarks", responses=EMBEDDING_ERRORS)
def get_bookmarks(embedding: EmbeddingDep) -> list[dict]:
    return embedding.bookmarks()  # DataError: a 422
