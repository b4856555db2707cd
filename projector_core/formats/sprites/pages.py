"""A configured sprite as read (``check_sprite``): its image, and its pages when our writer
left a sidecar manifest next to it.

TensorBoard's config parser rejects unknown fields, so a sprite of more thumbnails than fit
8192 px cannot be declared in ``projector_config.pbtxt`` itself. Our writer keeps
``image_path`` pointing at an image TensorBoard can show (the thumbnails scaled down to fit)
and writes the full-resolution pages plus ``<stem>.pages.json`` beside it::

    {"format": "projector-sprite-pages", "version": 1,
     "image": {"path": "sprite.png", "size": [W, H], "single_image_dim": [w, h]},
     "single_image_dim": [32, 32], "count": 100000,
     "pages": [{"path": "sprite_page_000.png", "grid": [256, 256], "first": 0, "count": 65536},
               ...]}

The manifest is used only while ``image`` still describes the configured image; a sprite
rewritten by another tool (PyTorch's writer) leaves a stale manifest, which is then ignored with
a warning.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from projector_core.errors import DataError
from projector_core.formats.config import resolve_asset
from projector_core.formats.sprites.sprite import (
    TENSORBOARD_MAX_PX,
    Sprite,
    SpriteImage,
    check_image,
    manifest_path,
)

MANIFEST_FORMAT = "projector-sprite-pages"
MANIFEST_VERSION = 1
MANIFEST_LIMIT_BYTES = 4 * 1024 * 1024


def manifest_json(image: dict[str, Any], single_image_dim: tuple[int, int], count: int,
                  pages: list[dict[str, Any]]) -> bytes:
    """The manifest's bytes (the writer's side)."""
    return json.dumps({"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "image": image,
                       "single_image_dim": list(single_image_dim), "count": count,
                       "pages": pages}, indent=1).encode()


def _dim(value: Any, where: str, display: str) -> tuple[int, int]:
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)):
        raise DataError(f"needs two positive integers, found {value!r}", file=display,
                        field=where)
    return value[0], value[1]


def read_pages(image: SpriteImage, n_points: int, warnings: list[str]) -> Sprite | None:
    """The paged sprite described by the manifest next to ``image``, or None without one."""
    path = manifest_path(image.path)
    if not path.is_file():
        return None
    display = str(Path(image.display).with_name(path.name))
    try:
        with path.open("rb") as handle:
            raw = handle.read(MANIFEST_LIMIT_BYTES + 1)
        if len(raw) > MANIFEST_LIMIT_BYTES:
            raise DataError(f"is over {MANIFEST_LIMIT_BYTES // 2**20} MB", file=display)
        manifest = json.loads(raw)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"is not a readable sprite page manifest ({exc})", file=display) from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise DataError(f"is not a {MANIFEST_FORMAT} manifest", file=display)
    described = manifest.get("image") or {}
    if (described.get("path") != image.path.name or described.get("size") != list(image.size)
            or described.get("single_image_dim") != list(image.thumb)):
        warnings.append(f"{display}: describes another {image.path.name} than the one "
                        "configured (rewritten since?); ignored, the configured image is used")
        return None
    thumb = _dim(manifest.get("single_image_dim"), "single_image_dim", display)
    count = manifest.get("count")
    if count != n_points:
        raise DataError(f"lists {count} thumbnails but the tensor has {n_points} points",
                        file=display, field="count")
    entries = manifest.get("pages")
    if not isinstance(entries, list) or not entries:
        raise DataError("lists no pages", file=display, field="pages")
    pages = []
    expected_first = 0
    for index, entry in enumerate(entries):
        where = f"pages[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise DataError("needs a path", file=display, field=where)
        cols, rows = _dim(entry.get("grid"), f"{where}.grid", display)
        first, page_count = entry.get("first"), entry.get("count")
        if first != expected_first or not isinstance(page_count, int) or not (
                0 < page_count <= cols * rows):
            raise DataError(f"first {first!r} / count {page_count!r} do not continue the pages "
                            f"before (next thumbnail is {expected_first}, at most {cols * rows} "
                            "fit its grid)", file=display, field=where)
        page_path = resolve_asset(path.parent, entry["path"], display, f"{where}.path")
        page_display = str(Path(image.display).parent / entry["path"])
        pages.append(check_image(page_path, page_display, thumb, first, page_count, cols))
        expected_first += page_count
    if expected_first != n_points:
        raise DataError(f"pages hold {expected_first} thumbnails, the tensor has {n_points} "
                        "points", file=display, field="pages")
    return Sprite(image=image, pages=tuple(pages), single_image_dim=thumb, count=n_points,
                  manifest=path)


def check_sprite(path: Path, display: str, single_image_dim: tuple[int, ...], n_points: int,
                 warnings: list[str]) -> Sprite:
    """Check the configured sprite image, and its page manifest when our writer left one."""
    if len(single_image_dim) != 2 or 0 in single_image_dim:
        raise DataError("a sprite needs single_image_dim [width, height]", file=display,
                        field="sprite.single_image_dim")
    thumb = (int(single_image_dim[0]), int(single_image_dim[1]))
    image = check_image(path, display, thumb, 0, n_points)
    paged = read_pages(image, n_points, warnings)
    if paged is not None:
        return paged
    size = image.size
    if max(size) > TENSORBOARD_MAX_PX:
        warnings.append(f"{display}: sprite is {size[0]}x{size[1]} px, above TensorBoard's "
                        f"{TENSORBOARD_MAX_PX} px limit; served here, but some browsers' WebGL "
                        "cannot take textures that large, so the viewer loads it as atlas pages")
    return Sprite(image=image, pages=(image,), single_image_dim=thumb, count=n_points)
