"""The sprite (``/api/sprite``): the configured image as it is, and its atlas pages (any
sprite, cut into pages a browser's GPU can take: ``/api/sprite/atlas``, ``/api/sprite/page``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query
from fastapi.responses import FileResponse, Response
from projector.server.deps import EmbeddingDep, SpriteAtlasDep
from projector.server.error_responses import EMBEDDING_ERRORS, ErrorOut
from pydantic import BaseModel

from projector_core.data.model import Embedding
from projector_core.formats.sprites.atlas import (
    DEFAULT_MAX_PX,
    MAX_MAX_PX,
    MIN_MAX_PX,
    plan_atlas,
)
from projector_core.formats.sprites.sprite import Sprite, SpriteImage

router = APIRouter(prefix="/api/sprite", tags=["data"])

MaxPx = Annotated[int, Query(ge=MIN_MAX_PX, le=MAX_MAX_PX,
                             description="Largest texture side the browser takes "
                                         "(WebGL's MAX_TEXTURE_SIZE); pages fit within it")]
SPRITE_ERRORS: dict[int | str, dict] = {
    **EMBEDDING_ERRORS,
    404: {"model": ErrorOut, "description": "Unknown run, embedding or page, or no sprite"},
}


class AtlasPageOut(BaseModel):
    index: int
    grid: tuple[int, int]
    size: tuple[int, int]
    first: int
    count: int


class AtlasOut(BaseModel):
    """Thumbnail i is on the page with first <= i < first + count, at column
    (i - first) % grid[0] and row (i - first) // grid[0], each cell thumb_dim pixels."""

    single_image_dim: tuple[int, int]
    thumb_dim: tuple[int, int]
    pages: list[AtlasPageOut]


def _sprite(embedding: Embedding) -> Sprite:
    if "sprite" in embedding.errors:
        raise ValueError(embedding.errors["sprite"])
    if embedding.sprite is None:
        raise HTTPException(404, f"embedding {embedding.name!r} has no sprite")
    return embedding.sprite


@router.get("", response_class=Response,
            responses={**EMBEDDING_ERRORS,
                       200: {"content": {"image/png": {}, "image/jpeg": {}}},
                       404: {"model": ErrorOut,
                             "description": "Unknown run or embedding, or it has no sprite"},
                       409: {"model": ErrorOut,
                             "description": "The image is too large to hand to a browser; "
                                            "load /api/sprite/atlas and its pages instead"}})
def get_sprite(embedding: EmbeddingDep) -> Response:
    """The configured sprite file's own bytes, when a browser can safely decode it."""
    sprite = _sprite(embedding)
    if not sprite.image.raw_safe:
        width, height = sprite.image_size
        raise HTTPException(409, f"{embedding.sources['sprite']}: the sprite is {width}x{height} "
                                 "px, too large for a browser to decode as one image; load "
                                 "/api/sprite/atlas and /api/sprite/page instead")
    image = sprite.read(embedding.sources["sprite"])  # DataError: a 422
    return Response(image, media_type=sprite.content_type)


@router.get("/atlas", responses=SPRITE_ERRORS)
def get_atlas(embedding: EmbeddingDep, max_px: MaxPx = DEFAULT_MAX_PX) -> AtlasOut:
    """The layout of the sprite's atlas pages for a browser taking ``max_px`` a side."""
    sprite = _sprite(embedding)
    layout = plan_atlas(sprite.count, sprite.single_image_dim, max_px)
    return AtlasOut.model_validate(layout.as_dict())


@router.get("/page", response_class=Response,
            responses={**SPRITE_ERRORS, 200: {"content": {"image/png": {}},
                                              "description": "One atlas page"},
                       503: {"model": ErrorOut, "description": "The cache cannot be written"}})
def get_page(atlas: SpriteAtlasDep, embedding: EmbeddingDep,
             page: Annotated[int, Query(ge=0, description="Page index, from /api/sprite/atlas")],
             max_px: MaxPx = DEFAULT_MAX_PX) -> Response:
    """A page as PNG; cut from the sprite on first request and cached outside LOGDIR."""
    sprite = _sprite(embedding)
    try:
        found = atlas.page(sprite, max_px, page)
        if isinstance(found, SpriteImage):
            return Response(found.read(), media_type="image/png")
    except IndexError:
        raise HTTPException(404, f"the atlas has no page {page} at max_px={max_px}") from None
    except OSError as exc:  # the cache folder is full or not writable
        raise HTTPException(503, f"the atlas page cannot be cut into the cache: {exc}") from None
    return FileResponse(found, media_type="image/png")
