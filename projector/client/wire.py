"""What :mod:`projector.client.api` sends and reads, beside HTTP itself: request bodies and
paths, multipart uploads, float32 arrays and error details."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import numpy as np

USER_HEADER = "X-Projector-User"  # who edits annotations
OCTET_STREAM = "application/octet-stream"


def projection_body(run: str, embedding: str, method: str, dims: int, device: str | None,
                    params: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"run": run, "embedding": embedding, "method": method, "dims": dims,
                            "params": params}
    if device is not None:
        body["device"] = device
    return body


def names(run: str, embedding: str) -> dict[str, str]:
    return {"run": run, "embedding": embedding}


def job_path(job_id: str, part: str | None = None) -> str:
    return f"/api/jobs/{urllib.parse.quote(job_id)}" + (f"/{part}" if part else "")


def given(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


def part(boundary: str, field: str, filename: str, data: bytes) -> bytes:
    """One file of a multipart/form-data body."""
    safe = filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
    return (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; "
            f"filename=\"{safe}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            ).encode() + data + b"\r\n"


def float32(body: bytes, headers: dict[str, str]) -> np.ndarray:
    shape = tuple(int(s) for s in headers["x-shape"].split(","))
    return np.frombuffer(body, "<f4").reshape(shape).copy()


def json_body(body: bytes) -> Any:
    """An error's JSON answer (None when it is not JSON)."""
    try:
        return json.loads(body)
    except ValueError:
        return None


def detail(body: bytes) -> str:
    try:
        detail = json.loads(body)["detail"]
    except (ValueError, KeyError, TypeError):
        return body.decode(errors="replace")
    return detail if isinstance(detail, str) else json.dumps(detail)
