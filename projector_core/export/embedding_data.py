"""One embedding's answers, precomputed as files: what the page would ask ``/api/`` for it
(projections with their level-of-detail orders, metadata, neighbours, sprite atlas pages,
bookmarks), written under its folder and described by its manifest entry.

``max_points`` keeps the first points of the first projection's level-of-detail order (an
even sample of the picture, outliers included); the sample is then a data set of its own:
rows renumbered in their original order, neighbours found among its rows, the original row
in an ``original_row`` column, its thumbnails on new atlas pages. Bookmarks name rows of the
whole set, so a sampled export leaves them out (and says so in ``notes``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.data.model import Embedding
from projector_core.export.files import SiteFiles
from projector_core.export.neighbors import CHUNK_ROWS, index_over, write_neighbors
from projector_core.export.sprite_pages import write_sprite
from projector_core.projection.compute import ProjectionResult
from projector_core.projection.default_request import default_request
from projector_core.projection.methods import data_limits, parameter_table
from projector_core.semantic.models import model_of
from projector_core.tiles.order import lod_order

# (stage, fraction done or None); a CLI prints it as one line, a route may ignore it.
Progress = Callable[[str, float | None], None]
# The service's projection run to its end: (embedding, method, its dims and params as the
# view asks them, progress) -> the result; ValueError when the data cannot satisfy it or it fails.
Project = Callable[[Embedding, str, dict[str, Any], Progress], ProjectionResult]

TSV_UP_TO = 100_000  # columns.js's COLUMNS_ABOVE: above it the page reads column files only
SAMPLE_COLUMN = "original_row"


@dataclass
class EmbeddingExport:
    """What to export of one embedding."""

    methods: tuple[str, ...]
    k: int
    metrics: tuple[str, ...]
    max_points: int | None
    device: str = "cpu"
    cache_dir: Path | None = None
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)  # else the app's default
    models: dict[tuple[str, str], str] = field(default_factory=dict)  # as serve --model says
    notes: list[str] = field(default_factory=list)


def sample_rows(result: ProjectionResult, method: str, max_points: int | None) -> np.ndarray | None:
    """The rows a ``max_points`` export keeps (ascending), or None for all of them."""
    n = result.coordinates.shape[0]
    if max_points is None or n <= max_points:
        return None
    order = lod_order(result.coordinates[:, _default_axes(method, result.coordinates.shape[1])])
    return np.sort(order[:max_points]).astype(np.int64)


def _default_axes(method: str, cols: int) -> list[int]:
    """The columns the page shows a fresh view of ``method`` over (3D PCA, else 2D)."""
    return list(range(min(cols, 3 if method == "pca" else 2)))


def _axes_sets(method: str, cols: int) -> list[list[int]]:
    """The axes the page asks a level-of-detail order over by default: PCA's first two and
    three components (its 2D and 3D views), a t-SNE/UMAP result's own columns."""
    if method == "pca":
        return [list(range(min(cols, 2)))] + ([[0, 1, 2]] if cols >= 3 else [])
    return [list(range(min(cols, 3)))]


def export_embedding(embedding: Embedding, files: SiteFiles, folder: str, what: EmbeddingExport,
                     project: Project, progress: Progress) -> dict[str, Any]:
    """Writes the embedding's files under ``folder``; its manifest entry."""
    label = f"{embedding.run}/{embedding.name}"
    requests = {m: what.requests.get(m) or default_request(embedding, m) for m in what.methods}
    results = {m: project(embedding, m, requests[m], lambda s, f: progress(f"{label} {s}", f))
               for m in what.methods}
    rows = sample_rows(results[what.methods[0]], what.methods[0], what.max_points)
    n_all, d = embedding.shape or (0, 0)
    n = n_all if rows is None else int(rows.size)
    entry: dict[str, Any] = {"run": embedding.run, "embedding": embedding.name, "dir": folder,
                             "n": n, "d": d, "sampled_from": None if rows is None else n_all}
    entry["projections"] = {
        m: _write_projection(files, folder, m, results[m], rows, requests[m])
        for m in what.methods}
    progress(f"{label} metadata", None)
    entry["metadata"], columns = _write_metadata(files, folder, embedding, rows, n)
    entry["neighbors"] = _write_all_neighbors(files, folder, embedding, rows, n, what,
                                              lambda f: progress(f"{label} neighbours", f))
    entry["sprite"] = None
    if embedding.sprite is not None:
        progress(f"{label} sprite pages", None)
        entry["sprite"] = write_sprite(files, folder, embedding.sprite, rows, what.cache_dir)
    entry["bookmarks"] = None
    if embedding.has_bookmarks and rows is None:
        entry["bookmarks"] = files.json(f"{folder}/bookmarks.json", embedding.bookmarks())
    if rows is not None and embedding.has_bookmarks:
        what.notes.append(f"{label}: sampled to {n:,} of {n_all:,} points; its bookmarks name "
                          "rows of the whole set and are left out")
    entry["info"] = _embedding_info(embedding, n, d, columns, entry,
                                    model_of(what.models, embedding))
    # The parameter table for the page (static_mode.js answers it), k as exported.
    entry["methods"] = {**parameter_table((n, d)), "neighbors": entry["info"]["limits"]["neighbors"]}
    return entry


def _write_projection(files: SiteFiles, folder: str, method: str, result: ProjectionResult,
                      rows: np.ndarray | None, request: dict[str, Any]) -> dict[str, Any]:
    coordinates = result.coordinates if rows is None else result.coordinates[rows]
    coordinates = np.ascontiguousarray(coordinates, np.float32)
    cols = int(coordinates.shape[1])
    lod = {}
    for axes in _axes_sets(method, cols):
        key = ",".join(map(str, axes))
        name = f"{folder}/{method}.lod-{'-'.join(map(str, axes))}.i32"
        lod[key] = files.binary(name, lod_order(coordinates[:, axes]).astype(np.int32))
    return {"file": files.binary(f"{folder}/{method}.f32", coordinates), "cols": cols,
            "dims": min(cols, int(request.get("dims", 2))), "info": _json_safe(result.info),
            "request": request, "lod": lod}


def _json_safe(value: Any) -> Any:
    """The info dict as strict JSON takes it: numpy values made plain, NaN and Inf null."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_json_safe(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _write_metadata(files: SiteFiles, folder: str, embedding: Embedding, rows: np.ndarray | None,
                    n: int) -> tuple[dict[str, Any] | None, list[str]]:
    metadata = embedding.metadata_with_added()  # the annotation columns too
    names = list(metadata.names) if metadata is not None else []
    columns: dict[str, list[str]] = {}
    for name in names:
        values = metadata.column(name)  # type: ignore[union-attr]
        columns[name] = values if rows is None else [values[i] for i in rows]
    if rows is not None:
        columns[SAMPLE_COLUMN] = [str(i) for i in rows]
    if not columns:
        return None, []
    out: dict[str, Any] = {"tsv": None, "columns": {}}
    if n <= TSV_UP_TO:
        text = metadata.to_tsv() if rows is None and metadata is not None else _tsv(columns)
        out["tsv"] = files.text(f"{folder}/metadata.tsv", text)
    for i, (name, values) in enumerate(columns.items()):
        out["columns"][name] = files.binary(f"{folder}/columns/{i}.bin", _categorical(values))
    return out, list(columns)


def _tsv(columns: dict[str, list[str]]) -> str:
    names = list(columns)
    lines = ["\t".join(names)] + ["\t".join(row) for row in zip(*columns.values(), strict=True)]
    return "\n".join(lines) + "\n"


def _categorical(values: list[str]) -> bytes:
    """``GET /api/metadata/column``'s body: the dictionary as JSON padded with spaces to a
    multiple of 4 bytes, then one int32 code a row; the head's length is stored in front as
    a uint32 (the route's X-Dictionary-Bytes header)."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), np.int32, len(values))
    head = json.dumps(list(index), ensure_ascii=False).encode()
    head += b" " * (-len(head) % 4)
    return b"".join((np.uint32(len(head)).astype("<u4").tobytes(), head,
                     codes.astype("<i4").tobytes()))


def _write_all_neighbors(files: SiteFiles, folder: str, embedding: Embedding,
                         rows: np.ndarray | None, n: int, what: EmbeddingExport,
                         progress: Callable[[float], None]) -> dict[str, Any]:
    k = max(0, min(what.k, n - 1))
    metrics = {}
    for metric in what.metrics if k else ():  # --neighbors 0: none (the page then asks none)
        index = index_over(embedding, rows, metric, what.device)  # type: ignore[arg-type]
        chunks = write_neighbors(files, f"{folder}/neighbors/{metric}", index, k, metric,  # type: ignore[arg-type]
                                 progress)
        metrics[metric] = {"folder": f"{folder}/neighbors/{metric}", "chunks": len(chunks),
                           "suffix": ".bin.gz" if files.compress else ".bin"}
    return {"k": k, "chunk_rows": CHUNK_ROWS, "metrics": metrics}


def _embedding_info(embedding: Embedding, n: int, d: int, columns: list[str],
                    entry: dict[str, Any], model: str | None) -> dict[str, Any]:
    """The embedding as ``GET /api/runs`` lists it, for the exported rows: the neighbour
    limit is the k exported, so the page never asks for more; its model (the data's own
    declaration) is named, unavailable: the page says phrases need a server."""
    limits = data_limits(n, d)
    limits["neighbors"]["k"]["maximum"] = entry["neighbors"]["k"]
    sprite = embedding.sprite
    return {"name": embedding.name, "status": "ready", "progress": None, "shape": [n, d],
            "metadata_columns": columns,
            "sprite": {"single_image_dim": list(sprite.image.thumb)}
            if sprite is not None and entry["sprite"] else None,
            "has_bookmarks": entry["bookmarks"] is not None, "error": None,
            "warnings": list(embedding.warnings), "sources": {}, "limits": limits,
            "model": None if model is None else {
                "name": model, "status": "unavailable", "job": None, "progress": None,
                "error": "a shared site runs no model: phrases are searched on a Projector "
                         "server; search by example works here"}}
