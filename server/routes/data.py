"""The read API: runs, tensors, metadata and sprites, as TensorBoard's plugin serves them
(bookmarks: ``bookmarks.py``); metadata search (``/api/search``) and each run's
training-step timelines (``/api/steps``). The metadata columns include the annotation
columns (``projector_core/data/added_columns.py``): answered from their codes like the
columns stored beside chunked data.

``GET /api/metadata/column`` answers one metadata column for N points without a TSV to
parse: a categorical column as its dictionary (JSON list, ``X-Dictionary-Bytes`` long,
padded with spaces to a multiple of 4) followed by N int32 codes into it; a numeric one
(``kind=numeric``, or ``auto`` for a column of numbers) as N float32, NaN where missing.
The kind is in ``X-Kind``. It carries an ``ETag`` (the metadata's digest, the column and the
kind) and is revalidated on each use: a second visit gets ``304 Not Modified`` and reads the
column from the browser's cache instead of 4N bytes again.
``GET /api/metadata/column/counts`` answers the same dictionary with
how many rows hold each value and no per-row array: what a page showing tiles (which carry the
codes) needs to colour by the column and draw its legend, at any N.
A chunked embedding's columns stored as int32 codes (``formats/code_columns.py``; the
embedding decides which answers a name) are answered from those codes a zarr chunk at a
time: counted, searched, streamed; ``/api/metadata`` spells them out only for a set not
shown from tiles.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import chain
from typing import Annotated, Literal

import numpy as np
from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import Response, StreamingResponse
from projector.server.deps import EmbeddingDep, ServiceDep
from projector.server.error_responses import EMBEDDING_ERRORS, ProgressOut
from projector.server.limits_models import DataLimitsOut
from pydantic import BaseModel, Field

from projector_core.data.model import Embedding
from projector_core.data.steps import timelines
from projector_core.errors import unknown_column
from projector_core.projection.methods import data_limits
from projector_core.semantic.models import Models
from projector_core.service.names import label_column
from projector_core.storage.fingerprint import fingerprint
from projector_core.tiles.view import shown_from_tiles, tsne_umap_from_tiles

router = APIRouter(prefix="/api", tags=["data"])

STREAM_CHUNK_BYTES = 1024 * 1024


class SpriteOut(BaseModel):
    """The configured image's cells, as /api/sprite serves it; /api/sprite/atlas gives every
    thumbnail at full size (also from sprite pages the config's image only shows scaled)."""

    single_image_dim: tuple[int, int]


class SearchOut(BaseModel):
    indices: list[int] = Field(description="Matching rows, ascending")


class StepOut(BaseModel):
    step: int
    embedding: str
    rows: int | None
    written: float | None = Field(description="When its files were last written (seconds "
                                               "since the epoch); null when not from LOGDIR")


class TimelineOut(BaseModel):
    tag: str
    steps: list[StepOut] = Field(description="Ascending by step")


class StepsOut(BaseModel):
    run: str
    timelines: list[TimelineOut]


class ModelOut(BaseModel):
    """The model that made an embedding's vectors: what search by a phrase needs."""

    name: str = Field(description="As declared: an installed model package or a folder")
    status: Literal["idle", "loading", "ready", "failed", "unavailable"] = Field(
        description="idle: not loaded yet (the first phrase starts it); loading: its job "
                    "runs (GET /api/jobs/JOB); ready: phrases are answered; failed: `error` "
                    "says why (a phrase gets the same); unavailable: a shared static site "
                    "(projector export), where no model runs")
    job: str | None = Field(description="The job making it ready (kind model)")
    progress: float | None = Field(description="While loading: the job's progress, 0..1")
    error: str | None


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
    tiles: bool = Field(description="2-D PCA and custom views are shown from level-of-detail "
                                    "tiles (large sets), and the page opens in 2-D")
    tsne_umap_tiles: bool = Field(description="2-D t-SNE and UMAP come as tiles too: their "
                                              "N x 2 float32 is over the most a page takes "
                                              "whole (256 MB, 33.5M points), so the page "
                                              "follows the job for progress alone and shows "
                                              "its tiles once done")
    model: ModelOut | None = Field(description="The model that made the vectors (search by "
                                               "a phrase); null: none declared (search by "
                                               "example still works)")

    @classmethod
    def of(cls, embedding: Embedding, models: Models) -> EmbeddingOut:
        """The embedding as listed, its model's readiness from ``models`` (the service's)."""
        sprite = embedding.sprite
        model = models.status_of(embedding)
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
            tiles=embedding.shape is not None and shown_from_tiles(embedding.shape[0]),
            tsne_umap_tiles=embedding.shape is not None
            and tsne_umap_from_tiles(embedding.shape[0]),
            model=None if model is None else ModelOut(**model),
        )


class RunOut(BaseModel):
    name: str
    error: str | None
    embeddings: list[EmbeddingOut]
    folder: str | None = Field(None, description='For the run "." (TensorBoard\'s name for '
                                                 "the LOGDIR itself): the LOGDIR's own name, "
                                                 "which the page shows beside it")


class Health(BaseModel):
    status: str


@router.get("/health")
def health() -> Health:
    return Health(status="ok")


@router.get("/runs")
def list_runs(service: ServiceDep) -> list[RunOut]:
    """Every run and its embeddings. Per embedding, ``tiles`` and ``tsne_umap_tiles`` tell the
    page what comes as level-of-detail tiles instead of whole (``tiles/view.py``
    decides both): 2-D PCA and custom views above 2M points; 2-D t-SNE and UMAP once their
    N x 2 float32 is over 256 MB (followed for progress alone, without frames); ``model``
    which model made the vectors and whether it is ready (search by a phrase)."""
    top = service.logdir_name()
    return [
        RunOut(name=run.name, error=run.error,
               embeddings=[EmbeddingOut.of(e, service.models) for e in run.embeddings],
               folder=top if run.name == "." else None)
        for run in service.runs()
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
    stored = list(embedding.stored_columns())
    if stored and embedding.shape is not None and shown_from_tiles(embedding.shape[0]):
        raise HTTPException(413, f"{embedding.shape[0]:,} points are shown from tiles: their "
                                 f"stored columns ({', '.join(stored)}) are served one at a time "
                                 "(/api/metadata/column, /api/metadata/column/counts) and with "
                                 "the tiles, not as one TSV of a string per row")
    coded = stored or embedding.coded_columns()  # stored beside the data, or annotations
    text = embedding.metadata_or_index().to_tsv() if not coded else \
        embedding.metadata_with_stored().to_tsv()  # DataError: a 422 naming the file
    return Response(text, media_type="text/tab-separated-values; charset=utf-8")


@router.get(
    "/metadata/column",
    response_class=Response,
    responses={**EMBEDDING_ERRORS, 200: {"content": {"application/octet-stream": {}},
                                         "description": "See the module docs: dictionary + "
                                                        "int32 codes, or float32"}},
)
def get_metadata_column(
    request: Request,
    embedding: EmbeddingDep,
    column: Annotated[str, Query(description="Metadata column name")],
    kind: Annotated[Literal["auto", "categorical", "numeric"],
                    Query(description="auto: numeric for a column of numbers")] = "auto",
) -> Response:
    stored = embedding.code_column(column)  # codes stored beside chunked data: categorical
    metadata = embedding.metadata() if stored is None else None  # DataError: a 422
    if stored is None and (metadata is None or column not in metadata.names):
        raise unknown_column(column, embedding.metadata_columns())
    digest = stored.digest if stored is not None else metadata.digest  # type: ignore[union-attr]
    tag = '"' + fingerprint(digest, column, kind) + '"'
    cached = {"ETag": tag, "Cache-Control": "no-cache"}  # revalidated: the file may change
    if tag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=cached)
    numbers = metadata.numeric(column) if metadata is not None and kind != "categorical" else None
    if kind == "numeric" and numbers is None:
        raise ValueError(f"metadata column {column!r} is not numeric")
    if numbers is not None:
        return Response(numbers.astype("<f4").tobytes(), media_type="application/octet-stream",
                        headers={"X-Kind": "numeric", **cached})
    dictionary = stored.dictionary if stored is not None else embedding.categorical(column)[0]
    head = dictionary_head(dictionary)
    headers = {"X-Kind": "categorical", "X-Dictionary-Bytes": str(len(head)), **cached}
    if stored is not None:  # streamed a zarr chunk at a time, checked by the counts first
        stored.counts  # noqa: B018  # DataError (a 422) before the first byte is sent
        blocks = (block.astype("<i4", copy=False).data.cast("B") for block in stored.blocks())
        return StreamingResponse(chain([head], blocks), media_type="application/octet-stream",
                                 headers={**headers, "Content-Length": str(
                                     len(head) + 4 * stored.rows)})
    codes = embedding.categorical(column)[1]  # encoded once, kept with the metadata
    return coded_response(head, codes, headers)


def dictionary_head(dictionary: list[str]) -> bytes:
    """A categorical column's dictionary as the wire's head: JSON, padded with spaces to a
    multiple of 4 (the int32 codes after it stay aligned)."""
    head = json.dumps(dictionary, ensure_ascii=False).encode()
    return head + b" " * (-len(head) % 4)


def coded_response(head: bytes, codes: np.ndarray, headers: dict[str, str]) -> Response:
    """The head, then a little-endian int32 code per row (one copy of 4N bytes)."""
    body = b"".join((head, codes.astype("<i4", copy=False).data))
    return Response(body, media_type="application/octet-stream", headers=headers)


class ColumnCountsOut(BaseModel):
    column: str
    values: int = Field(description="Distinct values (the dictionary's length)")
    dictionary: list[str] | None = Field(description="The values the codes index into, as "
                                                     "/api/metadata/column answers them; null "
                                                     "when more than `limit`")
    counts: list[int] | None = Field(description="Rows holding each dictionary value")


@router.get("/metadata/column/counts", responses=EMBEDDING_ERRORS)
def get_metadata_column_counts(
    embedding: EmbeddingDep,
    column: Annotated[str, Query(description="Metadata column name")],
    limit: Annotated[int, Query(ge=0, le=1_000_000,
                                description="Most distinct values answered")] = 100_000,
) -> ColumnCountsOut:
    """A column's dictionary and the rows holding each value (one pass over its codes)."""
    # Stored codes: counted a chunk at a time, once; DataError: a 422 naming the file;
    # UnknownColumn: a 422 naming the columns.
    dictionary, counts = embedding.column_counts(column)
    if len(dictionary) > limit:
        return ColumnCountsOut(column=column, values=len(dictionary), dictionary=None, counts=None)
    return ColumnCountsOut(column=column, values=len(dictionary), dictionary=list(dictionary),
                           counts=counts.tolist())


@router.get(
    "/search",
    responses={
        404: {"description": "Unknown run or embedding"},
        422: {
            "description": "Unknown metadata column (the detail lists the known ones), "
            "bad regular expression, or unreadable metadata"
        },
    },
)
def search_metadata(
    embedding: EmbeddingDep,
    service: ServiceDep,
    column: Annotated[str, Query(description="Metadata column to search")],
    query: Annotated[str, Query(description="Substring, or regular expression with regex=true")],
    regex: Annotated[bool, Query(description="Treat the query as a regular expression")] = False,
) -> SearchOut:
    """Rows whose value in ``column`` matches, case-insensitively (a blank query matches none).

    An embedding without a metadata file has one column, ``index``, as /api/metadata
    serves it.
    """
    return SearchOut(indices=service.search_metadata(embedding, column, query, regex))


@router.get("/steps", responses={404: {"description": "Unknown run"}})
def steps(service: ServiceDep, run: Annotated[str, Query(description="Run name")]) -> StepsOut:
    """The run's tags, each with the steps written for it (``TAG:STEP`` tensor names)."""
    found = service.run(run)
    return StepsOut(run=run, timelines=[
        TimelineOut(tag=t.tag, steps=[StepOut(step=s.step, embedding=s.embedding, rows=s.rows,
                                              written=service.catalog.written(run, s.embedding))
                                      for s in t.steps])
        for t in timelines(found)])
