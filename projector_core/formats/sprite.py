"""Sprite images: one PNG/JPEG of equal thumbnails laid out row-major in a square grid.

We serve the file's own bytes; reading it here is only to check that it is an image and large
enough for the grid, so that a broken sprite is reported when the run is listed, not as a broken
picture in the browser.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from projector_core.errors import DataError

TENSORBOARD_MAX_PX = 8192
_CONTENT_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif",
                  "WEBP": "image/webp", "BMP": "image/bmp"}


@dataclass(frozen=True)
class Sprite:
    path: Path
    single_image_dim: tuple[int, int]
    image_size: tuple[int, int]
    content_type: str
    identity: tuple[int, int]  # (device, inode) of the file that was checked

    def read(self, display: str) -> bytes:
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
                                    "checked again on the next scan", file=display)
                return handle.read()
        except FileNotFoundError:
            raise DataError("sprite image is gone", file=display) from None
        except OSError as exc:
            raise DataError(f"sprite image cannot be read: {exc.strerror}", file=display) from None


def grid_columns(n_points: int) -> int:
    """TensorBoard's layout: a square grid of ceil(sqrt(N)) columns, the last row may be partial."""
    return max(1, math.ceil(math.sqrt(n_points)))


def check_sprite(path: Path, display: str, single_image_dim: tuple[int, ...], n_points: int,
                 warnings: list[str]) -> Sprite:
    if len(single_image_dim) != 2 or 0 in single_image_dim:
        raise DataError("a sprite needs single_image_dim [width, height]", file=display,
                        field="sprite.single_image_dim")
    width, height = single_image_dim
    Image.MAX_IMAGE_PIXELS = None  # size is checked against the grid instead
    try:
        with path.open("rb") as handle, Image.open(handle) as image:
            stat = os.fstat(handle.fileno())
            image_format = image.format or ""
            size = image.size
            image.verify()
    except FileNotFoundError:
        raise DataError("sprite image not found", file=display) from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise DataError(f"is not a readable image ({exc})", file=display) from None
    if image_format not in _CONTENT_TYPES:
        raise DataError(f"is a {image_format or 'unknown'} image; PNG or JPEG is expected",
                        file=display)
    columns = grid_columns(n_points)
    rows = math.ceil(n_points / columns)
    need = (columns * width, rows * height)
    if size[0] < need[0] or size[1] < need[1]:
        raise DataError(
            f"is {size[0]}x{size[1]} px but {n_points} thumbnails of {width}x{height} in a "
            f"{columns}-column grid need at least {need[0]}x{need[1]} px", file=display)
    if max(size) > TENSORBOARD_MAX_PX:
        warnings.append(f"{display}: sprite is {size[0]}x{size[1]} px, above TensorBoard's "
                        f"{TENSORBOARD_MAX_PX} px limit; served here, but some browsers' WebGL "
                        "cannot take textures that large")
    return Sprite(path=path, single_image_dim=(width, height), image_size=size,
                  content_type=_CONTENT_TYPES[image_format], identity=(stat.st_dev, stat.st_ino))
