"""Write embeddings into a logdir that TensorBoard and this projector both read.

`add_embedding` (``projector.add_embedding``) is PyTorch's `SummaryWriter.add_embedding` as a
function, safe to call from a training loop every few seconds: the same arguments and the same
files (`{step:05d}/{tag}/tensors.tsv`, `metadata.tsv`, `sprite.png`, entries in
`projector_config.pbtxt`), without torch or TensorBoard installed. Differences, all fixes:
- the config is read back and extended, so calls from separate processes accumulate (PyTorch
  keeps the entries in the writer object and overwrites the file from a new writer);
- a second call with the same tag and step replaces its entry instead of repeating it;
- files are written whole and renamed into place, the config last, so a live reader never
  sees half a file or an entry whose files are not there yet; and each entry states its
  ``tensor_shape``, so a reader knows at once that a tensor is whole (a projector following
  a training run shows each step as soon as it is written: ``data/completeness.py``);
- a sprite holds images of any size and aspect (``sprites/writer.py``), with pages beyond
  TensorBoard's 8192 px that this projector shows and TensorBoard ignores;
- tabs and line breaks inside metadata cells become spaces, and a one-column header is not
  written (TensorBoard would read it as a data row).
Tensors are TSV: TensorBoard opens a `tensor_path` as text and takes it as raw float32 only
when decoding it as UTF-8 fails, which depends on the values, so binary tensors are not safe
for TensorBoard.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.formats.chunked_writer import require_zarr, write_zarr
from projector_core.formats.config import (
    PBTXT_NAME,
    EmbeddingInfo,
    ProjectorConfig,
    SpriteInfo,
    parse_pbtxt_config,
)
from projector_core.formats.model_sidecar import declare_model
from projector_core.formats.sprites.writer import MAX_SPRITE_PX, make_sprite, to_numpy, write_sprite
from projector_core.storage.atomic_write import atomic_file, write_atomic

__all__ = ["add_embedding", "make_sprite", "write_sprite"]

_CONFIG = threading.Lock()  # threads of one process adding steps at once: no entry lost


def add_embedding(
    logdir: str | Path,
    mat: Any,
    metadata: Sequence[Any] | None = None,
    label_img: Any = None,
    global_step: int | None = None,
    tag: str = "default",
    metadata_header: Sequence[Any] | None = None,
    format: str = "tsv",
    *,
    sprite_max_px: int = MAX_SPRITE_PX,
    model: str | None = None,
) -> EmbeddingInfo:
    """Save an (N, D) matrix with optional labels and images; returns the config entry written.

    `mat` is anything numpy can take (torch tensors included). `metadata` has one label per
    row, or with `metadata_header` one list of cells per row. `label_img` is what `make_sprite`
    takes: (N, C, H, W) as in PyTorch, (N, H, W), (N, H, W, C), or a list of PIL images or
    paths. ``format="zarr"`` writes the tensor as a row-chunked ``tensors.zarr`` instead of TSV
    (read lazily and by Dask workers; TensorBoard itself cannot read it); ``mat`` is then
    sliced by rows, never converted whole. ``format="npy"`` writes float32 ``tensors.npy``:
    no text to make or parse (a 100,000 x 128 step in a tenth of a second, where TSV takes
    seconds), for a run only this projector reads (TensorBoard cannot).
    Thumbnails beyond one `sprite_max_px` image also go to sprite pages (`write_sprite`).
    `model` names the sentence-transformers model that made `mat` (an installed model package
    or a folder), so the projector can search it by meaning; TensorBoard's config has no
    field for it, so it is kept in `projector_models.json` beside the config.
    """
    logdir = Path(logdir)
    if format not in ("tsv", "npy", "zarr"):
        raise ValueError(f"format must be 'tsv', 'npy' or 'zarr', got {format!r}")
    if format == "zarr":
        require_zarr()
    vectors = mat if format == "zarr" else to_numpy(mat)
    if len(vectors.shape) != 2:
        raise ValueError(f"mat should be 2-D (N, D), got shape {list(vectors.shape)}")
    step = 0 if global_step is None else int(global_step)
    subdir = f"{str(step).zfill(5)}/{_escape_tag(tag)}"
    folder = logdir / subdir
    folder.mkdir(parents=True, exist_ok=True)

    metadata_path = None
    if metadata is not None:
        if len(metadata) != len(vectors):
            raise ValueError(f"{len(metadata)} metadata rows for {len(vectors)} points")
        write_atomic(folder / "metadata.tsv", _metadata_tsv(metadata, metadata_header))
        metadata_path = f"{subdir}/metadata.tsv"
    sprite = None
    if label_img is not None:
        if len(label_img) != len(vectors):
            raise ValueError(f"{len(label_img)} images for {len(vectors)} points")
        written = write_sprite(folder, label_img, max_px=sprite_max_px)
        sprite = SpriteInfo(f"{subdir}/{written.image_path}", written.single_image_dim)
    if format == "zarr":
        write_zarr(folder / "tensors.zarr", vectors)
    elif format == "npy":
        with atomic_file(folder / "tensors.npy") as handle:
            np.save(handle, np.asarray(vectors, dtype="<f4"), allow_pickle=False)
    else:
        write_atomic(folder / "tensors.tsv", _tensor_tsv(vectors))

    entry = EmbeddingInfo(
        tensor_name=f"{tag}:{str(step).zfill(5)}",
        tensor_path=f"{subdir}/tensors.{format}",
        tensor_shape=(int(vectors.shape[0]), int(vectors.shape[1])),
        metadata_path=metadata_path,
        sprite=sprite,
    )
    declare_model(logdir, entry.tensor_name, model)  # before the config: a reader sees both
    config_path = logdir / PBTXT_NAME
    with _CONFIG:
        config = (
            parse_pbtxt_config(config_path, str(config_path))
            if config_path.is_file()
            else ProjectorConfig(path=config_path)
        )
        entries = [e for e in config.embeddings if e.tensor_name != entry.tensor_name] + [entry]
        write_atomic(config_path, _config_pbtxt(entries, config.model_checkpoint_path).encode())
    return entry


# -- text files -------------------------------------------------------------------------------


def _escape_tag(tag: str) -> str:
    """PyTorch's folder name for a tag: % / and \\ percent-encoded."""
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def _cell(value: Any) -> str:
    return str(value).replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _metadata_tsv(metadata: Sequence[Any], header: Sequence[Any] | None) -> bytes:
    """One label per line, or a header line and rows of tab-separated cells."""
    if header is None or len(header) == 0:
        lines = [_cell(label) for label in metadata]
    else:
        rows = [list(row) if isinstance(row, (list, tuple, np.ndarray)) else [row] for row in metadata]
        for number, row in enumerate(rows):
            if len(row) != len(header):
                raise ValueError(f"metadata row {number} has {len(row)} cells, the header {len(header)}")
        lines = ["\t".join(_cell(cell) for cell in row) for row in rows]
        if len(header) > 1:
            lines.insert(0, "\t".join(_cell(name) for name in header))
        else:
            warnings.warn(
                "a one-column metadata file has no header line in TensorBoard's format; "
                f"the column name {header[0]!r} is not written",
                stacklevel=3,
            )
    return ("\n".join(lines) + "\n").encode("utf-8")


def _tensor_tsv(vectors: np.ndarray, rows_per_chunk: int = 4096) -> Iterator[bytes]:
    """Rows of tab-separated values as PyTorch writes them (Python's repr of each value as a
    float64), a chunk at a time. Polars writes the same shortest round-trip digits about four
    times faster (50,000 x 128 in about a second), but not in Python's notation below 1e-4
    nor from 1e16, nor NaN: rows holding such a value are written by Python."""
    import polars as pl  # beside numpy in the core; imported when a tensor is written

    for start in range(0, len(vectors), rows_per_chunk):
        block = np.asarray(vectors[start : start + rows_per_chunk], dtype=np.float64)
        size = np.abs(block)
        python = (~np.isfinite(block) | ((size != 0) & ((size < 1e-4) | (size >= 1e16)))).any(1)
        lines = pl.DataFrame(block).write_csv(separator="\t", include_header=False,
                                              line_terminator="\n").split("\n")
        for row in np.flatnonzero(python):
            lines[row] = "\t".join(map(str, block[row].tolist()))
        yield "\n".join(lines).encode("utf-8")  # the last line is empty: a final line break


def _quote(text: str) -> str:
    """A text-proto string literal as protobuf's text_format writes it (UTF-8 bytes, C escapes)."""
    escaped = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in _C_ESCAPES:
            escaped.append(_C_ESCAPES[char])
        elif 0x20 <= byte < 0x7F:
            escaped.append(char)
        else:
            escaped.append(f"\\{byte:03o}")
    return '"' + "".join(escaped) + '"'


_C_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "'": "\\'", "\\": "\\\\"}


def _config_pbtxt(entries: list[EmbeddingInfo], model_checkpoint_path: str | None) -> str:
    """ProjectorConfig in text format, fields in field-number order like text_format."""
    lines = []
    if model_checkpoint_path:
        lines.append(f"model_checkpoint_path: {_quote(model_checkpoint_path)}")
    for entry in entries:
        lines.append("embeddings {")
        if entry.tensor_name:
            lines.append(f"  tensor_name: {_quote(entry.tensor_name)}")
        if entry.metadata_path:
            lines.append(f"  metadata_path: {_quote(entry.metadata_path)}")
        if entry.bookmarks_path:
            lines.append(f"  bookmarks_path: {_quote(entry.bookmarks_path)}")
        lines.extend(f"  tensor_shape: {size}" for size in entry.tensor_shape)
        if entry.sprite is not None:
            lines.append("  sprite {")
            lines.append(f"    image_path: {_quote(entry.sprite.image_path)}")
            lines.extend(f"    single_image_dim: {size}" for size in entry.sprite.single_image_dim)
            lines.append("  }")
        if entry.tensor_path:
            lines.append(f"  tensor_path: {_quote(entry.tensor_path)}")
        lines.append("}")
    return "".join(line + "\n" for line in lines)
