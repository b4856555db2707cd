"""Finished projections on disk, so asking again for the same one is instant, even after a restart.

An entry is keyed by the embedding's fingerprint (which changes whenever its tensor or metadata
file does) and the full, defaulted request: method, dims, parameters and device. It lives
in the cache directory the catalog uses, never in LOGDIR: ``projections/KEY.npy`` (float32,
loaded with ``allow_pickle=False``) beside ``projections/KEY.json`` (the info). Writes are
atomic; the oldest entries go when the folder outgrows its budget.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.storage.atomic_write import atomic_file, write_atomic
from projector_core.storage.fingerprint import fingerprint

_FORMAT_VERSION = "1"
DEFAULT_MAX_BYTES = 2 * 2**30


def result_key(data: str, request: dict[str, Any]) -> str:
    """A stable name for one projection of one version (``data``: its fingerprint) of an
    embedding."""
    text = json.dumps({"v": _FORMAT_VERSION, "fingerprint": data, "request": request},
                      sort_keys=True)
    return fingerprint(text)


class ResultCache:
    """``load``/``store`` of (coordinates, info) by key; a ``None`` directory caches nothing."""

    def __init__(self, directory: Path | None, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.directory = directory / "projections" if directory is not None else None
        self.max_bytes = max_bytes

    def load(self, key: str) -> tuple[np.ndarray, dict[str, Any]] | None:
        if self.directory is None:
            return None
        array_path = self.directory / f"{key}.npy"
        try:
            coordinates = np.load(array_path, allow_pickle=False)
            info = json.loads((self.directory / f"{key}.json").read_text())
            os.utime(array_path)  # recently used entries are pruned last
        except (OSError, ValueError):
            return None  # absent or damaged: computed again
        return coordinates, info

    def store(self, key: str, coordinates: np.ndarray, info: dict[str, Any]) -> None:
        if self.directory is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            # The info goes first: an array without its info is never read as complete.
            write_atomic(self.directory / f"{key}.json", json.dumps(info).encode())
            with atomic_file(self.directory / f"{key}.npy") as handle:
                np.save(handle, np.asarray(coordinates, np.float32), allow_pickle=False)
            self._prune()
        except OSError:
            return  # a read-only or full cache only costs recomputation

    def _prune(self) -> None:
        assert self.directory is not None
        arrays = sorted(self.directory.glob("*.npy"), key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in arrays)
        for path in arrays:
            if total <= self.max_bytes:
                break
            total -= path.stat().st_size
            path.unlink(missing_ok=True)
            path.with_suffix(".json").unlink(missing_ok=True)

