"""Hostile and huge sprites: refused from their headers, cut into atlas pages when large."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import httpx
import numpy as np
import psutil
import pytest
from PIL import Image

from projector_core.formats.sprites.atlas import plan_atlas
from projector_core.formats.writer import add_embedding, write_sprite
from tests.builders import vectors, write_pbtxt_run

MB = 2**20


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def bomb_png(width: int, height: int) -> bytes:
    """A few hundred bytes whose header declares width x height RGB pixels (decoding would
    allocate width * height * 3 bytes before finding the data short)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = zlib.compress(b"\0" * 4096, 9)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", data)
            + _chunk(b"IEND", b""))


def bomb_jpeg(width: int, height: int) -> bytes:
    """A real 16x16 JPEG whose frame header (SOF0) is patched to declare width x height."""
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (200, 10, 10)).save(buffer, format="JPEG")
    raw = bytearray(buffer.getvalue())
    sof = raw.index(b"\xff\xc0")
    raw[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(raw)


def sprite_run(folder: Path, image: bytes, n: int = 9, dim: tuple[int, int] = (8, 8),
               name: str = "s.png") -> None:
    buffer = io.BytesIO()
    np.save(buffer, vectors(n, 2))
    body = ('embeddings {\n  tensor_name: "t"\n  tensor_path: "t.npy"\n  sprite {\n'
            f'    image_path: "{name}"\n    single_image_dim: {dim[0]}\n'
            f'    single_image_dim: {dim[1]}\n  }}\n}}\n')
    write_pbtxt_run(folder, body, {"t.npy": buffer.getvalue(), name: image})


def embedding_of(base: str, run: str) -> dict:
    runs = httpx.get(f"{base}/api/runs").json()
    return next(r for r in runs if r["name"] == run)["embeddings"][0]


@pytest.mark.quiet_server  # the process's memory is measured: no warm-up, no view computed meanwhile
def test_bomb_sprites_are_refused_from_their_headers(tmp_path: Path, serve) -> None:
    before_limit = Image.MAX_IMAGE_PIXELS
    sprite_run(tmp_path / "png", bomb_png(40000, 40000))
    sprite_run(tmp_path / "jpeg", bomb_jpeg(65000, 65000), name="s.jpg")
    sprite_run(tmp_path / "sparse", bomb_png(8192, 8192), n=4)  # 4 thumbnails of 8 px
    rss = psutil.Process().memory_info().rss
    base = serve(tmp_path)
    cases = {"png": ("png/s.png", "40000x40000"), "jpeg": ("jpeg/s.jpg", "65000x65000"),
             "sparse": ("sparse/s.png", "8192x8192")}
    for run, (file, size) in cases.items():
        embedding = embedding_of(base, run)
        assert embedding["sprite"] is None
        assert file in embedding["error"] and size in embedding["error"], embedding["error"]
        params = {"run": run, "embedding": "t"}
        assert httpx.get(f"{base}/api/tensor", params=params).status_code == 200
        for route, extra in [("sprite", {}), ("sprite/atlas", {}), ("sprite/page", {"page": 0})]:
            response = httpx.get(f"{base}/api/{route}", params={**params, **extra})
            assert response.status_code == 422 and size in response.json()["detail"]
    assert "far larger than 4 thumbnails" in embedding_of(base, "sparse")["error"]
    assert psutil.Process().memory_info().rss - rss < 150 * MB
    assert before_limit == Image.MAX_IMAGE_PIXELS


def test_a_sprite_past_pillows_guard_but_within_our_budget_loads(tmp_path: Path, serve) -> None:
    """Our budget is ours: Pillow's process-wide limit, lowered or raised, neither blocks a
    sane sprite nor lets an absurd one through."""
    sprite_run(tmp_path / "ok", _png(_thumbs(9, 8), 3))
    saved = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = 10  # far below the sprite: Image.open would refuse it
    try:
        base = serve(tmp_path)
        assert embedding_of(base, "ok")["error"] is None
        page = httpx.get(f"{base}/api/sprite/page", params={"run": "ok", "embedding": "t",
                                                            "page": 0})
        assert page.status_code == 200
    finally:
        Image.MAX_IMAGE_PIXELS = saved


def _thumbs(n: int, size: int, seed: int = 0) -> np.ndarray:
    """n flat-coloured thumbnails, each a different colour."""
    colours = np.random.default_rng(seed).integers(0, 256, (n, 3), dtype=np.uint8)
    return np.broadcast_to(colours[:, None, None, :], (n, size, size, 3)).copy()


def _png(thumbs: np.ndarray, columns: int) -> bytes:
    n, size = thumbs.shape[0], thumbs.shape[1]
    rows = -(-n // columns)
    grid = np.zeros((rows * columns, size, size, 3), np.uint8)
    grid[:n] = thumbs
    image = grid.reshape(rows, columns, size, size, 3).transpose(0, 2, 1, 3, 4)
    buffer = io.BytesIO()
    Image.fromarray(image.reshape(rows * size, columns * size, 3)).save(buffer, format="PNG")
    return buffer.getvalue()


def _cell(page: np.ndarray, column: int, row: int, dim: tuple[int, int]) -> np.ndarray:
    w, h = dim
    return page[row * h:(row + 1) * h, column * w:(column + 1) * w]


def _atlas_thumbnails(base: str, params: dict, max_px: int) -> tuple[dict, list[np.ndarray]]:
    atlas = httpx.get(f"{base}/api/sprite/atlas", params={**params, "max_px": max_px}).json()
    pages = []
    for page in atlas["pages"]:
        response = httpx.get(f"{base}/api/sprite/page",
                             params={**params, "page": page["index"], "max_px": max_px})
        assert response.status_code == 200 and response.headers["content-type"] == "image/png"
        pixels = np.asarray(Image.open(io.BytesIO(response.content)).convert("RGB"))
        assert pixels.shape[:2] == (page["size"][1], page["size"][0])
        pages.append(pixels)
    return atlas, pages


def _thumbnail(atlas: dict, pages: list[np.ndarray], i: int) -> np.ndarray:
    page = next(p for p in atlas["pages"] if p["first"] <= i < p["first"] + p["count"])
    column, row = (i - page["first"]) % page["grid"][0], (i - page["first"]) // page["grid"][0]
    return _cell(pages[page["index"]], column, row, tuple(atlas["thumb_dim"]))


def test_writer_pages_hold_every_thumbnail_at_full_size(tmp_path: Path, serve) -> None:
    n = 300
    thumbs = _thumbs(n, 16)
    add_embedding(tmp_path, vectors(n, 3), label_img=thumbs, sprite_max_px=256)
    folder = tmp_path / "00000" / "default"
    manifest = (folder / "sprite.pages.json").read_text()
    assert '"sprite_page_001.png"' in manifest and not (folder / "sprite_page_002.png").exists()
    with Image.open(folder / "sprite.png") as overview:  # TensorBoard's image, scaled down
        assert overview.size == (18 * 14, 18 * 14)
    config = (tmp_path / "projector_config.pbtxt").read_text()
    assert "single_image_dim: 14" in config and "pages" not in config
    base = serve(tmp_path)
    params = {"run": ".", "embedding": "default:00000"}
    embedding = embedding_of(base, ".")
    assert embedding["error"] is None and embedding["sprite"] == {"single_image_dim": [14, 14]}
    atlas, pages = _atlas_thumbnails(base, params, 1024)
    assert atlas["single_image_dim"] == [16, 16] and atlas["thumb_dim"] == [16, 16]
    assert [p["grid"] for p in atlas["pages"]] == [[18, 17]]
    for i in range(n):
        assert (_thumbnail(atlas, pages, i) == thumbs[i]).all(), i
    assert httpx.get(f"{base}/api/sprite", params=params).status_code == 200  # the overview


def test_a_sprite_wider_than_the_browser_takes_is_served_as_scaled_pages(tmp_path: Path,
                                                                         serve) -> None:
    n = 5
    thumbs = _thumbs(n, 600)
    sprite_run(tmp_path / "wide", _png(thumbs, 3), n=n, dim=(600, 600))
    base = serve(tmp_path)
    params = {"run": "wide", "embedding": "t"}
    atlas, pages = _atlas_thumbnails(base, params, 1024)
    assert atlas["thumb_dim"] == [600, 600]
    assert [(p["first"], p["count"], p["grid"]) for p in atlas["pages"]] == [
        (0, 1, [1, 1]), (1, 1, [1, 1]), (2, 1, [1, 1]), (3, 1, [1, 1]), (4, 1, [1, 1])]
    for i in range(n):
        assert (_thumbnail(atlas, pages, i) == thumbs[i]).all()
    bad = httpx.get(f"{base}/api/sprite/atlas", params={**params, "max_px": 512})
    assert bad.status_code == 422 and "max_px" in bad.json()["detail"]
    missing = httpx.get(f"{base}/api/sprite/page", params={**params, "page": 5, "max_px": 1024})
    assert missing.status_code == 404


def test_a_sprite_too_large_to_hand_over_raw_points_to_the_atlas(tmp_path: Path,
                                                                serve) -> None:
    # 17000 x 2 px: small on disk, but wider than any GPU texture.
    buffer = io.BytesIO()
    Image.new("L", (17000, 2), 200).save(buffer, format="PNG")
    sprite_run(tmp_path / "long", buffer.getvalue(), n=4, dim=(8500, 1))
    base = serve(tmp_path)
    params = {"run": "long", "embedding": "t"}
    raw = httpx.get(f"{base}/api/sprite", params=params)
    assert raw.status_code == 409 and "/api/sprite/atlas" in raw.json()["detail"]
    atlas, pages = _atlas_thumbnails(base, params, 8192)
    assert atlas["thumb_dim"] == [8192, 1] and len(pages) == 1
    assert (pages[0] == 200).all()


@pytest.mark.parametrize("count, dim, max_px", [(100_000, (32, 32), 8192), (7, (10, 30), 1024),
                                                 (3_000_000, (64, 64), 16384), (1, (5000, 9000),
                                                                                 4096)])
def test_atlas_layout_fits_the_browser_and_places_every_thumbnail(count, dim, max_px) -> None:
    layout = plan_atlas(count, dim, max_px)
    assert sum(p.count for p in layout.pages) == count
    assert all(max(p.size) <= max_px for p in layout.pages)
    assert all(p.count <= p.grid[0] * p.grid[1] for p in layout.pages)
    assert [p.first for p in layout.pages] == [sum(q.count for q in layout.pages[:i])
                                              for i in range(len(layout.pages))]
    if count == 100_000:  # the case: full resolution, two pages
        assert layout.thumb_dim == (32, 32) and len(layout.pages) == 2
    if count == 3_000_000:  # beyond the GPU budget: scaled down
        assert layout.thumb_dim[0] < 64


def test_openapi_documents_the_atlas_routes(tmp_path: Path, serve) -> None:
    schema = httpx.get(f"{serve(tmp_path)}/openapi.json").json()
    atlas = schema["paths"]["/api/sprite/atlas"]["get"]
    assert atlas["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "AtlasOut")
    assert "image/png" in schema["paths"]["/api/sprite/page"]["get"]["responses"]["200"]["content"]
    assert "409" in schema["paths"]["/api/sprite"]["get"]["responses"]
    names = {p["name"] for p in atlas["parameters"]}
    assert {"run", "embedding", "max_px"} <= names


def test_writer_keeps_the_single_image_when_it_fits(tmp_path: Path) -> None:
    (tmp_path / "sprite.pages.json").write_text("{}")  # from an earlier, larger sprite
    entry = write_sprite(tmp_path, _thumbs(10, 8), max_px=256)
    assert entry.single_image_dim == (8, 8) and not (tmp_path / "sprite.pages.json").exists()


def test_writer_pages_in_the_atlas_layout_are_served_as_written(tmp_path: Path, serve) -> None:
    n = 4500  # 68 columns of 16 px pass 1024 px: two pages of 64 x 64 thumbnails
    thumbs = _thumbs(n, 16, seed=1)
    add_embedding(tmp_path, vectors(n, 3), label_img=thumbs, sprite_max_px=1024)
    folder = tmp_path / "00000" / "default"
    base = serve(tmp_path)
    params = {"run": ".", "embedding": "default:00000"}
    atlas, pages = _atlas_thumbnails(base, params, 1024)
    assert [(p["first"], p["count"], p["grid"]) for p in atlas["pages"]] == [
        (0, 4096, [64, 64]), (4096, 404, [64, 7])]
    for index in range(2):
        served = httpx.get(f"{base}/api/sprite/page", params={**params, "page": index,
                                                              "max_px": 1024})
        assert served.content == (folder / f"sprite_page_{index:03d}.png").read_bytes()
    for i in (0, 4095, 4096, n - 1):
        assert (_thumbnail(atlas, pages, i) == thumbs[i]).all()


def test_an_unwritable_cache_answers_503_not_500(tmp_path: Path, serve) -> None:
    jpeg = io.BytesIO()
    Image.open(io.BytesIO(_png(_thumbs(9, 8), 3))).save(jpeg, format="JPEG")  # re-encoded: cut
    sprite_run(tmp_path / "logs" / "ok", jpeg.getvalue(), name="s.jpg")
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("")
    base = serve(tmp_path / "logs", cache_dir=blocked)
    page = httpx.get(f"{base}/api/sprite/page", params={"run": "ok", "embedding": "t", "page": 0})
    assert page.status_code == 503 and "cache" in page.json()["detail"]


def test_a_broken_or_stale_page_manifest_is_reported(tmp_path: Path) -> None:
    from projector_core.data.catalog import Catalog

    add_embedding(tmp_path, vectors(300, 3), label_img=_thumbs(300, 16), sprite_max_px=256)
    folder = tmp_path / "00000" / "default"
    manifest = folder / "sprite.pages.json"
    good = manifest.read_text()
    manifest.write_text(good.replace('"count": 300', '"count": 299'))
    embedding = _load(Catalog, tmp_path)
    assert embedding.errors["sprite"] == ("00000/default/sprite.pages.json field 'count': lists "
                                          "299 thumbnails but the tensor has 300 points")
    manifest.write_text(good.replace('"first": 0', '"first": 1'))
    assert "field 'pages[0]'" in _load(Catalog, tmp_path).errors["sprite"]
    manifest.write_text(good)
    Image.new("RGB", (19 * 14, 19 * 14)).save(folder / "sprite.png")  # rewritten by another tool
    embedding = _load(Catalog, tmp_path)
    assert "sprite" not in embedding.errors and len(embedding.sprite.pages) == 1
    assert any("describes another sprite.png" in w for w in embedding.warnings)


def _load(catalog_type, logdir: Path):
    catalog = catalog_type(logdir, cache_dir=logdir.parent / "cache")
    catalog.refresh()
    return catalog.runs()[0].embeddings[0]


def test_non_square_thumbnails_keep_their_aspect_in_the_atlas(tmp_path: Path, serve) -> None:
    """A TensorBoard sprite of 1500 x 500 px cells (a Pillow PNG), scaled to fit 1024 px
    pages: the cells are scaled alike on both axes, so each thumbnail keeps its 3:1 and its
    left and right halves (the page letterboxes it in the square point)."""
    n, (w, h) = 3, (1500, 500)
    colours = np.array([[200, 30, 30], [30, 200, 30], [30, 30, 200]], np.uint8)
    grid = np.zeros((2 * h, 2 * w, 3), np.uint8)
    for i, colour in enumerate(colours):
        row, column = divmod(i, 2)
        grid[row * h:(row + 1) * h, column * w:column * w + w // 2] = colour
        grid[row * h:(row + 1) * h, column * w + w // 2:(column + 1) * w] = 255 - colour
    buffer = io.BytesIO()
    Image.fromarray(grid).save(buffer, format="PNG")
    sprite_run(tmp_path / "wide", buffer.getvalue(), n=n, dim=(w, h))
    atlas, pages = _atlas_thumbnails(serve(tmp_path), {"run": "wide", "embedding": "t"}, 1024)
    tw, th = atlas["thumb_dim"]
    assert tw <= 1024 and abs(tw / th - 3) < 0.02
    for i in range(n):
        thumb = _thumbnail(atlas, pages, i).astype(int)
        assert np.abs(thumb[:, 2:tw // 2 - 2] - colours[i]).max() < 8
        assert np.abs(thumb[:, tw // 2 + 2:-2] - (255 - colours[i])).max() < 8
