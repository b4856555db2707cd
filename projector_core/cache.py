"""A binary cache of parsed tensors, outside LOGDIR (LOGDIR is read-only to us).

A 100k x 768 TSV takes seconds to parse; its ``.npy`` copy memory-maps in milliseconds. Entries
are keyed by the source file's resolved path, size and modification time, so a rewritten file is
parsed again and never served stale.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np
import platformdirs

_FORMAT_VERSION = "1"


def default_cache_dir() -> Path:
    """``$PROJECTOR_CACHE_DIR`` if set, else the user's cache directory."""
    configured = os.environ.get("PROJECTOR_CACHE_DIR")
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("projector"))


def file_fingerprint(path: Path) -> str:
    """A short hash that changes whenever the file at ``path`` is replaced or rewritten."""
    stat = path.stat()
    key = f"{_FORMAT_VERSION}|{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


class TensorCache:
    """Stores float32 matrices as ``.npy`` files named by the source's fingerprint."""

    def __init__(self, directory: Path | str | None) -> None:
        self.directory = Path(directory) if directory is not None else None

    def _path(self, fingerprint: str) -> Path | None:
        return self.directory / "tensors" / f"{fingerprint}.npy" if self.directory else None

    def load(self, fingerprint: str) -> np.ndarray | None:
        path = self._path(fingerprint)
        if path is None or not path.is_file():
            return None
        try:
            return np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError):
            return None  # a damaged cache entry is simply rebuilt

    def store(self, fingerprint: str, array: np.ndarray) -> None:
        """Write atomically (temp file + rename) so a reader never sees half a file."""
        path = self._path(fingerprint)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                np.save(handle, array, allow_pickle=False)
            os.replace(tmp, path)
        except OSError:
            return  # no writable cache: we still serve, just parse again next start
