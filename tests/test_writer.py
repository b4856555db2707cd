"""add_embedding and the sprite builder, checked against PyTorch's writer and real TensorBoard."""

from __future__ import annotations

import filecmp
import math
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from projector_core.data.catalog import Catalog
from projector_core.formats.config import PBTXT_NAME, parse_pbtxt_config
from projector_core.formats.writer import add_embedding, make_sprite, write_sprite

RNG = np.random.default_rng(0)
MAT = RNG.standard_normal((10, 5)).astype(np.float32)
IMAGES_NCHW = RNG.random((10, 3, 8, 8)).astype(np.float32)
LABELS = [f"w{i}" for i in range(10)]
ROWS = [[f"w{i}", i % 3] for i in range(10)]


def write_all(logdir: Path, add) -> None:
    """The same three calls, through PyTorch's writer or ours."""
    add(MAT, metadata=LABELS, label_img=IMAGES_NCHW, tag="a/b%c")
    add(MAT, metadata=ROWS, metadata_header=["word", "k"], global_step=3)
    add(MAT.astype(np.float64))


def written_files(logdir: Path) -> list[str]:
    return sorted(
        str(p.relative_to(logdir))
        for p in logdir.rglob("*")
        if p.is_file() and "tfevents" not in p.name
    )


def test_same_files_as_pytorch_summary_writer(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("tensorboard")  # PyTorch's SummaryWriter needs it
    from torch.utils.tensorboard import SummaryWriter

    theirs, ours = tmp_path / "torch", tmp_path / "ours"
    writer = SummaryWriter(str(theirs))

    def add_theirs(mat, **kwargs):
        label_img = kwargs.pop("label_img", None)
        if label_img is not None:
            kwargs["label_img"] = torch.from_numpy(label_img)
        writer.add_embedding(torch.from_numpy(mat), **kwargs)

    write_all(theirs, add_theirs)
    writer.close()
    write_all(ours, lambda mat, **kwargs: add_embedding(ours, mat, **kwargs))

    files = written_files(theirs)
    assert files == written_files(ours)
    assert "00000/a%2fb%25c/sprite.png" in files
    for name in files:
        if name == PBTXT_NAME:  # ours also states each tensor's shape
            shapes = ["  tensor_shape: 10\n", "  tensor_shape: 5\n"] * 3
            lines = (ours / name).read_text().splitlines(keepends=True)
            assert [line for line in lines if "tensor_shape" in line] == shapes
            assert "".join(line for line in lines if "tensor_shape" not in line) == (
                theirs / name).read_text()
        else:
            assert filecmp.cmp(theirs / name, ours / name, shallow=False), name


def test_config_accumulates_across_calls_and_replaces_the_same_tag(tmp_path: Path) -> None:
    (tmp_path / PBTXT_NAME).write_text(
        'model_checkpoint_path: "model.ckpt"\n'
        'embeddings { tensor_name: "hand written" tensor_path: "mine.tsv" }\n'
    )
    add_embedding(tmp_path, MAT, tag="words")
    add_embedding(tmp_path, MAT[:4], tag="words")  # same tag and step: replaced
    add_embedding(tmp_path, MAT, tag="words", global_step=7)
    config = parse_pbtxt_config(tmp_path / PBTXT_NAME, PBTXT_NAME)
    assert config.model_checkpoint_path == "model.ckpt"
    assert [e.tensor_name for e in config.embeddings] == [
        "hand written",
        "words:00000",
        "words:00007",
    ]
    assert (tmp_path / "00000/words/tensors.tsv").read_text().count("\n") == 4
    assert not [p for p in tmp_path.rglob(".*")]  # no temporary files left behind


def test_projector_catalog_reads_what_the_writer_wrote(tmp_path: Path) -> None:
    logdir = tmp_path / "logdir"
    add_embedding(logdir, MAT, metadata=ROWS, metadata_header=["word", "k"], tag="words")
    add_embedding(logdir, MAT, metadata=LABELS, label_img=IMAGES_NCHW, global_step=2)
    catalog = Catalog(logdir, cache_dir=tmp_path / "cache")
    catalog.refresh()
    (run,) = catalog.runs()
    words = run.embedding("words:00000")
    assert words.error is None
    np.testing.assert_array_equal(words.vectors(), MAT)
    metadata = words.metadata()
    assert metadata.names == ["word", "k"]
    assert metadata.column("word") == LABELS
    pictured = run.embedding("default:00002")
    assert pictured.error is None
    assert pictured.metadata().column("label") == LABELS
    assert pictured.sprite.single_image_dim == (8, 8)


def test_npy_steps_are_read_back_as_written(tmp_path: Path) -> None:
    add_embedding(tmp_path, MAT, metadata=LABELS, global_step=4, format="npy")
    entry = parse_pbtxt_config(tmp_path / PBTXT_NAME, PBTXT_NAME).embeddings[0]
    assert (entry.tensor_path, entry.tensor_shape) == ("00004/default/tensors.npy", (10, 5))
    catalog = Catalog(tmp_path, cache_dir=tmp_path / "cache")
    catalog.refresh()
    np.testing.assert_array_equal(catalog.embedding(".", "default:00004").vectors(), MAT)
    with pytest.raises(ValueError, match="'tsv', 'npy' or 'zarr'"):
        add_embedding(tmp_path, MAT, format="bytes")


def test_tensorboards_config_parser_reads_our_config(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig

    add_embedding(tmp_path, MAT, metadata=LABELS, label_img=IMAGES_NCHW, tag="words")
    add_embedding(tmp_path, MAT[:4], global_step=12, format="npy")
    parsed = text_format.Parse((tmp_path / PBTXT_NAME).read_text(), ProjectorConfig())
    assert [(e.tensor_name, e.tensor_path, list(e.tensor_shape)) for e in parsed.embeddings] == [
        ("words:00000", "00000/words/tensors.tsv", [10, 5]),
        ("default:00012", "00012/default/tensors.npy", [4, 5])]
    assert parsed.embeddings[0].metadata_path == "00000/words/metadata.tsv"
    assert list(parsed.embeddings[0].sprite.single_image_dim) == [8, 8]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_tensorboard_itself_reads_what_the_writer_wrote(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    add_embedding(tmp_path, MAT, metadata=LABELS, label_img=IMAGES_NCHW, tag="words")
    port = free_port()
    base = f"http://127.0.0.1:{port}/data/plugin/projector"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tensorboard.main",
            "--logdir",
            str(tmp_path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def get(route: str, **params: str) -> bytes:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{base}/{route}?{query}", timeout=10) as response:
            return response.read()

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                runs = get("runs")
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, "TensorBoard did not start"
                time.sleep(0.5)
        assert runs == b'["."]'
        tensor = np.frombuffer(get("tensor", run=".", name="words:00000"), dtype="<f4")
        np.testing.assert_array_equal(tensor.reshape(MAT.shape), MAT)
        assert get("metadata", run=".", name="words:00000").decode().split("\n")[:2] == [
            "w0",
            "w1",
        ]
        sprite = get("sprite_image", run=".", name="words:00000")
        assert sprite == (tmp_path / "00000/words/sprite.png").read_bytes()
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_metadata_cells_stay_inside_their_cells(tmp_path: Path) -> None:
    add_embedding(tmp_path, MAT[:2], metadata=["tab\there", "line\nbreak"])
    assert (tmp_path / "00000/default/metadata.tsv").read_text() == "tab here\nline break\n"


def test_one_column_header_is_not_written(tmp_path: Path) -> None:
    # TensorBoard reads a first line without a tab as data: "word" would shift every label.
    with pytest.warns(UserWarning, match="'word' is not written"):
        add_embedding(tmp_path, MAT[:2], metadata=[["a"], ["b"]], metadata_header=["word"])
    assert (tmp_path / "00000/default/metadata.tsv").read_text() == "a\nb\n"


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="2-D"):
        add_embedding(tmp_path, np.zeros(3))
    with pytest.raises(ValueError, match="3 metadata rows for 10 points"):
        add_embedding(tmp_path, MAT, metadata=["a", "b", "c"])
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        add_embedding(tmp_path, MAT, metadata=[["a"]] * 10, metadata_header=["x", "y"])
    with pytest.raises(ValueError, match="2 images for 10 points"):
        add_embedding(tmp_path, MAT, label_img=IMAGES_NCHW[:2])


# -- sprites ----------------------------------------------------------------------------------


def test_channel_layouts_give_the_same_sprite() -> None:
    nhwc = (RNG.random((5, 6, 6, 3)) * 255).astype(np.uint8)
    expected, dim = make_sprite(nhwc)
    assert dim == (6, 6)
    assert expected.size == (18, 18)  # ceil(sqrt(5)) = 3 columns, and as many rows
    same, _ = make_sprite(nhwc.transpose(0, 3, 1, 2))
    assert same.tobytes() == expected.tobytes()
    as_pil, _ = make_sprite([Image.fromarray(image) for image in nhwc])
    assert as_pil.tobytes() == expected.tobytes()
    pixels = np.asarray(expected)
    np.testing.assert_array_equal(pixels[6:12, 0:6], nhwc[3])  # row-major: 4th image, row 2
    assert not pixels[12:, 6:].any()  # cells after the last image stay black


def test_greyscale_images_become_grey_rgb() -> None:
    grey = np.linspace(0, 1, 4 * 3 * 3, dtype=np.float32).reshape(4, 3, 3)
    sprite, _ = make_sprite(grey)
    pixels = np.asarray(sprite)
    assert sprite.mode == "RGB" and pixels.shape == (6, 6, 3)
    np.testing.assert_array_equal(pixels[:3, :3, 0], (grey[0] * 255).astype(np.uint8))
    np.testing.assert_array_equal(pixels[..., 0], pixels[..., 2])


def test_images_of_any_size_and_aspect_are_letterboxed(tmp_path: Path) -> None:
    wide = Image.new("RGB", (40, 10), (255, 0, 0))
    tall = Image.new("RGB", (5, 20), (0, 255, 0))
    path = tmp_path / "small.png"
    Image.new("RGBA", (4, 4), (0, 0, 255, 255)).save(path)
    sprite, dim = make_sprite([wide, tall, path])
    assert dim == (40, 40)  # the largest side
    pixels = np.asarray(sprite)
    assert sprite.size == (80, 80)
    wide_cell = pixels[:40, :40]
    assert (wide_cell[15:25, :, 0] == 255).all()  # centred band 40x10
    assert not wide_cell[:15].any() and not wide_cell[25:].any()
    tall_cell = pixels[:40, 40:80]
    assert (tall_cell[:, 15:25, 1] == 255).all() and not tall_cell[:, :15].any()
    assert (pixels[40:80, :40, 2] == 255).all()  # scaled up to fill the cell


def test_transparency_is_composited_on_black() -> None:
    half = np.zeros((1, 2, 2, 4), dtype=np.uint8)
    half[..., 0] = 255
    half[..., 3] = 128
    sprite, _ = make_sprite(half)
    assert np.asarray(sprite)[0, 0].tolist() == [128, 0, 0]


def test_sprite_stays_within_8192_px() -> None:
    sprite, (width, height) = make_sprite(np.zeros((5, 4, 4, 3), np.uint8), thumb_size=5000)
    assert width == height == 8192 // 3
    assert max(sprite.size) <= 8192 and sprite.size[0] == 3 * width


def test_write_sprite_gives_its_config_entry(tmp_path: Path) -> None:
    images = (RNG.random((7, 3, 5, 5)) * 255).astype(np.uint8)
    entry = write_sprite(tmp_path, images, name="thumbs.png")
    assert entry.image_path == "thumbs.png" and entry.single_image_dim == (5, 5)
    with Image.open(tmp_path / "thumbs.png") as image:
        assert image.format == "PNG"
        assert image.size == (5 * math.ceil(math.sqrt(7)),) * 2
