"""A sprite of non-square thumbnails (a TensorBoard sprite with 40 x 20 px cells) is drawn with
its aspect kept, letterboxed in the square point, not stretched to the square."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.builders import write_pbtxt_run

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 40, 20
COLOURS = np.array([[230, 30, 30], [30, 200, 40], [40, 60, 230], [220, 200, 20]], np.uint8)


def _sprite_logdir(logdir: Path) -> None:
    """Four points on a square, each thumbnail one colour, in a 2 x 2 grid of 40 x 20 cells
    (a PNG written by Pillow, the config as TensorBoard reads it)."""
    grid = np.zeros((2 * HEIGHT, 2 * WIDTH, 3), np.uint8)
    for i, colour in enumerate(COLOURS):
        row, column = divmod(i, 2)
        grid[row * HEIGHT:(row + 1) * HEIGHT, column * WIDTH:(column + 1) * WIDTH] = colour
    sprite = io.BytesIO()
    Image.fromarray(grid).save(sprite, format="PNG")
    tensor = io.BytesIO()
    np.save(tensor, np.array([[0, 0], [1, 0], [0, 1], [1, 1]], np.float32))
    body = ('embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy"\n  sprite {\n'
            f'    image_path: "s.png"\n    single_image_dim: {WIDTH}\n'
            f'    single_image_dim: {HEIGHT}\n  }}\n}}\n')
    write_pbtxt_run(logdir / "wide", body, {"t.npy": tensor.getvalue(), "s.png": sprite.getvalue()})


def test_non_square_thumbnails_keep_their_aspect(tmp_path: Path, serve, projector) -> None:
    _sprite_logdir(tmp_path)
    projector.open(serve(tmp_path), {"run": "wide", "embedding": "t"})
    projector.page.wait_for_function(
        "(() => { const p = window.__projector.app.plot; return p.sprites && !!p.spriteLayer.atlas; })()",
        timeout=60000)
    projector.wait_settled()
    image = projector.plot_image().astype(int)
    for colour in COLOURS:
        near = np.abs(image - colour.astype(int)).max(axis=2) < 40
        rows, columns = np.nonzero(near)
        assert rows.size > 50, f"thumbnail {colour} is not drawn"
        wide = columns.max() - columns.min() + 1
        high = rows.max() - rows.min() + 1
        # 2:1 as the thumbnail is, within the edge pixels (a stretched one is 1:1).
        assert 1.6 < wide / high < 2.4, (colour, wide, high)
    assert projector.errors == []
