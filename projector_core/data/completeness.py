"""When an embedding written while the server runs is shown: only once its files are whole.

A writer still flushing (a TSV half written, the config rewritten before the tensor, a
``.bytes`` file growing) must never be shown broken, nor as a partial tensor. What the catalog
reads while the server runs (not at start: files at rest are shown as they are) passes here:

- read with an error: held, listed as ``loading``, until its files have stood still for
  ``quiet`` seconds (60 by default); then the error is shown, naming the file, as for any
  broken input. An entry shown before (a file rewritten, deleted, broken by hand) keeps its
  last read listed meanwhile, and its error is shown after ``settle`` seconds;
- read whole and **pinned**, its size stated by something written before it and matched (the
  config's ``tensor_shape``, the metadata's rows, a ``.npy`` header, a checkpoint's index; a
  TSV must also end in a line break, or its last number may be cut): shown at once;
- read whole but not pinned (a TSV alone, whose next rows may still come): shown once its files
  have stood still for ``settle`` seconds (1 by default).

Each change of its files reads the entry again, so a step appears as soon as it is whole. Time
counts from when the catalog first saw the files as they are now (size and mtime), never from
their mtime: a network file system's clock may disagree with ours.
"""

from __future__ import annotations

import os
from collections.abc import Container, Iterable
from dataclasses import dataclass
from pathlib import Path

from projector_core.data.model import Embedding
from projector_core.formats.config import EmbeddingInfo

SETTLE_SECONDS = 1.0
QUIET_SECONDS = 60.0

Signature = tuple[tuple[str, int, int], ...]  # (path, size, mtime_ns); -1s for a missing file


def signature(paths: Iterable[Path | str]) -> Signature:
    """Size and modification time of each file: what tells that one changed (a stat each)."""
    entries = []
    for path in sorted({str(p) for p in paths}):
        try:
            stat = os.stat(path)
            entries.append((path, stat.st_size, stat.st_mtime_ns))
        except OSError:
            entries.append((path, -1, -1))
    return tuple(entries)


def newest_write(files: Signature) -> float | None:
    """When the newest of these files was written (seconds since the epoch)."""
    times = [mtime for _, _, mtime in files if mtime >= 0]
    return max(times) / 1e9 if times else None


def pinned(info: EmbeddingInfo, embedding: Embedding, tensor: Path | None) -> bool:
    """Whether the tensor read is the whole tensor: its size was stated beside it and it has
    that size (the read checked it), or its own header states it."""
    if tensor is None or tensor.suffix.lower() == ".npy" or tensor.is_dir():
        return True  # a checkpoint's index, a .npy header, a chunked array's metadata
    if not info.tensor_shape and "metadata" not in embedding.sources:
        return False
    return tensor.suffix.lower() == ".bytes" or _ends_a_line(tensor)


def _ends_a_line(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) == b"\n"
    except OSError:
        return False


@dataclass(frozen=True)
class Completeness:
    """How long files read while the server runs must stand still before they are shown."""

    settle: float = SETTLE_SECONDS
    quiet: float = QUIET_SECONDS

    def wait(self, embedding: Embedding, is_pinned: bool, shown_before: bool) -> float:
        """Seconds its files must stand still before ``embedding``, as read, is shown."""
        if embedding.errors and not shown_before:
            return self.quiet
        return 0.0 if is_pinned and not embedding.errors else self.settle


class Settling:
    """Files read while the server runs, timed as they stand still: since when the catalog has
    seen each config (or folder of plain arrays) as it is now, and when each run waits to be
    looked at again (``Catalog.refresh``)."""

    def __init__(self) -> None:
        self.due_at: dict[str, float] = {}  # run -> when (monotonic) to look at it again
        self._seen: dict[str, tuple[Signature, float]] = {}  # path -> (as seen, since)

    def due(self, now: float) -> bool:
        """Whether some run waits to be looked at again by ``now``."""
        return any(when <= now for when in list(self.due_at.values()))

    def wait_for(self, run: str, since: float, wait: float, now: float) -> bool:
        """Whether files seen unchanged since ``since`` must stand still longer; if so the run
        is looked at again when they have stood ``wait`` seconds."""
        if now - since >= wait:
            return False
        self.due_at[run] = min(self.due_at.get(run, since + wait), since + wait)
        return True

    def young(self, run: str, path: Path, files: Signature, wait: float, now: float) -> bool:
        """Whether ``files`` (a config, or plain arrays: ``path``) changed less than ``wait``
        seconds ago, as far as the catalog saw them change."""
        seen, since = self._seen.get(str(path), ((), now))
        if seen != files:
            since = now
        self._seen[str(path)] = (files, since)
        return self.wait_for(run, since, wait, now)

    def keep(self, runs: Container[str], paths: Container[str]) -> None:
        """Forget the runs and the configs' paths no longer found."""
        self.due_at = {name: when for name, when in self.due_at.items() if name in runs}
        self._seen = {path: seen for path, seen in self._seen.items() if path in paths}
