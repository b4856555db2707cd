"""An exported static site read back as the export operation's answer, whichever door wrote it
(``projector export``'s folder, or the zip of ``GET /api/export/site`` and the page's button)."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from tests.conformance.answers import typed_table


def unzip(data: bytes, folder: Path) -> Path:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        archive.extractall(folder)
    return folder


def _read(site: Path, name: str) -> bytes:
    data = (site / name).read_bytes()
    return gzip.decompress(data) if name.endswith(".gz") else data


def site_answer(site: Path, run: str, embedding: str) -> dict[str, Any]:
    """What the site holds for ``run``/``embedding``: its size, metadata, the request and the
    shown columns of each projection, and every row's neighbours by cosine."""
    manifest = json.loads((site / "static.json").read_text())
    entry = next(e for e in manifest["embeddings"] if e["run"] == run and e["embedding"] == embedding)
    n = entry["n"]
    projections, requests = {}, {}
    for method, written in entry["projections"].items():
        coordinates = np.frombuffer(_read(site, written["file"]), "<f4").reshape(n, written["cols"])
        projections[method] = coordinates[:, :written["dims"]].copy()
        requests[method] = written["request"]
    neighbors = entry["neighbors"]
    k, cosine = neighbors["k"], neighbors["metrics"]["cosine"]
    chunks = [np.frombuffer(_read(site, f"{cosine['folder']}/{i:05d}{cosine['suffix']}"), "<i4")
              for i in range(cosine["chunks"])]
    # each chunk: its rows' indices (rows x k int32), then their distances (rows x k float32)
    table = np.concatenate([chunk[:chunk.size // 2].reshape(-1, k) for chunk in chunks])
    metadata = entry["metadata"]
    return {"n": n, "d": entry["d"], "requests": requests, "projections": projections,
            "metadata": typed_table(_read(site, metadata["tsv"]).decode()),
            "neighbors": table.astype(np.int32)}
