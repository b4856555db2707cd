"""Pictures without a browser: ``projector render`` and ``Projector.save_image`` write a PNG
of the requested width through the projection service, coloured by the front end's rules."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PIL import Image
from projector.server.cli import main as cli_main

from projector import Projector
from projector_core.export.coloring import GRADIENT_STOPS, PALETTE, categorical
from projector_core.export.render import render_picture

COLORS_JS = Path(__file__).resolve().parents[1] / "frontend" / "js" / "colors.js"


def test_render_writes_a_png_of_the_requested_width(sample_logdir, tmp_path, capsys):
    out = tmp_path / "figure.png"
    code = cli_main(["render", str(sample_logdir), "--run", "digits", "--projection", "pca",
                     "-o", str(out), "--width", "900", "--cache-dir", str(tmp_path / "cache")])
    assert code == 0
    image = Image.open(out)
    assert image.width == 900 and image.format == "PNG"
    assert image.info["dpi"] == (300, 300) or round(image.info["dpi"][0]) == 300
    pixels = np.asarray(image.convert("RGB")).reshape(-1, 3)
    colours = {tuple(c) for c in pixels[::3]}
    assert len(colours) > 50  # ten classes, their anti-aliased edges and the legend
    assert "900 x" in capsys.readouterr().out


def test_render_refuses_what_it_cannot_draw(sample_logdir, tmp_path, capsys):
    out = str(tmp_path / "x.png")
    assert cli_main(["render", str(sample_logdir), "-o", out]) == 2
    assert "several embeddings" in capsys.readouterr().err
    assert cli_main(["render", str(sample_logdir), "--run", "digits", "-o", out,
                     "--color-by", "nope"]) == 2
    assert "no such metadata column" in capsys.readouterr().err
    assert not Path(out).exists()


def test_palette_and_gradient_are_the_front_ends():
    text = COLORS_JS.read_text(encoding="utf-8")
    palette = re.search(r"export const PALETTE = \[(.*?)\]", text, re.S).group(1)
    stops = re.search(r"const GRADIENT_STOPS = \[(.*?)\]", text, re.S).group(1)
    assert tuple(re.findall(r"'(#[0-9a-f]{6})'", palette)) == PALETTE
    assert tuple(re.findall(r"'(#[0-9a-f]{6})'", stops)) == GRADIENT_STOPS


def test_a_pictures_legend_reads_by_value():
    """Digits of uneven counts: the legend lists 0 to 9 (not the most frequent first), and of
    more categories than it has rows, the most frequent ones, still by value."""
    counts = [5, 9, 2, 7, 1, 3, 8, 4, 6, 5]
    digits = [str(d) for d, n in enumerate(counts) for _ in range(n)]
    assert [text for text, _ in categorical(digits, "label").rows] == [str(d) for d in range(10)]
    many = [f"c{i:02d}" for i in range(15) for _ in range(i + 1)]
    rows = [text for text, _ in categorical(many, "kind").rows]
    assert rows == [f"c{i:02d}" for i in range(3, 15)] + ["+ 3 more"]


def test_discs_are_anti_aliased():
    coords = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.5], [0.3137, 0.7071]], np.float32)
    coloring = categorical(["a", "a", "b", "a"], "kind")
    image = np.asarray(render_picture(coords, coloring, 200, 200, point_size=40,
                                      legend=False)).astype(int)
    assert tuple(image[100, 100]) == (242, 142, 43)  # b, the palette's second colour
    colours = {tuple(p) for p in image.reshape(-1, 3)}
    partial = colours - {(255, 255, 255), (242, 142, 43), (78, 121, 167)}
    assert len(partial) >= 4, "the discs' edge pixels blend into the background"


def test_widget_save_image(tmp_path):
    vectors = np.random.default_rng(0).normal(size=(60, 5)).astype("f4")
    widget = Projector(vectors, {"group": ["a", "b", "c"] * 20}, color_by="group")
    try:
        path = widget.save_image(tmp_path / "widget.png", width=500)
    finally:
        widget._server.stop()
    image = Image.open(path)
    assert image.width == 500
    assert len({tuple(c) for c in np.asarray(image.convert("RGB")).reshape(-1, 3)}) > 10
