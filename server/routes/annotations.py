"""Annotations: labels, flags and notes on an embedding's rows, kept in the server's store
(``projector_core/annotations/``; ``projector serve --annotations PATH|off``), every edit
recorded with its time and author.

- ``POST /api/annotations``: set ``column`` to ``value`` on ``rows``, or on every row inside a
  ``selection`` region of a done projection's map (a view shown from tiles: the server's
  count), in one edit; a new column is made of ``kind`` (default: a flag for a boolean,
  else a label).
- ``GET /api/annotations?run=&embedding=``: the columns (shown, or kept with the reason) and
  whether annotations are on. A shown column is a metadata column: ``/api/metadata/column``
  answers its codes like any other.
- ``GET /api/annotations/history``: everyone's edits, newest first.
- ``GET /api/annotations/column?column=&as_of=``: a column as it was right after an edit of
  the history (default: now), on ``/api/metadata/column``'s wire (dictionary, then int32
  codes; ``X-As-Of`` says which edit).
- ``POST /api/annotations/undo`` and ``/redo``: the caller's own last edit.
- ``GET /api/annotations/export?format=tsv|csv|parquet``: the metadata with the annotation
  columns beside it (the TSV in TensorBoard's metadata format).
- ``POST /api/annotations/import?column=``: a column taken back from a file (the body).

The author is the ``X-Projector-User`` header, else "local". Every committed change goes out
on ``GET /api/events`` (``annotations/serving.py`` states the event). Two edits of one cell:
the later committed wins, the earlier stays in the history (every answer to an edit says so,
``rule``).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from typing import Annotated, BinaryIO, Literal, cast

import numpy as np
from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from projector.server.deps import ServiceDep
from projector.server.routes.data import coded_response, dictionary_head
from projector.server.routes.tile_queries import RegionIn
from pydantic import BaseModel, ConfigDict, Field

from projector_core.annotations import AnnotationService, ColumnInfo, Committed, Edit
from projector_core.annotations.export import MEDIA_TYPES, Format
from projector_core.annotations.kinds import NAME_MAX
from projector_core.tiles.queries import Region

router = APIRouter(prefix="/api/annotations", tags=["annotations"])

USER_HEADER = "X-Projector-User"
EXPORT_CHUNK = 1 << 20
ERRORS: dict[int | str, dict] = {
    404: {"description": "Unknown run, embedding, column or job"},
    409: {"description": "Annotations are off on this server (the detail says why)"},
    422: {"description": "A bad column name (or one the metadata already has), value, row, "
                         "region or file"},
    503: {"description": "The tensor is still loading, or another program holds the store's "
                         "write lock (Retry-After): nothing was written"},
    507: {"description": "The disk refused the write: nothing was written"},
}
Kind = Literal["label", "flag", "note"]
Run = Annotated[str, Query(description="Run name as listed by /api/runs")]
EmbeddingName = Annotated[str, Query(description="Embedding name within the run (every "
                                                 "step of a tag shows the same labels)")]
Author = Annotated[str | None, Header(alias=USER_HEADER, description="Who edits (default "
                                                                     "'local')")]


class SelectionIn(RegionIn):
    """A region of a done projection's map (as ``POST /api/jobs/ID/select`` takes it)."""

    job: str = Field(description="The done projection job whose map the region is drawn on")


class AnnotateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: str
    embedding: str
    column: str = Field(max_length=NAME_MAX, description="A new or existing annotation column")
    value: str | bool | None = Field(description="The value (a flag: true or false; null or "
                                                 "'' clears)")
    rows: list[int] | None = Field(None, description="Row numbers to set")
    selection: SelectionIn | None = Field(None, description="Or: every row inside a region")
    kind: Kind | None = Field(None, description="A new column's kind (default: flag for a "
                                                "boolean value, else label)")


class NamesIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: str
    embedding: str


class EditOut(BaseModel):
    id: int
    column: str
    action: Literal["set", "import", "undo", "redo"]
    author: str
    at: float = Field(description="Seconds since the epoch")
    rows: int = Field(description="Rows it set (an undo or redo: its target's)")
    value: str | None = Field(description="A set's value ('' clears); null for the others")
    target: int | None = Field(description="The edit an undo or redo acts on")
    undone: bool

    @classmethod
    def of(cls, edit: Edit) -> EditOut:
        return cls(id=edit.id, column=edit.column, action=edit.action, author=edit.author,
                   at=edit.at, rows=edit.rows, value=edit.value, target=edit.target,
                   undone=edit.undone)


class CommittedOut(BaseModel):
    edit: EditOut
    changed: int = Field(description="Rows that hold another value than before")
    code: int | None = Field(description="A set's value's code in the column (a page "
                                         "recolours its rows at once)")
    values: int = Field(description="Values in the column's dictionary now")
    rule: str = Field(description="How two edits of one cell are resolved")

    @classmethod
    def of(cls, committed: Committed) -> CommittedOut:
        return cls(edit=EditOut.of(committed.edit), changed=committed.changed,
                   code=committed.code, values=committed.values, rule=committed.rule)


class ColumnOut(BaseModel):
    name: str
    kind: Kind
    rows: int = Field(description="The row count it was made for")
    shown: bool = Field(description="False: kept, not shown (`reason`)")
    reason: str | None
    edits: int
    last_edit: int | None
    created_by: str
    created_at: float

    @classmethod
    def of(cls, info: ColumnInfo) -> ColumnOut:
        return cls(name=info.name, kind=info.kind, rows=info.rows, shown=info.shown,
                   reason=info.reason, edits=info.edits, last_edit=info.last_edit,
                   created_by=info.created_by, created_at=info.created_at)


class AnnotationsOut(BaseModel):
    enabled: bool = Field(description="Whether this server keeps annotations")
    reason: str | None = Field(description="Why not, when not")
    rule: str
    columns: list[ColumnOut]


def _service(service: ServiceDep) -> AnnotationService:
    return service.annotations


@router.post("", responses=ERRORS)
def annotate(body: AnnotateIn, service: ServiceDep, author: Author = None) -> CommittedOut:
    """Set ``column`` to ``value`` on ``rows`` or inside ``selection``, in one edit."""
    if (body.rows is None) == (body.selection is None):
        raise HTTPException(422, "give exactly one of 'rows' (row numbers) or 'selection' "
                                 "(a region of a done projection's map)")
    rows = (body.rows if body.selection is None
            else _region_rows(body.selection, body.run, body.embedding, service))
    assert rows is not None
    committed = _service(service).annotate(body.run, body.embedding, body.column, body.value,
                                           rows, author, body.kind)
    return CommittedOut.of(committed)


def _region_rows(selection: SelectionIn, run: str, embedding: str, service: ServiceDep) -> np.ndarray:
    if (selection.box is None) == (selection.polygon is None):
        raise HTTPException(422, "a selection gives exactly one of 'box' [x0, y0, x1, y1] or "
                                 "'polygon' [[x, y], ...]")
    region = (Region.box(selection.box) if selection.box is not None
              else Region.of_polygon(selection.polygon or []))
    return service.rows_inside(service.job(selection.job), selection.axes, region,
                               service.embedding(run, embedding))


@router.get("", responses=ERRORS)
def columns(run: Run, embedding: EmbeddingName, service: ServiceDep) -> AnnotationsOut:
    """The embedding's annotation columns, oldest first."""
    annotations = _service(service)
    status = annotations.status()
    return AnnotationsOut(enabled=status["enabled"], reason=status["reason"], rule=status["rule"],
                          columns=[ColumnOut.of(c) for c in annotations.columns(run, embedding)])


@router.get("/history", responses=ERRORS)
def history(run: Run, embedding: EmbeddingName, service: ServiceDep,
            column: Annotated[str | None, Query(description="Only this column's")] = None,
            limit: Annotated[int, Query(ge=1, le=10_000)] = 100,
            before: Annotated[int | None, Query(description="Edits older than this one "
                                                            "(the next page)")] = None,
            ) -> list[EditOut]:
    """Everyone's edits of the embedding, newest first."""
    return [EditOut.of(e) for e in _service(service).history(run, embedding, column, limit,
                                                             before)]


@router.get("/column", response_class=Response, responses={
    **ERRORS, 200: {"content": {"application/octet-stream": {}},
                    "description": "The dictionary (JSON, X-Dictionary-Bytes long) then an "
                                   "int32 code per row; code 0 is '' (no value set)"}})
def column(run: Run, embedding: EmbeddingName, service: ServiceDep,
           column: Annotated[str, Query(description="The annotation column")],
           as_of: Annotated[int | None, Query(ge=1, description="An edit's id (the history's): the "
                                                          "column right after it; default now"
                                              )] = None) -> Response:
    """The column as of any edit: replayed from the edits that counted then."""
    found = _service(service).values(run, embedding, column, as_of)
    head = dictionary_head(found.dictionary)
    return coded_response(head, found.codes, {
        "X-Kind": "categorical", "X-Dictionary-Bytes": str(len(head)),
        "X-As-Of": "now" if as_of is None else str(as_of), "Cache-Control": "no-store"})


@router.post("/undo", responses=ERRORS)
def undo(body: NamesIn, service: ServiceDep, author: Author = None) -> CommittedOut:
    """Undo the caller's own last edit of the embedding (others' edits stay)."""
    return CommittedOut.of(_service(service).undo(body.run, body.embedding, author))


@router.post("/redo", responses=ERRORS)
def redo(body: NamesIn, service: ServiceDep, author: Author = None) -> CommittedOut:
    """Redo the edit the caller undid last (unless they edited the embedding since)."""
    return CommittedOut.of(_service(service).redo(body.run, body.embedding, author))


@router.get("/export", response_class=StreamingResponse, responses={
    **ERRORS, 200: {"content": {media: {} for media in MEDIA_TYPES.values()},
                    "description": "The metadata with the annotation columns beside it"}})
def export(run: Run, embedding: EmbeddingName, service: ServiceDep,
           format: Annotated[Format, Query()] = "tsv",
           columns: Annotated[str | None, Query(description="Comma-separated annotation "
                                                            "columns (default: every shown "
                                                            "one); hidden ones alone")] = None,
           ) -> StreamingResponse:
    """A file to take back to training (the TSV in TensorBoard's metadata format)."""
    chosen = [c for c in columns.split(",") if c] if columns else None
    sink = tempfile.SpooledTemporaryFile(max_size=16 << 20)  # noqa: SIM115 (streamed, closed)
    try:
        _service(service).export(run, embedding, format, cast(BinaryIO, sink), chosen)
    except BaseException:
        sink.close()
        raise
    sink.seek(0)

    def chunks() -> Iterator[bytes]:
        with sink:
            while chunk := sink.read(EXPORT_CHUNK):
                yield chunk

    name = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{run}-{embedding}")[:100] or "embedding"
    return StreamingResponse(chunks(), media_type=MEDIA_TYPES[format], headers={
        "Content-Disposition": f'attachment; filename="{name}-annotations.{format}"'})


@router.post("/import", responses=ERRORS)
async def import_column(
    request: Request, run: Run, embedding: EmbeddingName, service: ServiceDep,
    column: Annotated[str, Query(max_length=NAME_MAX, description="The annotation column to "
                                                                  "set (the file's column of "
                                                                  "that name, or its only one)")],
    name: Annotated[str, Query(max_length=200, description="The file's name (its format by "
                                                           "suffix, and in messages)")] = "import.tsv",
    format: Annotated[Format | None, Query(description="Default: by the name's suffix")] = None,
    kind: Annotated[Kind | None, Query()] = None,
    author: Author = None,
) -> CommittedOut:
    """Every row of ``column`` set from the body (a file with one row per point), one edit."""
    raw = await request.body()  # bounded by the app's body limit as it streams
    committed = await run_in_threadpool(_service(service).import_column, run, embedding, column,
                                        raw, name, format, author, kind)
    return CommittedOut.of(committed)

