"""Data uploaded in the browser ("Load data"): parsed as LOGDIR files are, kept in memory only.

Each upload becomes a run ``upload-<id>`` of the catalog, so neighbours, search, t-SNE and
UMAP run on it through the ordinary routes and jobs. Nothing is written to LOGDIR; the bytes
pass through a temporary file only so that the file readers (TSV at C speed, ``.npy`` never
unpickled) are the very ones LOGDIR files get. At most ``keep`` uploads are held: the oldest
goes first. They vanish with the server.
"""

from __future__ import annotations

import json
import secrets
import tempfile
from pathlib import Path

import numpy as np

from projector_core.data.catalog import Catalog
from projector_core.data.memory import memory_embedding, memory_run
from projector_core.data.model import Run
from projector_core.errors import DataError
from projector_core.formats.inputs import metadata_columns
from projector_core.formats.metadata import Metadata, parse_metadata
from projector_core.formats.npy_files import read_npy
from projector_core.formats.tensor_files import binary_head, read_tsv
from projector_core.storage.recent import Recent

DEFAULT_KEEP = 8
NPY_MAGIC = b"\x93NUMPY"
SIGNATURES = ((b"PAR1", "a parquet table"), (b"PK\x03\x04", "a zip archive (.npz, .pt)"),
              (b"\x80", "a Python pickle (.pt, .pkl)"), (b"\x89PNG", "a PNG image"))
UPLOADS_TAKE = ("the page takes a tensor as TSV (one row of numbers per point) or .npy, and "
                "metadata as TSV; serve other files with `projector serve FILE`")


def refuse_binary(data: bytes, filename: str, wanted: str) -> None:
    """A file that is not text is said as what it looks like, not parsed as TSV into a message
    full of its bytes (a parquet or ``.npz`` picked in the "Load data" dialog)."""
    if not binary_head(data[:4096]):
        return
    kind = next((name for magic, name in SIGNATURES if data.startswith(magic)), "binary")
    raise DataError(f"is {kind}, not {wanted}: {UPLOADS_TAKE}", file=filename)


def parse_tensor(data: bytes, filename: str) -> np.ndarray:
    """A TSV or ``.npy`` tensor from its bytes, errors naming ``filename`` and the line.

    A ``.npy`` is known by its magic bytes, whatever its name says."""
    is_npy = filename.lower().endswith(".npy") or data.startswith(NPY_MAGIC)
    if not is_npy:
        refuse_binary(data, filename, "a tensor")
    suffix = ".npy" if is_npy else ".tsv"
    with tempfile.TemporaryDirectory(prefix="projector-upload-") as folder:
        path = Path(folder) / f"tensor{suffix}"
        path.write_bytes(data)
        vectors = read_npy(path, filename) if suffix == ".npy" else read_tsv(path, filename)
        return np.array(vectors, dtype="<f4", order="C")  # our own copy, not a map of the file


def parse_json_columns(data: bytes, filename: str, n_points: int) -> Metadata:
    """Metadata sent as JSON ``{"column": ["value", ...], ...}``: what ``Client.upload`` sends,
    so a one-column table keeps its name, and quotes and tabs need no TSV escaping."""
    try:
        columns = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"is not JSON: {exc}", file=filename) from None
    if not isinstance(columns, dict) or not all(
            isinstance(values, list) and all(isinstance(v, str) for v in values)
            for values in columns.values()):
        raise DataError('must be a JSON object of columns: {"name": ["value", ...], ...}',
                        file=filename)
    for name, values in columns.items():
        if len(values) != n_points:
            raise DataError(f"column {name!r} has {len(values)} values for {n_points} points",
                            file=filename)
    if not columns:
        raise DataError("has no columns", file=filename)
    cells = metadata_columns(columns, n_points)  # the normaliser's cells: tabs made spaces
    assert cells is not None
    return Metadata.from_columns(cells, filename)


class Uploads:
    def __init__(self, catalog: Catalog, keep: int = DEFAULT_KEEP) -> None:
        self.catalog = catalog
        self._runs: Recent[str, Run] = Recent(keep, on_drop=lambda run: catalog.remove_run(run.name))

    def add(self, tensor: bytes, tensor_name: str, metadata: bytes | None = None,
            metadata_name: str = "metadata.tsv") -> Run:
        """Parse and serve an upload; raises DataError naming the file at fault."""
        if not tensor:
            raise DataError("is empty", file=tensor_name)
        vectors = parse_tensor(tensor, tensor_name)
        n_points = int(vectors.shape[0])
        if metadata:
            refuse_binary(metadata, metadata_name, "a metadata TSV")
        if metadata and metadata_name.lower().endswith(".json"):
            parsed: Metadata | None = parse_json_columns(metadata, metadata_name, n_points)
        else:
            parsed = parse_metadata(metadata, metadata_name, n_points) if metadata else None
        run_name = f"upload-{secrets.token_hex(4)}"
        embedding = memory_embedding(run_name, tensor_name, vectors, parsed, sources={
            "tensor": f"{tensor_name} (uploaded)", "metadata": f"{metadata_name} (uploaded)"})
        run = memory_run(run_name, [embedding])
        run.config = "(uploaded, in memory for this server session)"
        self._runs.put(run_name, run)  # the oldest upload past ``keep`` leaves the catalogue
        self.catalog.add_run(run)
        return run
