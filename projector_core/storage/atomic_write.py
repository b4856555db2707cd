"""Files written whole under a hidden name, then renamed into place, so a live reader (our own
catalog, TensorBoard) never sees half a file."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def temporary_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def write_atomic(target: Path, data: bytes | Iterable[bytes]) -> None:
    """Write a file whole under a hidden name, then rename it into place."""
    temporary = temporary_path(target)
    try:
        with temporary.open("wb") as handle:
            for chunk in [data] if isinstance(data, bytes) else data:
                handle.write(chunk)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
