"""Sprite images written as TensorBoard reads them, and as pages when they outgrow 8192 px.

A sprite holds images of any size and aspect, letterboxed into square thumbnails, in the square
grid TensorBoard's shader needs, at most 8192 px wide; thumbnails that do not fit 8192 px at
full size also go to full-size pages listed in a sidecar manifest (see `write_sprite`), which
this projector shows and TensorBoard ignores. Images arrive as PyTorch's `add_embedding` takes
them (`make_sprite`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from PIL import Image

from projector_core.formats.config import SpriteInfo
from projector_core.formats.sprites.pages import manifest_json
from projector_core.formats.sprites.sprite import manifest_path
from projector_core.storage.atomic_write import atomic_file, write_atomic

_CHANNELS = (1, 3, 4)
MAX_SPRITE_PX = 8192  # TensorBoard's limit on the sprite's width and height
SPRITE_NAME = "sprite.png"


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
        write_atomic(manifest, manifest_json(image, (thumb, thumb), len(items), pages))
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
    arrays = cast("list[np.ndarray]", items)  # every item checked just above
    scaled: list[np.ndarray | Image.Image] = []
    for start in range(0, len(arrays), chunk):
        block = arrays[start:start + chunk]
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
    level = 6 if image.width * image.height < 2**22 else 1
    with atomic_file(target) as handle:
        image.save(handle, format="PNG", compress_level=level)


# -- images -----------------------------------------------------------------------------------


def to_numpy(value: Any) -> np.ndarray:
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
    array = to_numpy(images)
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
    array = to_numpy(item)
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
