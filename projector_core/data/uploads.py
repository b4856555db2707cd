"""Data uploaded in the browser ("Load data"): parsed as LOGDIR files are, kept in memory only.

Each upload becomes a run ``upload-<id>`` of the catalog, so neighbours, search, t-SNE and
UMAP run on it through the ordinary routes and jobs. Nothing is written to LOGDIR; the bytes
pass through a temporary file only so that the file readers (TSV at C speed, ``.npy`` never
unpickled) are the very ones LOGDIR files get. At most ``keep`` uploads are held: the oldest
goes first. They vanish with the server.
"""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path

import numpy as np

from projector_core.data.catalog import Catalog
from projector_core.data.memory import memory_embedding, memory_run
from projector_core.data.model import Run
from projector_core.errors import DataError
from projector_core.formats.metadata import parse_metadata
from projector_core.formats.tensor_files import read_npy, read_tsv
from projector_core.storage.recent import Recent

DEFAULT_KEEP = 8


def parse_tensor(data: bytes, filename: str) -> np.ndarray:
    """A TSV or ``.npy`` tensor from its bytes, errors naming ``filename`` and the line."""
    suffix = ".npy" if filename.lower().endswith(".npy") else ".tsv"
    with tempfile.TemporaryDirectory(prefix="projector-upload-") as folder:
        path = Path(folder) / f"tensor{suffix}"
        path.write_bytes(data)
        vectors = read_npy(path, filename) if suffix == ".npy" else read_tsv(path, filename)
        return np.array(vectors, dtype="<f4", order="C")  # our own copy, not a map of the file


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
        parsed = (parse_metadata(metadata, metadata_name, int(vectors.shape[0])) if metadata
                  else None)
        run_name = f"upload-{secrets.token_hex(4)}"
        embedding = memory_embedding(run_name, tensor_name, vectors, parsed, sources={
            "tensor": f"{tensor_name} (uploaded)", "metadata": f"{metadata_name} (uploaded)"})
        run = memory_run(run_name, [embedding])
        run.config = "(uploaded, in memory for this server session)"
        self._runs.put(run_name, run)  # the oldest upload past ``keep`` leaves the catalogue
        self.catalog.add_run(run)
        return run
