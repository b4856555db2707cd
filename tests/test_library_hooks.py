"""The openTSNE and umap-learn internals our kernels hook still fire.

``kernels/tsne.py`` hands openTSNE a callable ``negative_gradient_method`` and wraps its Annoy
index; it passes precomputed neighbours and replaces the affinities' ``P`` (supervision).
``kernels/umap.py`` calls umap-learn's compiled single-epoch kernel itself. A new release may
keep every name yet stop calling what we hand it; these tests see that from what the hooks
do in a small real fit (frames, progress, the affinities openTSNE kept), and pyproject pins
the ranges they pass on.
"""

from __future__ import annotations

import itertools
import re
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement

from projector_core.kernels.supervision import MISSING
from projector_core.kernels.tsne import AFFINITY_SHARE, ANNOY_MIN_POINTS, tsne

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _blobs(n: int, dim: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 4, n)
    centres = rng.normal(scale=6.0, size=(4, dim))
    return (centres[labels] + rng.normal(size=(n, dim))).astype(np.float32), labels


def _pairs(matrix) -> set[tuple[int, int]]:
    coo = matrix.tocoo()
    return set(zip(coo.row[coo.data > 0].tolist(), coo.col[coo.data > 0].tolist(), strict=True))


@pytest.mark.parametrize("name", ["openTSNE", "umap-learn"])
def test_installed_versions_are_in_the_pinned_ranges(name):
    line = re.search(rf'^\s*"({re.escape(name)}[^"]*)"', PYPROJECT.read_text(), re.MULTILINE)
    assert line, f"pyproject.toml does not list {name}"
    pinned = Requirement(line.group(1))
    assert pinned.specifier and pinned.specifier.contains(version(name)), (
        f"{name} {version(name)} is outside {pinned.specifier}: check the hooks, then the pin")


def test_opentsne_calls_our_gradient_before_every_step_and_our_annoy_index_while_searching():
    data, _ = _blobs(ANNOY_MIN_POINTS + 200)
    n_iter = 12
    steps: list[tuple[int, float, np.ndarray | None]] = []
    tsne(data, 2, n_iter=n_iter, n_jobs=1, on_step=lambda i, progress, live: steps.append(
        (i, progress, None if live is None else np.array(live))))
    searching = [progress for _, progress, live in steps if live is None]
    assert searching and max(searching) > AFFINITY_SHARE / 2  # queries counted as they ran
    frames = [(i, live) for i, _, live in steps if live is not None][1:]  # after the PCA start
    assert {i for i, _ in frames} == set(range(n_iter + 1))  # the gradient hook, every step
    moved = [not np.array_equal(a, b) for (_, a), (_, b) in itertools.pairwise(frames)]
    assert sum(moved) >= n_iter  # what the hook saw is the layout openTSNE optimised


def test_opentsne_keeps_the_neighbours_and_the_affinities_we_hand_it():
    data, labels = _blobs(300)
    k = 30  # 3 x perplexity 10
    rng = np.random.default_rng(1)
    # Random neighbours, not the nearest: openTSNE's own search could never produce them.
    indices = np.stack([rng.choice(np.delete(np.arange(300), i), k, replace=False)
                        for i in range(300)])
    distances = np.linalg.norm(data[indices] - data[:, None, :], axis=2).astype(np.float64)
    given = {(i, int(j)) for i in range(300) for j in indices[i]}
    result = tsne(data, 2, perplexity=10, n_iter=6, n_jobs=1, neighbors=(indices, distances))
    assert result.embedding is not None
    assert _pairs(result.embedding.affinities.P) <= given | {(j, i) for i, j in given}

    codes = labels.astype(np.int64)
    codes[:10] = MISSING
    supervised = tsne(data, 2, perplexity=10, n_iter=6, n_jobs=1, supervision=(codes, 1.0))
    assert supervised.embedding is not None
    kept = _pairs(supervised.embedding.affinities.P)
    assert kept and all(codes[i] == codes[j] or MISSING in (codes[i], codes[j]) for i, j in kept)


@pytest.mark.slow
def test_umap_learns_single_epoch_kernel_moves_the_layout_every_epoch():
    from projector_core.kernels.umap import umap  # numba compiles on first use

    data, _ = _blobs(300)
    epochs = 10
    frames: list[tuple[int, np.ndarray]] = []
    umap(data, 2, n_neighbors=10, n_epochs=epochs, on_step=lambda epoch, progress, live:
         frames.append((epoch, np.array(live))), preview=False)
    assert [epoch for epoch, _ in frames] == list(range(epochs + 1))
    # umap-learn samples no edge in its epoch 0 (each is due at epoch >= 1); then every one moves.
    moved = [not np.array_equal(a, b) for (_, a), (_, b) in itertools.pairwise(frames)]
    assert moved == [False] + [True] * (epochs - 1)
