"""A site's sprite atlas pages: the server's own pages (cut once into its cache), or for a
sampled export new pages holding only the kept rows' thumbnails, in their new order, cut from
those pages one source page at a time (rows ascending: each source page is decoded once)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from projector_core.export.files import SiteFiles
from projector_core.formats.sprites.atlas import DEFAULT_MAX_PX, SpriteAtlas, plan_atlas
from projector_core.formats.sprites.sprite import Sprite, SpriteImage

ATLAS_MAX_PX = min(DEFAULT_MAX_PX, 4096)  # pages every WebGL2 device takes


def _page_bytes(atlas: SpriteAtlas, sprite: Sprite, index: int) -> bytes:
    found = atlas.page(sprite, ATLAS_MAX_PX, index)
    return found.read() if isinstance(found, SpriteImage) else found.read_bytes()


def write_sprite(files: SiteFiles, folder: str, sprite: Sprite, rows: np.ndarray | None,
                 cache_dir: Path | None) -> dict[str, Any]:
    """The atlas (``GET /api/sprite/atlas``'s answer) and its pages, for all rows or ``rows``."""
    atlas = SpriteAtlas(cache_dir)  # the server's atlas cache: pages cut once
    source = plan_atlas(sprite.count, sprite.single_image_dim, ATLAS_MAX_PX)
    if rows is None:
        layout = source.as_dict()
        pages = [files.raw(f"{folder}/sprite/page-{p.index}.png", _page_bytes(atlas, sprite, p.index))
                 for p in source.pages]
        return {"atlas": files.json(f"{folder}/sprite/atlas.json", layout), "pages": pages}
    tw, th = source.thumb_dim
    target = plan_atlas(len(rows), source.thumb_dim, ATLAS_MAX_PX)
    if target.thumb_dim != source.thumb_dim:  # fewer thumbnails never need smaller ones
        raise ValueError("a sampled sprite's thumbnails would be smaller than the sprite's")
    per_source = source.pages[1].first if len(source.pages) > 1 else max(1, source.pages[0].count)
    loaded: tuple[int, np.ndarray] | None = None
    pages = []
    for page in target.pages:
        out: np.ndarray | None = None
        for j in range(page.first, page.first + page.count):
            i = int(rows[j])
            s = source.pages[i // per_source]
            if loaded is None or loaded[0] != s.index:
                loaded = None  # free the previous page before decoding the next
                decoded = Image.open(io.BytesIO(_page_bytes(atlas, sprite, s.index)))
                loaded = (s.index, np.asarray(decoded.convert("RGBA")))
            pixels = loaded[1]
            if out is None:
                out = np.zeros((page.size[1], page.size[0], 4), np.uint8)
            sr, sc = divmod(i - s.first, s.grid[0])
            orow, ocol = divmod(j - page.first, page.grid[0])
            out[orow * th:(orow + 1) * th, ocol * tw:(ocol + 1) * tw] = \
                pixels[sr * th:(sr + 1) * th, sc * tw:(sc + 1) * tw]
        assert out is not None  # every page of the plan holds a thumbnail
        buffer = io.BytesIO()
        Image.fromarray(out).save(buffer, format="PNG", compress_level=6)
        pages.append(files.raw(f"{folder}/sprite/page-{page.index}.png", buffer.getvalue()))
    layout = {**target.as_dict(), "single_image_dim": list(sprite.single_image_dim)}
    return {"atlas": files.json(f"{folder}/sprite/atlas.json", layout), "pages": pages}
