"""``POST /api/uploads``: a tensor (TSV or .npy) and optional metadata TSV sent from the browser.

Multipart fields ``tensor`` and ``metadata``, or the tensor alone as the raw body with its file
name in ``?name=``. The data is served as a new run ``upload-<id>`` held in memory for this
server session only (never written to LOGDIR); bodies over the upload limit get a 413 that
names it (:data:`UPLOAD_PATH`'s limit in ``body_limit.py``, which enforces it as the body streams).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from projector.server.body_limit import BodyLimit
from projector.server.deps import UploadsDep
from pydantic import BaseModel
from starlette.datastructures import UploadFile

router = APIRouter(prefix="/api", tags=["uploads"])

DEFAULT_MAX_UPLOAD_BYTES = 64 * 2**20
UPLOAD_PATH = "/api/uploads"


class UploadOut(BaseModel):
    run: str
    embedding: str
    shape: tuple[int, int]


def _too_large(limit: int) -> str:
    size = f"{limit / 2**20:.0f} MiB" if limit >= 2**20 else f"{limit / 2**10:.0f} KiB"
    return (f"the upload is larger than this server's limit of {size} ({limit} bytes); put "
            "large files in a LOGDIR and run `projector serve LOGDIR` instead")


def upload_limit(max_bytes: int) -> BodyLimit:
    """What ``POST /api/uploads`` may send, in place of the app's body limit."""
    return BodyLimit(max_bytes, _too_large)


@router.post("/uploads", status_code=201, responses={
    413: {"description": "The body is over the upload limit"},
    422: {"description": "The tensor or metadata cannot be read (the message names the file "
                         "and line)"}})
async def upload(
    request: Request,
    uploads: UploadsDep,
    name: Annotated[str, Query(max_length=200, description="File name of a raw-body tensor; "
                                                           ".npy or TSV by its suffix")] = "upload.tsv",
) -> UploadOut:
    metadata, metadata_name = None, "metadata.tsv"
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form(max_files=2, max_fields=2)
        tensor_file, metadata_file = form.get("tensor"), form.get("metadata")
        if not isinstance(tensor_file, UploadFile):
            raise ValueError("multipart field 'tensor' (a file) is missing")
        name = Path(tensor_file.filename or "tensor.tsv").name[-200:]  # a label, never a path
        tensor = await tensor_file.read()
        if isinstance(metadata_file, UploadFile):
            metadata_name = Path(metadata_file.filename or metadata_name).name[-200:]
            metadata = await metadata_file.read()
    else:
        tensor = await request.body()  # bounded by upload_limit as it streams
    # DataError (a file that cannot be used): the app answers 422 naming the file and line.
    run = await run_in_threadpool(uploads.add, tensor, name, metadata, metadata_name)
    embedding = run.embeddings[0]
    assert embedding.shape is not None
    return UploadOut(run=run.name, embedding=embedding.name, shape=embedding.shape)



