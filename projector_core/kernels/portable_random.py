"""Seeded random numbers that the browser draws identically (``frontend/js/random.js``).

numpy's generators cannot be reproduced in JavaScript, so where the browser's local compute
must give the server's result (the custom projection's random centroid, pinned by
``tests/cases/custom.json``) both sides use mulberry32 for uniforms and Box-Muller for normals.
mulberry32's state only adds a constant each step, so the whole stream is computed at once.
"""

from __future__ import annotations

import numpy as np

_STEP = 0x6D2B79F5


def uniform(count: int, seed: int) -> np.ndarray:
    """``count`` numbers in [0, 1) from mulberry32 (seed 0 counts as 1, as in the browser)."""
    start = seed % 2**32 or 1
    state = ((start + np.arange(1, count + 1, dtype=np.uint64) * _STEP) % 2**32).astype(np.uint32)
    t = (state ^ (state >> 15)) * (state | 1)  # uint32 products wrap as Math.imul does
    t ^= t + (t ^ (t >> 7)) * (t | 61)
    return np.asarray((t ^ (t >> 14)) / 2.0**32)


def standard_normal(count: int, seed: int) -> np.ndarray:
    """``count`` standard-normal float64 numbers: Box-Muller's cosine branch on uniform pairs."""
    pairs = uniform(2 * count, seed).reshape(count, 2)
    radius = np.sqrt(-2 * np.log(np.where(pairs[:, 0] == 0, 1e-12, pairs[:, 0])))
    return np.asarray(radius * np.cos(2 * np.pi * pairs[:, 1]))
