"""The files of a static site: binaries as little-endian float32/int32 (gzip-compressed on
request, decompressed by the page with DecompressionStream, since a static host will not
add Content-Encoding for us), JSON as plain text, and the bytes written so far."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np

GZIP_LEVEL = 6  # zlib's default: most of level 9's size in a fraction of its time


class SiteFiles:
    """Writes under ``root``; every name it returns is relative to the site's root, with the
    ``.gz`` the file got."""

    def __init__(self, root: Path, compress: bool) -> None:
        self.root = root
        self.compress = compress
        self.total_bytes = 0
        self.count = 0

    def binary(self, name: str, data: bytes | np.ndarray) -> str:
        """A binary file (an array is written as its little-endian bytes), gzipped when asked."""
        if isinstance(data, np.ndarray):
            data = np.ascontiguousarray(data, data.dtype.newbyteorder("<")).tobytes()
        if self.compress:
            data = gzip.compress(data, GZIP_LEVEL, mtime=0)
            name += ".gz"
        return self._write(name, data)

    def text(self, name: str, text: str) -> str:
        """A text file the page reads as text (a TSV), gzipped when asked, as binaries are."""
        return self.binary(name, text.encode())

    def json(self, name: str, value: Any) -> str:
        """JSON, never compressed: the manifest must be readable before anything else."""
        return self._write(name, json.dumps(value, ensure_ascii=False, allow_nan=False).encode())

    def raw(self, name: str, data: bytes) -> str:
        """Bytes as they are (PNG pages are compressed already)."""
        return self._write(name, data)

    def _write(self, name: str, data: bytes) -> str:
        target = self.root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.total_bytes += len(data)
        self.count += 1
        return name
