"""100k thumbnails: more than TensorBoard's 8192 px sprite holds, drawn from atlas pages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from projector_core.formats.writer import add_embedding

pytestmark = [pytest.mark.browser, pytest.mark.slow]

N, THUMB, COLUMNS = 100_000, 32, 317


def grid_logdir(logdir: Path) -> np.ndarray:
    """Points on a 317-column grid (x spacing 1, y spacing 0.6 so PCA keeps the axes), each
    thumbnail its own colour on the left half and the complement on the right."""
    index = np.arange(N)
    points = np.stack([index % COLUMNS, (index // COLUMNS) * 0.6,
                       np.random.default_rng(0).normal(0, 1e-3, N)], axis=1)
    colours = np.random.default_rng(1).integers(30, 226, (N, 3), dtype=np.uint8)
    thumbs = np.empty((N, THUMB, THUMB, 3), np.uint8)
    thumbs[:, :, :THUMB // 2] = colours[:, None, None, :]
    thumbs[:, :, THUMB // 2:] = 255 - colours[:, None, None, :]
    add_embedding(logdir, points.astype(np.float32), label_img=thumbs)
    return colours


def test_100k_thumbnails_show_when_zoomed_in(tmp_path: Path, serve, projector) -> None:
    colours = grid_logdir(tmp_path)
    folder = tmp_path / "00000" / "default"
    assert (folder / "sprite.pages.json").is_file() and (folder / "sprite_page_001.png").is_file()
    state = {"run": ".", "embedding": "default:00000",
             "pca": {"x": 0, "y": 1, "z": 2, "is3d": False, "spherize": False}}
    projector.open(serve(tmp_path), state)
    projector.page.wait_for_function(
        "() => window.__projector.app.dataset?.sprite && window.__projector.app.plot.spriteLayer.atlas",
        timeout=120000)
    target = 80_000  # on the second atlas page
    x, y = projector.screen_position(target)
    projector.page.mouse.move(x, y)
    for _ in range(6):
        projector.page.mouse.wheel(0, -500)
        projector.wait_settled()
    # 100k points are over the frame budget: the still view is finished off screen, then shown.
    projector.page.wait_for_function("window.__projector.app.plot.fullDetail", timeout=120000)
    image = projector.plot_image()
    box = projector.by("plot").bounding_box()
    checked = matched = 0
    for i in range(target - 3 * COLUMNS - 3, target + 3 * COLUMNS + 4):
        px, py = projector.screen_position(i)
        cx, cy = round(px - box["x"]), round(py - box["y"])
        if not (8 <= cx < image.shape[1] - 8 and 8 <= cy < image.shape[0] - 8):
            continue
        checked += 1
        left, right = image[cy, cx - 4], image[cy, cx + 4]
        expected = colours[i].astype(int)
        if np.abs(left - expected).max() < 40 and np.abs(right - (255 - expected)).max() < 40:
            matched += 1
    assert checked >= 20, "the zoomed view should show the points around the target"
    assert matched >= 0.9 * checked, f"{matched} of {checked} points show their thumbnail"
    # The inspector's thumbnail of a point on the second page is cut from that page.
    projector.page.evaluate(f"window.__projector.app.highlight.selectPoint({target})")
    thumb = projector.by("point-card").locator(".thumb")
    thumb.wait_for()
    style = thumb.evaluate("n => [n.style.backgroundImage, n.style.backgroundPosition]")
    local = target - 65_536
    assert style[0].startswith('url("blob:')
    assert style[1] == f"{-(local % 256) * 40}px {-(local // 256) * 40}px"
