"""Sprite images: equal thumbnails laid out row-major, in one image or in several pages.

Checking a sprite reads only image headers: the declared size is judged (against a pixel budget
and against what N thumbnails need) before anything is decoded, so a small file that declares
40000 x 40000 pixels is refused without costing memory. Pillow's own guard,
``Image.MAX_IMAGE_PIXELS``, is process-wide and is never touched here: we open the header with
the format's plugin and apply our own budget.

A sprite is one image (TensorBoard's format), or, when our writer had more thumbnails than fit
8192 px, that image (scaled down, for TensorBoard) plus a sidecar manifest ``<stem>.pages.json``
listing full-resolution pages, read by ``pages.py`` (which checks a configured sprite
with the image checks here).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from PIL import Image, ImageFile, UnidentifiedImageError

from projector_core.errors import DataError
from projector_core.storage.tensor_cache import file_fingerprint

TENSORBOARD_MAX_PX = 8192
PIXEL_BUDGET = 2**28  # the most pixels one sprite image may declare (1 GiB as RGBA)
RAW_SAFE_PIXELS = 2**26  # served as the file's own bytes up to this (8192 x 8192) ...
RAW_SAFE_SIDE = 16384  # ... and this side; larger ones only as atlas pages
SPARE_FACTOR = 16  # an image may hold this many times the pixels its thumbnails need ...
SPARE_FLOOR = 2**24  # ... or this many, whichever is more (small sprites padded generously)
CONTENT_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif",
                 "WEBP": "image/webp", "BMP": "image/bmp"}


def open_header(handle: BinaryIO, display: str) -> ImageFile.ImageFile:
    """The image with its header read and nothing decoded (Pillow decodes on ``load()``).

    ``Image.open`` would apply the process-wide ``MAX_IMAGE_PIXELS`` (raising before the size
    can be reported); the format plugins registered in ``Image.OPEN`` read the same header
    without it, and our budget is checked by the caller.
    """
    Image.preinit()
    prefix = handle.read(16)
    for name in CONTENT_TYPES:
        if name not in Image.OPEN:
            Image.init()
        factory, accept = Image.OPEN[name]
        accepted = accept(prefix) if accept is not None else True
        if accepted and not isinstance(accepted, str):
            handle.seek(0)
            try:
                return factory(handle, display)
            except (SyntaxError, IndexError, TypeError, OSError, ValueError) as exc:
                raise DataError(f"is not a readable image ({exc})", file=display) from None
    raise DataError("is not a readable image (not PNG, JPEG, GIF, WebP or BMP)", file=display)


def check_pixels(size: tuple[int, int], display: str, budget: int = PIXEL_BUDGET) -> None:
    """Refuse a declared size beyond ``budget`` pixels, before any decoding."""
    if size[0] * size[1] > budget:
        raise DataError(f"declares {size[0]}x{size[1]} px ({size[0] * size[1]:,} pixels), over "
                        f"the {budget:,}-pixel budget for a sprite image; refused without "
                        "decoding it", file=display)


def decode(path: Path, display: str, identity: tuple[int, int] | None = None,
           budget: int = PIXEL_BUDGET) -> Image.Image:
    """Decode an image whose declared size is within ``budget``, as RGB or RGBA.

    With ``identity`` (device, inode), the file opened must be that very file (see ``read``).
    """
    try:
        with path.open("rb") as handle:
            if identity is not None:
                stat = os.fstat(handle.fileno())
                if (stat.st_dev, stat.st_ino) != identity:
                    raise DataError("sprite image was replaced since it was checked; it is "
                                    "checked again on the next scan", file=display)
            image = open_header(handle, display)
            check_pixels(image.size, display, budget)
            image.load()
            has_alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
            return image.convert("RGBA" if has_alpha else "RGB")
    except FileNotFoundError:
        raise DataError("sprite image is gone", file=display) from None
    except (OSError, SyntaxError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"is not a readable image ({exc})", file=display) from None


@dataclass(frozen=True)
class SpriteImage:
    """One checked image file holding thumbnails ``first .. first+count-1``, ``grid`` (cols,
    rows) of ``thumb`` (w, h) cells from its top-left."""

    path: Path
    display: str
    size: tuple[int, int]
    content_type: str
    identity: tuple[int, int]  # (device, inode) of the file that was checked
    thumb: tuple[int, int]
    grid: tuple[int, int]
    first: int
    count: int

    def read(self) -> bytes:
        """The image's bytes, only while the file is the very one checked.

        The sprite is the one asset read at request time. Opening it by path again would follow
        a symlink put in its place since (the file-read hole TensorBoard closed in 2026), so the
        opened file must be the same inode; a replaced file waits for the next scan.
        """
        try:
            with self.path.open("rb") as handle:
                stat = os.fstat(handle.fileno())
                if (stat.st_dev, stat.st_ino) != self.identity:
                    raise DataError("sprite image was replaced since it was checked; it is "
                                    "checked again on the next scan", file=self.display)
                return handle.read()
        except FileNotFoundError:
            raise DataError("sprite image is gone", file=self.display) from None
        except OSError as exc:
            raise DataError(f"sprite image cannot be read: {exc.strerror}",
                            file=self.display) from None

    def decode(self) -> Image.Image:
        return decode(self.path, self.display, self.identity)

    def version(self) -> str:
        """What changes when the image does (atlas pages are cached under it)."""
        return f"{file_fingerprint(self.path)}|{self.identity}"

    @property
    def raw_safe(self) -> bool:
        """Whether a browser may be handed the file itself (its decoded size is modest)."""
        width, height = self.size
        return width * height <= RAW_SAFE_PIXELS and max(width, height) <= RAW_SAFE_SIDE


@dataclass(frozen=True)
class Sprite:
    """The thumbnails of an embedding: ``image`` is the configured file (what TensorBoard and
    ``/api/sprite`` show); ``pages`` hold every thumbnail at ``single_image_dim``."""

    image: SpriteImage
    pages: tuple[SpriteImage, ...]
    single_image_dim: tuple[int, int]
    count: int
    manifest: Path | None = None

    # The single-image API of before, kept for callers that serve the configured file.
    @property
    def path(self) -> Path:
        return self.image.path

    @property
    def content_type(self) -> str:
        return self.image.content_type

    @property
    def image_size(self) -> tuple[int, int]:
        return self.image.size

    def read(self, display: str | None = None) -> bytes:
        return self.image.read()

    @property
    def files(self) -> list[Path]:
        """Every file the sprite was (or would be) read from, for change detection: the
        manifest is watched even while absent, so one written later is noticed."""
        pages = [page.path for page in self.pages if page.path != self.image.path]
        return [manifest_path(self.image.path), *pages]


def manifest_path(image_path: Path) -> Path:
    """Where our writer's page manifest for a sprite image lies: ``<stem>.pages.json``."""
    return image_path.with_name(f"{image_path.stem}.pages.json")


def grid_columns(n_points: int) -> int:
    """TensorBoard's layout: a square grid of ceil(sqrt(N)) columns, the last row may be partial."""
    return max(1, math.ceil(math.sqrt(n_points)))


def check_image(path: Path, display: str, thumb: tuple[int, int], first: int, count: int,
                columns: int | None = None) -> SpriteImage:
    """Read one image's header and check its declared size against the budget and the grid
    of ``count`` thumbnails (``columns`` wide, TensorBoard's square grid when not given)."""
    width, height = thumb
    try:
        with path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            image = open_header(handle, display)
            image_format = image.format or ""
            size = image.size
            check_pixels(size, display)
            image.verify()  # chunk checksums; reads the file, decodes no pixels
    except FileNotFoundError:
        raise DataError("sprite image not found", file=display) from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"is not a readable image ({exc})", file=display) from None
    if image_format not in CONTENT_TYPES:
        raise DataError(f"is a {image_format or 'unknown'} image; PNG or JPEG is expected",
                        file=display)
    cols = columns or grid_columns(count)
    rows = max(1, math.ceil(count / cols))
    need = (cols * width, rows * height)
    if size[0] < need[0] or size[1] < need[1]:
        raise DataError(
            f"is {size[0]}x{size[1]} px but {count} thumbnails of {width}x{height} in a "
            f"{cols}-column grid need at least {need[0]}x{need[1]} px", file=display)
    square = cols * cols * width * height  # TensorBoard's writers pad the grid to a square
    if size[0] * size[1] > max(SPARE_FACTOR * square, SPARE_FLOOR):
        raise DataError(
            f"is {size[0]}x{size[1]} px, far larger than {count} thumbnails of {width}x{height} "
            f"need ({need[0]}x{need[1]} px); refused without decoding it", file=display)
    grid = (max(1, size[0] // width), max(1, size[1] // height))
    return SpriteImage(path=path, display=display, size=size,
                       content_type=CONTENT_TYPES[image_format],
                       identity=(stat.st_dev, stat.st_ino), thumb=(width, height), grid=grid,
                       first=first, count=count)
