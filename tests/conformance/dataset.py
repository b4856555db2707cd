"""The conformance suite's data: a few hundred points in clear blobs, written by the project's
own writer, with a categorical and a numeric metadata column.

Run ``blobs`` holds two steps of the same points (``blobs:00000``, and ``blobs:00001`` a
little moved: compare's pair); run ``other`` a smaller set with other labels (a job of one
embedding asked under the name of another); ``arrays/`` the same first step as a plain
``.npy`` beside a ``meta.tsv`` (load through the doors that take files).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.formats.writer import add_embedding

N, D, GROUPS = 240, 16, 6
RUN, EMBEDDING, LATER = "blobs", "blobs:00000", "blobs:00001"
OTHER_RUN, OTHER_EMBEDDING = "other", "other:00000"
HEADER = ["group", "size"]


@dataclass(frozen=True)
class Blobs:
    logdir: Path
    vectors: np.ndarray  # N x D float32, step 0
    later: np.ndarray  # step 1
    group: list[str]  # "g0".."g5": categorical
    size: list[int]  # numeric
    npy: Path  # arrays/blobs.npy: the vectors as a file
    tsv: Path  # arrays/meta.tsv: their metadata

    def table(self, request: Mapping[str, Any]) -> dict[str, list[Any]]:
        """The metadata a load case sends as a table: ``columns`` of it (default both), the
        groups ``quoted`` (every fifth one said with double quotes) when asked."""
        group = [f'say "{g}"' if request.get("quoted") and i % 5 == 0 else g
                 for i, g in enumerate(self.group)]
        columns = {"group": group, "size": list(self.size)}
        return {name: columns[name] for name in request.get("columns", HEADER)}


def _points(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    centres = rng.normal(scale=6.0, size=(GROUPS, D))
    labels = np.arange(N) % GROUPS
    return (centres[labels] + rng.normal(size=(N, D))).astype(np.float32), labels


def metadata_tsv(group: list[str], size: list[int]) -> str:
    return "\t".join(HEADER) + "\n" + "".join(f"{g}\t{s}\n" for g, s in zip(group, size, strict=True))


def write_blobs(root: Path) -> Blobs:
    rng = np.random.default_rng(7)
    vectors, labels = _points(rng)
    later = (vectors + rng.normal(scale=0.8, size=vectors.shape)).astype(np.float32)
    group = [f"g{g}" for g in labels]
    size = [int(s) for s in rng.integers(1, 50, N)]
    logdir = root / "logs"
    rows = [[g, str(s)] for g, s in zip(group, size, strict=True)]
    for step, matrix in ((0, vectors), (1, later)):
        add_embedding(logdir / RUN, matrix, rows, global_step=step, tag=RUN, metadata_header=HEADER)
    other, other_labels = _points(np.random.default_rng(8))
    add_embedding(logdir / OTHER_RUN, other[:90], [f"kind{k}" for k in other_labels[:90]],
                  global_step=0, tag=OTHER_RUN)
    arrays = root / "arrays"
    arrays.mkdir()
    np.save(arrays / "blobs.npy", vectors)
    (arrays / "meta.tsv").write_text(metadata_tsv(group, size))
    return Blobs(logdir, vectors, later, group, size, arrays / "blobs.npy", arrays / "meta.tsv")
