"""Pictures of a projection without a browser (``projector render``, ``Projector.save_image``).

Drawn with Pillow (already a dependency, for sprites), not matplotlib or datashader: a scatter
of discs is all it takes, and Pillow draws each in C. The discs are drawn as the app draws them
(the same sizes for this many points, in a random order so that no class is always on top) on
a canvas three times the picture's size, then averaged down: every edge is anti-aliased. The
points are fitted as the front end fits them (centred, one scale for both axes); the legend is
the front end's too: the colour column's classes, or its gradient.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from projector_core.data.model import Embedding
from projector_core.export.coloring import Coloring, coloring_for, default_color_column, gradient

MARGIN = 0.04  # of the image's smaller side, around the points
REFERENCE_WIDTH = 1000  # CSS pixels of a typical plot: point sizes are the app's at this width
AUTO = "auto"  # colour by the column the app picks by default
MAX_CANVAS_PIXELS = 100_000_000  # the supersampled canvas: 300 MB of RGB at most


def default_point_size(n: int) -> float:
    """plot.js's defaultPointSize: big discs for small sets, small for a million (CSS px)."""
    return float(max(1.6, min(9.0, 26 / math.log10(max(10, n)) ** 1.25)))


def fit(coordinates: np.ndarray, width: int, height: int) -> np.ndarray:
    """Pixel positions [N, 2] (x right, y down) of the first two columns, centred, one scale
    for both axes; NaN rows stay NaN."""
    xy = np.asarray(coordinates[:, :2], np.float64)
    finite = np.isfinite(xy).all(axis=1)
    out = np.full_like(xy, np.nan)
    if not finite.any():
        return out
    lo, hi = xy[finite].min(axis=0), xy[finite].max(axis=0)
    margin = MARGIN * min(width, height)
    span = np.maximum(hi - lo, 1e-12)
    scale = min((width - 2 * margin) / span[0], (height - 2 * margin) / span[1])
    mid = (lo + hi) / 2
    out[:, 0] = width / 2 + (xy[:, 0] - mid[0]) * scale
    out[:, 1] = height / 2 - (xy[:, 1] - mid[1]) * scale
    out[~finite] = np.nan
    return out


def picture_height(coordinates: np.ndarray, width: int) -> int:
    """A height that fits the points' aspect (between 0.5 and 1.25 of the width)."""
    xy = coordinates[:, :2]
    xy = xy[np.isfinite(xy).all(axis=1)]
    if not len(xy):
        return width
    span = np.maximum(xy.max(axis=0) - xy.min(axis=0), 1e-12)
    return round(width * min(1.25, max(0.5, float(span[1] / span[0]))))


def supersampling(width: int, height: int) -> int:
    """Samples per pixel side: 3 (ten levels of edge coverage) while the canvas stays small."""
    for factor in (3, 2):
        if width * height * factor * factor <= MAX_CANVAS_PIXELS:
            return factor
    return 1


def draw_points(pixels: np.ndarray, colors: np.ndarray, width: int, height: int, radius: float,
                background: tuple[int, int, int]) -> Image.Image:
    """Discs of ``radius`` pixels at ``pixels`` [N, 2] in ``colors`` uint8 [N, 3]: drawn on a
    supersampled canvas in a random order (as the app draws its level-of-detail order: no
    class always on top), then averaged down, which anti-aliases every edge."""
    factor = supersampling(width, height)
    canvas = Image.new("RGB", (width * factor, height * factor), background)
    draw = ImageDraw.Draw(canvas)
    finite = np.flatnonzero(np.isfinite(pixels).all(axis=1))
    order = finite[np.random.default_rng(0).permutation(finite.size)]
    r = radius * factor
    centres = pixels[order].astype(np.float64) * factor
    boxes = np.hstack([centres - r, centres + r]).tolist()
    fills = [tuple(c) for c in colors[order].tolist()]
    ellipse = draw.ellipse
    for box, fill in zip(boxes, fills, strict=True):
        ellipse(box, fill=fill)
    if factor == 1:
        return canvas
    return canvas.resize((width, height), Image.Resampling.BOX)


def draw_legend(image: Image.Image, coloring: Coloring, scale: float) -> None:
    """The colour column's legend in a box at the top right, as the app's image has it."""
    if coloring.title is None or (coloring.rows is None and coloring.numeric is None):
        return
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=max(8, round(12 * scale)))
    line = 18 * scale
    pad = 8 * scale
    texts = [coloring.title] + [t for t, _ in coloring.rows or []]
    if coloring.numeric is not None:
        texts += [_fmt(v) for v in coloring.numeric]
    text_w = max(draw.textlength(t, font=font) for t in texts)
    box_w = min(image.width / 2, text_w + line + 2 * pad)
    rows = len(coloring.rows) if coloring.rows is not None else 1.6
    box_h = 2 * pad + line * (1 + rows)
    x0, y0 = image.width - box_w - pad, pad
    draw.rounded_rectangle((x0, y0, x0 + box_w, y0 + box_h), radius=4 * scale,
                           fill=(255, 255, 255), outline=(190, 190, 190), width=max(1, round(scale)))
    draw.text((x0 + pad, y0 + pad + line / 2), coloring.title, fill=(40, 40, 40), font=font,
              anchor="lm")
    if coloring.rows is not None:
        for i, (text, colour) in enumerate(coloring.rows):
            cy = y0 + pad + line * (i + 1.5)
            if colour is not None:
                r = 0.38 * 12 * scale
                cx = x0 + pad + 6 * scale
                draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=colour)
            draw.text((x0 + pad + line, cy), text, fill=(40, 40, 40), font=font, anchor="lm")
        return
    assert coloring.numeric is not None  # a legend is rows or a numeric range (returned above)
    bar_y = y0 + pad + line * 1.1
    bar = gradient(np.linspace(0, 1, max(2, int(box_w - 2 * pad))))
    strip = Image.fromarray(np.repeat(bar[None], max(1, int(8 * scale)), axis=0), "RGB")
    image.paste(strip, (int(x0 + pad), int(bar_y)))
    lo, hi = coloring.numeric
    ty = bar_y + 8 * scale + line / 2
    draw.text((x0 + pad, ty), _fmt(lo), fill=(40, 40, 40), font=font, anchor="lm")
    draw.text((x0 + box_w - pad, ty), _fmt(hi), fill=(40, 40, 40), font=font, anchor="rm")


def _fmt(value: float) -> str:
    return "–" if not math.isfinite(value) else f"{value:.4g}"


def render_picture(coordinates: np.ndarray, coloring: Coloring, width: int,
                   height: int | None = None, point_size: float | None = None,
                   legend: bool = True, background: tuple[int, int, int] = (255, 255, 255),
                   ) -> Image.Image:
    """The projection's first two columns as a ``width`` pixel wide picture."""
    if width < 16 or width > 20000:
        raise ValueError(f"--width must be between 16 and 20000 pixels, not {width}")
    height = height or picture_height(coordinates, width)
    scale = width / REFERENCE_WIDTH
    size = (point_size or default_point_size(len(coordinates))) * scale
    image = draw_points(fit(coordinates, width, height), coloring.colors, width, height,
                        max(0.5, size / 2), background)
    if legend:
        draw_legend(image, coloring, scale)
    return image


def save_picture(image: Image.Image, path: Path) -> None:
    """PNG (or whatever the suffix names that Pillow writes), 300 dpi for print."""
    image.save(path, dpi=(300, 300))


def projection_picture(embedding: Embedding, coordinates: np.ndarray, width: int,
                       color_by: str | None = AUTO, **options: Any) -> Image.Image:
    """``embedding``'s projection (``coordinates``) coloured by ``color_by`` (``AUTO``: the
    app's default column; None: one colour), drawn by :func:`render_picture`."""
    metadata = embedding.metadata_with_added()  # the annotation columns too
    column = default_color_column(metadata) if color_by == AUTO else color_by
    coloring = coloring_for(metadata, column, len(coordinates))
    return render_picture(coordinates, coloring, width, **options)
