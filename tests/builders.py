"""One builder per kind of input log directory, written by the real tools where they exist."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def vectors(n: int, d: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


def write_torch_logdir(logdir: Path) -> dict[str, np.ndarray]:
    """PyTorch's SummaryWriter: two steps, an escaped tag, header-less and headed metadata, a sprite."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    first, second = vectors(20, 5, 1), vectors(12, 3, 2)
    writer = SummaryWriter(str(logdir))
    writer.add_embedding(torch.from_numpy(first), metadata=[f"p{i}" for i in range(20)],
                         label_img=torch.rand(20, 3, 8, 8), global_step=0)
    writer.add_embedding(torch.from_numpy(second),
                         metadata=[[str(i), "odd" if i % 2 else "even"] for i in range(12)],
                         metadata_header=["idx", "parity"], global_step=3, tag="my/tag%x")
    writer.close()
    return {"default:00000": first, "my/tag%x:00003": second}


def write_tensorboardx_logdir(logdir: Path) -> dict[str, np.ndarray]:
    """tensorboardX on numpy arrays: a sprite, and an embedding with no metadata at all."""
    import tensorboardX

    first, second = vectors(16, 4, 3), vectors(10, 6, 4)
    writer = tensorboardX.SummaryWriter(str(logdir))
    writer.add_embedding(first, metadata=[f"w{i}" for i in range(16)],
                         label_img=np.random.default_rng(0).random((16, 3, 8, 8)), global_step=0)
    writer.add_embedding(second, global_step=1, tag="other")
    writer.close()
    return {"default:00000": first, "other:00001": second}


def write_tsv(path: Path, matrix: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join("\t".join(repr(float(v)) for v in row) + "\n" for row in matrix))


def write_standalone_logdir(logdir: Path) -> dict[str, np.ndarray]:
    """The standalone projector's JSON config: one TSV tensor and one .bytes tensor."""
    tsv, raw = vectors(9, 3, 5), vectors(7, 4, 6)
    logdir.mkdir(parents=True, exist_ok=True)
    write_tsv(logdir / "a.tsv", tsv)
    (logdir / "b.bytes").write_bytes(raw.astype("<f4").tobytes())
    (logdir / "meta.tsv").write_text("name\tsize\n" + "".join(f"n{i}\t{i}\n" for i in range(7)))
    config = {"embeddings": [
        {"tensorName": "tsv one", "tensorShape": [9, 3], "tensorPath": "a.tsv"},
        {"tensorName": "bytes one", "tensorShape": [7, 4], "tensorPath": "b.bytes",
         "metadataPath": "meta.tsv"},
    ]}
    (logdir / "projector_config.json").write_text(json.dumps(config))
    return {"tsv one": tsv, "bytes one": raw}


def write_pbtxt_run(folder: Path, body: str, files: dict[str, bytes | str] | None = None) -> Path:
    """A run from a hand-written config text and the files it names."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in (files or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content)
        else:
            path.write_bytes(content)
    config = folder / "projector_config.pbtxt"
    config.write_text(body)
    return config


def write_points_run(folder: Path, coords: np.ndarray, metadata: str | None = None,
                     name: str = "points") -> Path:
    """A run of one float32 tensor ``coords`` (N x D, as ``.bytes``) and, when given, its
    metadata TSV text."""
    n, d = coords.shape
    files: dict[str, bytes | str] = {"t.bytes": coords.astype("<f4").tobytes()}
    described = ""
    if metadata is not None:
        files["meta.tsv"] = metadata
        described = ' metadata_path: "meta.tsv"'
    return write_pbtxt_run(
        folder, f'embeddings {{ tensor_name: "{name}" tensor_path: "t.bytes" tensor_shape: {n} '
                f'tensor_shape: {d}{described} }}', files)
