"""What ``Client.upload`` sends: a tensor (an array through the one normaliser,
``projector_core.formats.inputs``, saved as .npy; or a file's own bytes) and its metadata
(JSON columns, or a file's own bytes), as one body or a multipart form."""

from __future__ import annotations

import io
import json
import secrets
from pathlib import Path
from typing import Any

import numpy as np

from projector.client.wire import part


def upload_request(vectors: Any, metadata: Any, name: str,
                   vector_column: str | None) -> tuple[dict[str, str], bytes, str]:
    """(query, body, content type) of ``POST /api/uploads``."""
    n_points: int | None = None  # a file's rows are counted by the server
    columns = None
    if isinstance(vectors, str | Path):
        name, tensor = Path(vectors).name, Path(vectors).read_bytes()
    else:
        from projector_core.formats.inputs import split_table  # the one normaliser

        matrix, columns = split_table(vectors, vector_column)
        n_points = int(matrix.shape[0])
        buffer = io.BytesIO()
        np.save(buffer, matrix, allow_pickle=False)
        tensor = buffer.getvalue()
    if isinstance(metadata, str | Path):
        table, table_name = Path(metadata).read_bytes(), Path(metadata).name
    elif metadata is not None or columns:
        from projector_core.formats.inputs import metadata_columns

        given_columns = metadata_columns(metadata, n_points) or columns
        table, table_name = json.dumps(given_columns).encode(), "metadata.json"
    else:
        return {"name": name}, tensor, "application/octet-stream"
    boundary = secrets.token_hex(16)
    body = b"".join(part(boundary, field, filename, data) for field, filename, data in
                    (("tensor", name, tensor), ("metadata", table_name, table)))
    return {}, body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"
