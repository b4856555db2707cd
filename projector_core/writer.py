"""Write embeddings into a logdir that TensorBoard and this projector both read.

`add_embedding` is PyTorch's `SummaryWriter.add_embedding` as a function: the same arguments
and the same files (`{step:05d}/{tag}/tensors.tsv`, `metadata.tsv`, `sprite.png`, entries in
`projector_config.pbtxt`), without torch or TensorBoard installed. Differences, all fixes:
- the config is read back and extended, so calls from separate processes accumulate (PyTorch
  keeps the entries in the writer object and overwrites the file from a new writer);
- a second call with the same tag and step replaces its entry instead of repeating it;
- files are written whole and renamed into place, the config last, so a live reader never
  sees half a file or an entry whose files are not there yet;
- a sprite holds images of any size and aspect, letterboxed into square thumbnails, in the
  square grid TensorBoard's shader needs, at most 8192 px wide; thumbnails that do not fit
  8192 px at full size also go to full-size pages listed in a sidecar manifest (see
  `write_sprite`), which this projector shows and TensorBoard ignores;
- tabs and line breaks inside metadata cells become spaces, and a one-column header is not
  written (TensorBoard would read it as a data row).
Tensors are TSV: TensorBoard opens a `tensor_path` as text and takes it as raw float32 only
when decoding it as UTF-8 fails, which depends on the values, so binary tensors are not safe
for TensorBoard.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from projector_core.chunked_writer import write_zarr
from projector_core.formats.config import (
    PBTXT_NAME,
    EmbeddingInfo,
    ProjectorConfig,
    SpriteInfo,
    parse_pbtxt_config,
)
from projector_core.formats.sprite import manifest_path
from projector_core.formats.sprite_pages import manifest_json

_CHANNELS = (1, 3, 4)
MAX_SPRITE_PX = 8192  # TensorBoard's limit on the sprite's width and height
SPRITE_NAME = "sprite.png"


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
) -> EmbeddingInfo:
    """Save an (N, D) matrix with optional labels and images; returns the config entry written.

    `mat` is anything numpy can take (torch tensors included). `metadata` has one label per
    row, or with `metadata_header` one list of cells per row. `label_img` is what `make_sprite`
    takes: (N, C, H, W) as in PyTorch, (N, H, W), (N, H, W, C), or a list of PIL images or
    paths. ``format="zarr"`` writes the tensor as a row-chunked ``tensors.zarr`` instead of TSV
    (read lazily and by Dask workers; TensorBoard itself cannot read it); ``mat`` is then
    sliced by rows, never converted whole.
    Thumbnails beyond one `sprite_max_px` image also go to sprite pages (`write_sprite`).
    """
    logdir = Path(logdir)
    if format not in ("tsv", "zarr"):
        raise ValueError(f"format must be 'tsv' or 'zarr', got {format!r}")
    vectors = _to_numpy(mat) if format == "tsv" else mat
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
        _write_atomic(folder / "metadata.tsv", _metadata_tsv(metadata, metadata_header))
        metadata_path = f"{subdir}/metadata.tsv"
    sprite = None
    if label_img is not None:
        if len(label_img) != len(vectors):
            raise ValueError(f"{len(label_img)} images for {len(vectors)} points")
        written = write_sprite(folder, label_img, max_px=sprite_max_px)
        sprite = SpriteInfo(f"{subdir}/{written.image_path}", written.single_image_dim)
    if format == "zarr":
        write_zarr(folder / "tensors.zarr", vectors)
    else:
        _write_atomic(folder / "tensors.tsv", _tensor_tsv(vectors))

    entry = EmbeddingInfo(
        tensor_name=f"{tag}:{str(step).zfill(5)}",
        tensor_path=f"{subdir}/tensors.{format}",
        metadata_path=metadata_path,
        sprite=sprite,
    )
    config_path = logdir / PBTXT_NAME
    config = (
        parse_pbtxt_config(config_path, str(config_path))
        if config_path.is_file()
        else ProjectorConfig(path=config_path)
    )
    entries = [e for e in config.embeddings if e.tensor_name != entry.tensor_name] + [entry]
    _write_atomic(config_path, _config_pbtxt(entries, config.model_checkpoint_path).encode())
    return entry


def make_sprite(images: Any, thumb_size: int | None = None,
                max_px: int = MAX_SPRITE_PX) -> tuple[Image.Image, tuple[int, int]]:
    """One sprite image of all `images` and its single_image_dim (width, height).

    Thumbnails are square: each image is scaled to fit and centred on black. Their size is
    `thumb_size`, or the largest image side, shrunk so the sprite stays within `max_px`. The
    grid is TensorBoard's: row-major, ceil(sqrt(N)) columns and as many rows (the last ones
    black), since TensorBoard's shader assumes as many rows as columns.
    """
    items = _image_list(images)
    if not items:
        raise ValueError("no images")
    columns = math.ceil(math.sqrt(len(items)))
    thumb = min(_thumb_size(items, thumb_size), max_px // columns)
    if thumb < 1:
        raise ValueError(f"{len(items)} images do not fit a {max_px} px sprite")
    return _grid_image(_prescaled(items, thumb), thumb, columns, columns), (thumb, thumb)


def write_sprite(
    folder: str | Path, images: Any, thumb_size: int | None = None, name: str = SPRITE_NAME,
    max_px: int = MAX_SPRITE_PX,
) -> SpriteInfo:
    """Write the sprite as PNG into `folder`; returns its config entry (path relative to
    `folder`).

    When the thumbnails fit one `max_px` image at full size, that image is the whole sprite
    (TensorBoard's format). Otherwise `name` is still written, scaled down to fit, so that
    TensorBoard shows something, and the full-size thumbnails go to pages
    `<stem>_page_NNN.png` listed in the manifest `<stem>.pages.json` that this projector reads
    (TensorBoard's config has no field for pages and rejects unknown ones).
    """
    items = _image_list(images)
    if not items:
        raise ValueError("no images")
    folder = Path(folder)
    target = folder / name
    manifest = manifest_path(target)
    thumb = min(_thumb_size(items, thumb_size), max_px)
    columns = math.ceil(math.sqrt(len(items)))
    pages = [] if columns * thumb <= max_px else _write_pages(folder, target.stem, items, thumb,
                                                              max_px)
    sprite, single_image_dim = make_sprite(items, thumb, max_px)
    _save_png(sprite, target)
    if pages:
        image = {"path": name, "size": list(sprite.size),
                 "single_image_dim": list(single_image_dim)}
        _write_atomic(manifest, manifest_json(image, (thumb, thumb), len(items), pages))
    else:
        manifest.unlink(missing_ok=True)  # left by an earlier, larger sprite of this name
    return SpriteInfo(image_path=name, single_image_dim=single_image_dim)


def _thumb_size(items: list[np.ndarray | Image.Image], thumb_size: int | None) -> int:
    return int(thumb_size) if thumb_size is not None else max(max(_size(i)) for i in items)


def _grid_image(items: Sequence[np.ndarray | Image.Image], thumb: int, columns: int,
                rows: int) -> Image.Image:
    """`items` letterboxed into `thumb` px cells, row-major in a `columns` x `rows` grid."""
    cells = np.zeros((columns * rows, thumb, thumb, 3), dtype=np.uint8)
    for index, item in enumerate(items):
        _letterbox(item, thumb, cells[index])
    grid = cells.reshape(rows, columns, thumb, thumb, 3).transpose(0, 2, 1, 3, 4)
    return Image.fromarray(grid.reshape(rows * thumb, columns * thumb, 3))


def _prescaled(items: list[np.ndarray | Image.Image], thumb: int,
               chunk: int = 4096) -> list[np.ndarray | Image.Image]:
    """Equal square RGB arrays scaled to `thumb` many at a time: stacked into one tall strip,
    a box filter's footprints never cross from one image into the next (their edges map onto
    whole output pixels), so one resize per chunk equals a box resize of each image, many times faster."""
    first = items[0]
    if not (isinstance(first, np.ndarray) and first.shape[0] == first.shape[1] != thumb
            and first.shape[2] == 3
            and all(isinstance(i, np.ndarray) and i.shape == first.shape for i in items)):
        return items
    scaled: list[np.ndarray | Image.Image] = []
    for start in range(0, len(items), chunk):
        block = items[start:start + chunk]
        strip = Image.fromarray(np.concatenate(block))  # (k * side, side, 3)
        small = strip.resize((thumb, len(block) * thumb), Image.Resampling.BOX)
        scaled.extend(np.asarray(small).reshape(len(block), thumb, thumb, 3))
    return scaled


def _write_pages(folder: Path, stem: str, items: list[np.ndarray | Image.Image], thumb: int,
                 max_px: int) -> list[dict[str, Any]]:
    """Full-size thumbnails on as many `max_px` pages as they need, one page in memory at a
    time; returns the manifest's page entries."""
    columns = max_px // thumb
    per_page = columns * (max_px // thumb)
    pages = []
    for index, first in enumerate(range(0, len(items), per_page)):
        chunk = items[first:first + per_page]
        rows = math.ceil(len(chunk) / columns)
        page_name = f"{stem}_page_{index:03d}.png"
        _save_png(_grid_image(chunk, thumb, columns, rows), folder / page_name)
        pages.append({"path": page_name, "grid": [columns, rows], "first": first,
                      "count": len(chunk)})
    return pages


def _save_png(image: Image.Image, target: Path) -> None:
    """Large images with zlib's fastest level: a 8192 px page of photos takes seconds instead of
    half a minute, for files about 10% larger."""
    temporary = _temporary(target)
    level = 6 if image.width * image.height < 2**22 else 1
    try:
        image.save(temporary, format="PNG", compress_level=level)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)


# -- images -----------------------------------------------------------------------------------


def _to_numpy(value: Any) -> np.ndarray:
    """A numpy array from numpy input or a torch tensor, without importing torch."""
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "cpu"):
        value = value.cpu()
    return np.asarray(value)


def _image_list(images: Any) -> list[np.ndarray | Image.Image]:
    """Images as a list of uint8 HWC arrays or PIL images (paths opened)."""
    if isinstance(images, (list, tuple)):
        return [_one_image(item) for item in images]
    array = _to_numpy(images)
    if array.ndim == 3:
        array = array[..., np.newaxis]  # greyscale (N, H, W)
    elif array.ndim == 4 and array.shape[1] in _CHANNELS:
        array = array.transpose(0, 2, 3, 1)  # PyTorch's (N, C, H, W), also when ambiguous
    if array.ndim != 4 or array.shape[3] not in _CHANNELS:
        raise ValueError(
            f"images should be (N, H, W), (N, C, H, W) or (N, H, W, C) with C in "
            f"1, 3, 4; got {list(array.shape)}"
        )
    array = _as_uint8(array)
    if array.shape[3] == 1:
        array = np.repeat(array, 3, axis=3)  # grey to RGB at once, not image by image
    return list(array)


def _one_image(item: Any) -> np.ndarray | Image.Image:
    if isinstance(item, Image.Image):
        return item
    if isinstance(item, (str, os.PathLike)):
        with Image.open(item) as opened:
            opened.load()
            return opened.copy()
    array = _to_numpy(item)
    if array.ndim == 2:
        array = array[..., np.newaxis]
    elif array.ndim == 3 and array.shape[2] not in _CHANNELS and array.shape[0] in _CHANNELS:
        array = array.transpose(1, 2, 0)  # (C, H, W)
    if array.ndim != 3 or array.shape[2] not in _CHANNELS:
        raise ValueError(
            f"an image should be (H, W), (H, W, C) or (C, H, W) with C in 1, 3, 4; got {list(array.shape)}"
        )
    return _as_uint8(array)


def _as_uint8(array: np.ndarray) -> np.ndarray:
    """PyTorch's rule: floats are 0..1 (times 255, truncated), integers 0..255."""
    if array.dtype == np.uint8:
        return array
    if array.dtype == np.bool_:
        return array.astype(np.uint8) * 255
    if np.issubdtype(array.dtype, np.floating):
        return (array * 255).clip(0, 255).astype(np.uint8)
    return array.clip(0, 255).astype(np.uint8)


def _size(item: np.ndarray | Image.Image) -> tuple[int, int]:
    return item.size if isinstance(item, Image.Image) else (item.shape[1], item.shape[0])


def _rgb(item: np.ndarray | Image.Image) -> Image.Image:
    """An RGB image; transparency is composited onto black."""
    if isinstance(item, np.ndarray):
        if item.shape[2] == 1:
            item = np.repeat(item, 3, axis=2)
        item = Image.fromarray(np.ascontiguousarray(item))  # RGB or RGBA from the shape
    if item.mode in ("RGBA", "LA", "P", "PA") or "transparency" in item.info:
        item = item.convert("RGBA")
        black = Image.new("RGBA", item.size, (0, 0, 0, 255))
        return Image.alpha_composite(black, item).convert("RGB")
    return item.convert("RGB")


def _letterbox(item: np.ndarray | Image.Image, thumb: int, cell: np.ndarray) -> None:
    """Draw `item` into the (thumb, thumb, 3) `cell`, scaled to fit and centred."""
    if isinstance(item, np.ndarray) and item.shape[:2] == (thumb, thumb) and item.shape[2] == 3:
        cell[:] = item
        return
    image = _rgb(item)
    width, height = image.size
    if (width, height) != (thumb, thumb):
        scale = thumb / max(width, height)
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
        width, height = size
    left, top = (thumb - width) // 2, (thumb - height) // 2
    cell[top : top + height, left : left + width] = np.asarray(image)


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
    """Rows of tab-separated values as PyTorch writes them (Python's repr), a chunk at a time."""
    for start in range(0, len(vectors), rows_per_chunk):
        rows = vectors[start : start + rows_per_chunk].tolist()
        yield "".join("\t".join(map(str, row)) + "\n" for row in rows).encode("utf-8")


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


def _temporary(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def _write_atomic(target: Path, data: bytes | Iterable[bytes]) -> None:
    """Write a file whole under a hidden name, then rename it into place."""
    temporary = _temporary(target)
    try:
        with temporary.open("wb") as handle:
            for chunk in [data] if isinstance(data, bytes) else data:
                handle.write(chunk)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
