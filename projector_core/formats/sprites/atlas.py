"""Browser-safe atlas pages cut from a sprite, once, cached outside LOGDIR.

A GPU texture is at most 8192-16384 px a side, so a sprite beyond what the browser reports
(``max_px``) is cut into pages that each fit. Thumbnails keep their full resolution whenever
the pages can hold them; they are scaled down only when one thumbnail is wider than a page or
all pages together would pass ``ATLAS_PIXEL_BUDGET`` (what the browser must hold in GPU memory).

Layout, the contract the front end relies on: thumbnail i lies on the page with
``first <= i < first + count``, at column ``(i - first) % cols`` and row ``(i - first) // cols``
of that page's grid, each cell ``thumb_dim`` pixels. Every page but the last is full; all
pages have the same number of columns.
"""

from __future__ import annotations

import json
import math
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from projector_core.formats.sprites.sprite import Sprite, SpriteImage
from projector_core.storage.atomic_write import atomic_file, write_atomic
from projector_core.storage.fingerprint import fingerprint

MIN_MAX_PX = 1024
MAX_MAX_PX = 16384
DEFAULT_MAX_PX = 8192
ATLAS_PIXEL_BUDGET = 2**28  # all pages together: 1 GiB of RGBA texture at most
_LAYOUT_VERSION = "1"


@dataclass(frozen=True)
class AtlasPage:
    index: int
    grid: tuple[int, int]  # (columns, rows)
    size: tuple[int, int]  # (width, height) in pixels
    first: int
    count: int


@dataclass(frozen=True)
class AtlasLayout:
    single_image_dim: tuple[int, int]
    thumb_dim: tuple[int, int]
    pages: tuple[AtlasPage, ...]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_atlas(count: int, single_image_dim: tuple[int, int], max_px: int) -> AtlasLayout:
    """The pages for ``count`` thumbnails of ``single_image_dim`` within ``max_px`` a side."""
    width, height = single_image_dim
    count = max(1, count)
    scale = min(1.0, max_px / width, max_px / height,
                math.sqrt(ATLAS_PIXEL_BUDGET / (count * width * height)))
    thumb = (max(1, math.floor(width * scale)), max(1, math.floor(height * scale)))
    fit_cols, fit_rows = max_px // thumb[0], max_px // thumb[1]
    cols = min(fit_cols, math.ceil(math.sqrt(count)))  # one page: a near-square grid
    if math.ceil(count / cols) > fit_rows:
        cols = fit_cols
    per_page = cols * fit_rows
    pages = []
    for index, first in enumerate(range(0, count, per_page)):
        on_page = min(per_page, count - first)
        rows = math.ceil(on_page / cols)
        pages.append(AtlasPage(index=index, grid=(cols, rows),
                               size=(cols * thumb[0], rows * thumb[1]), first=first,
                               count=on_page))
    return AtlasLayout(single_image_dim=(width, height), thumb_dim=thumb, pages=tuple(pages))


def _source_key(sprite: Sprite, max_px: int) -> str:
    pages = [(page.version(), page.first, page.grid) for page in sprite.pages]
    return fingerprint(_LAYOUT_VERSION, max_px, sprite.count, sprite.single_image_dim, *pages)


class SpriteAtlas:
    """Builds and caches atlas pages; one build at a time, so the decoded images of only one
    sprite are in memory at once."""

    def __init__(self, cache_dir: Path | None) -> None:
        base = cache_dir if cache_dir is not None else Path(tempfile.gettempdir()) / "projector"
        self.directory = base / "sprite_atlas"
        self._build_lock = threading.Lock()

    def page(self, sprite: Sprite, max_px: int, index: int) -> Path | SpriteImage:
        """Page ``index`` as a PNG file of ours, built (with all the other pages) on first use;
        or the sprite's own image when it already is exactly that page (our writer's pages
        at the common 8192 px), which is then served as it is."""
        layout = plan_atlas(sprite.count, sprite.single_image_dim, max_px)
        if not 0 <= index < len(layout.pages):
            raise IndexError(index)
        own = _same_page(sprite, layout, layout.pages[index])
        if own is not None:
            return own
        folder = self.directory / _source_key(sprite, max_px)
        target = folder / f"page_{index:03d}.png"
        if target.is_file():
            return target
        with self._build_lock:
            if not target.is_file():
                self._build(sprite, layout, folder)
        return target

    def _build(self, sprite: Sprite, layout: AtlasLayout, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        source = _Sources(sprite, layout.thumb_dim)
        for page in layout.pages:
            pixels = source.cut(page)
            with atomic_file(folder / f"page_{page.index:03d}.png") as handle:
                Image.fromarray(pixels).save(handle, format="PNG", compress_level=1)
        write_atomic(folder / "atlas.json", json.dumps(layout.as_dict()).encode())


def _same_page(sprite: Sprite, layout: AtlasLayout, page: AtlasPage) -> SpriteImage | None:
    """The sprite image that holds exactly ``page``'s thumbnails in ``page``'s layout."""
    if layout.thumb_dim != sprite.single_image_dim:
        return None
    for image in sprite.pages:
        if (image.first == page.first and image.count == page.count
                and image.grid[0] == page.grid[0] and image.size == page.size
                and image.content_type == "image/png"):
            return image
    return None


class _Sources:
    """The sprite's own images, decoded (and scaled to the atlas' thumbnails) one at a time."""

    def __init__(self, sprite: Sprite, thumb: tuple[int, int]) -> None:
        self.sprite = sprite
        self.thumb = thumb
        self._current: SpriteImage | None = None
        self._pixels: np.ndarray | None = None
        self.channels = 0

    def _load(self, image: SpriteImage) -> np.ndarray:
        if self._current is not image:
            self._pixels = None  # free the previous image before decoding the next
            decoded = image.decode()
            tw, th = self.thumb
            (w, h), (cols, rows) = image.thumb, image.grid
            if (tw, th) != (w, h):
                decoded = decoded.resize((cols * tw, rows * th), Image.Resampling.BOX,
                                         box=(0, 0, cols * w, rows * h))
            if not self.channels:
                self.channels = 4 if decoded.mode == "RGBA" else 3
            decoded = decoded.convert("RGBA" if self.channels == 4 else "RGB")
            self._pixels = np.asarray(decoded)
            self._current = image
        assert self._pixels is not None
        return self._pixels

    def _image_of(self, index: int) -> SpriteImage:
        for image in self.sprite.pages:
            if image.first <= index < image.first + image.count:
                return image
        raise IndexError(index)

    def cut(self, page: AtlasPage) -> np.ndarray:
        tw, th = self.thumb
        cols = page.grid[0]
        out: np.ndarray | None = None
        for i in range(page.first, page.first + page.count):
            image = self._image_of(i)
            pixels = self._load(image)
            if out is None:
                out = np.zeros((page.size[1], page.size[0], pixels.shape[2]), np.uint8)
            local = i - image.first
            sr, sc = divmod(local, image.grid[0])
            orow, ocol = divmod(i - page.first, cols)
            out[orow * th:(orow + 1) * th, ocol * tw:(ocol + 1) * tw] = \
                pixels[sr * th:(sr + 1) * th, sc * tw:(sc + 1) * tw]
        assert out is not None
        return out
