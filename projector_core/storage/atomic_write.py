"""Files and folders written whole under a hidden name beside their target, then renamed into
place, so a live reader (our own catalog and caches, TensorBoard) never sees half of one, and a
write that fails leaves nothing behind. Every file this project writes for others to read is
written here."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


class PendingFile:
    """A new, empty file under a hidden, unique name in ``target``'s folder (unique per
    writer, so threads and processes writing the same target never share one). ``commit``
    renames it onto ``target``; leaving the ``with`` block without committing removes it.
    For writers that keep their own handle (reopen, seek, copy by file descriptor)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        os.close(fd)
        self.path = Path(name)

    def commit(self) -> None:
        os.replace(self.path, self.target)

    def discard(self) -> None:
        """Remove the file unless it was committed (best effort: a cleanup never raises)."""
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> PendingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


@contextmanager
def atomic_file(target: Path) -> Iterator[BinaryIO]:
    """A binary handle whose content appears at ``target`` once the block ends without error."""
    with PendingFile(target) as pending:
        with pending.path.open("wb") as handle:
            yield handle
        pending.commit()


def write_atomic(target: Path, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or chunks of them) as the file ``target``, whole or not at all."""
    with atomic_file(target) as handle:
        for chunk in [data] if isinstance(data, bytes) else data:
            handle.write(chunk)


@contextmanager
def atomic_folder(target: Path) -> Iterator[Path]:
    """A new, empty hidden folder beside ``target`` to fill; once the block ends without error
    it is renamed onto ``target`` (an older folder there is moved aside, then removed). On an
    error it is removed and ``target`` is left as it was."""
    temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield temporary
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.replace(target, old / target.name)
        os.replace(temporary, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
