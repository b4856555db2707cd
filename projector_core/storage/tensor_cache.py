"""A binary cache of parsed tensors, outside LOGDIR (LOGDIR is read-only to us).

A 100k x 768 TSV takes seconds to parse; its ``.npy`` copy memory-maps in milliseconds. Entries
are keyed by the source file's resolved path, size, modification time and inode, so a rewritten
or replaced file is parsed again and never served stale.

Entries are only ever replaced by rename, so a memory map of one stays valid; a map of the
user's own file would not (a rewrite truncates it, and the next read is SIGBUS for the whole
server). Binary inputs (``.bytes``, float32 ``.npy``) therefore become entries by
``copy_file_range``: on filesystems with shared extents (btrfs, XFS, ...) the kernel makes that
a reflink, a copy-on-write clone that costs neither time nor space; elsewhere it is a copy done
inside the kernel, on the background loader, with progress.
"""

from __future__ import annotations

import contextlib
import os
import struct
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import platformdirs

from projector_core.storage.atomic_write import PendingFile, atomic_file
from projector_core.storage.fingerprint import fingerprint

_FORMAT_VERSION = "1"
HEADER_BYTES = 4096  # data starts on a block boundary, so a clone of the data shares extents
COPY_STEP = 64 * 2**20  # progress is reported every this many bytes copied
_NPY_MAGIC = b"\x93NUMPY\x01\x00"

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


def npy_header(shape: tuple[int, int]) -> bytes:
    """A ``.npy`` (version 1.0) header for float32 rows, padded to HEADER_BYTES."""
    text = repr({"descr": "<f4", "fortran_order": False, "shape": tuple(shape)}).encode("latin1")
    size = HEADER_BYTES - len(_NPY_MAGIC) - 2
    return _NPY_MAGIC + struct.pack("<H", size) + text.ljust(size - 1) + b"\n"


def default_cache_dir() -> Path:
    """``$PROJECTOR_CACHE_DIR`` if set, else the user's cache directory."""
    configured = os.environ.get("PROJECTOR_CACHE_DIR")
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("projector"))


def unwritable(directory: Path) -> str | None:
    """Why nothing can be cached under ``directory`` (None when it can): made if missing, then
    a file written and removed there, as every cache entry will be."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".write-check."):
            pass
    except OSError as error:
        return error.strerror or str(error)
    return None


def file_fingerprint(path: Path) -> str:
    """A short hash that changes whenever the file at ``path`` is replaced or rewritten: from
    its path, size, modification time and inode (a file put in place by a copy that keeps the
    time, ``cp -p`` or ``rsync -t``, has another inode), never from its content, so a cached
    start costs one ``stat``, not a read of the file."""
    stat = path.stat()
    return fingerprint(
        _FORMAT_VERSION, path.resolve(), stat.st_size, stat.st_mtime_ns, stat.st_ino
    )


class TensorCache:
    """Stores float32 matrices as ``.npy`` files named by the source's fingerprint."""

    def __init__(self, directory: Path | str | None) -> None:
        self.directory = Path(directory) if directory is not None else None

    def _path(self, fingerprint: str) -> Path | None:
        return self.directory / "tensors" / f"{fingerprint}.npy" if self.directory else None

    def contains(self, fingerprint: str) -> bool:
        path = self._path(fingerprint)
        return path is not None and path.is_file()

    def load(self, fingerprint: str) -> np.ndarray | None:
        path = self._path(fingerprint)
        if path is None or not path.is_file():
            return None
        try:
            mapped: np.ndarray = np.load(path, mmap_mode="r", allow_pickle=False)
            return mapped
        except (OSError, ValueError):
            return None  # a damaged cache entry is simply rebuilt

    def discard(self, fingerprint: str) -> None:
        path = self._path(fingerprint)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def _pending(self, fingerprint: str) -> PendingFile | None:
        """A new file that becomes the entry on commit, or None when there is no usable cache."""
        path = self._path(fingerprint)
        if path is None:
            return None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return PendingFile(path)
        except OSError:
            return None

    def store_blocks(self, fingerprint: str, blocks: Iterable[np.ndarray]) -> np.ndarray:
        """Write float32 row blocks into a new entry as they arrive (no second pass over the
        data) and give the entry memory-mapped; without a usable cache, the blocks joined in
        memory. An error raised by ``blocks`` leaves no entry behind."""
        pending = self._pending(fingerprint)
        handle = None
        if pending is not None:
            handle = pending.path.open("r+b")
            handle.write(bytes(HEADER_BYTES))
        kept: list[np.ndarray] = []
        rows, cols = 0, 0
        try:
            for block in blocks:
                cols = block.shape[1]
                if handle is not None:
                    try:
                        handle.write(np.ascontiguousarray(block, "<f4").data)
                        rows += len(block)
                        continue
                    except OSError:  # disk full: keep what was written, go on in memory
                        handle.flush()
                        kept.append(np.fromfile(handle.name, "<f4", rows * cols, offset=HEADER_BYTES)
                                    .reshape(rows, cols))
                        handle.close()
                        handle = None
                kept.append(block)
                rows += len(block)
            if handle is not None and pending is not None:
                handle.seek(0)
                handle.write(npy_header((rows, cols)))
                handle.close()
                handle = None
                pending.commit()
                stored = self.load(fingerprint)
                if stored is not None:
                    return stored
                kept = [np.load(pending.target, allow_pickle=False)]
        finally:
            if handle is not None:
                handle.close()
            if pending is not None:
                pending.discard()
        return np.concatenate(kept) if len(kept) > 1 else kept[0]

    def store_copy(self, fingerprint: str, source: int, size: int, header: bytes | None,
                   progress: Progress | None = None) -> np.ndarray | None:
        """Make an entry from ``size`` bytes of the open file ``source``: after ``header`` (for
        raw float32 rows) or as they are (a file that already is a float32 ``.npy``). None when
        there is no usable cache."""
        pending = self._pending(fingerprint)
        if pending is None:
            return None
        try:
            with pending:
                with pending.path.open("r+b") as handle:
                    start = 0
                    if header is not None:
                        handle.write(header)
                        handle.flush()
                        start = len(header)
                    _copy_range(source, handle.fileno(), size, start, progress)
                pending.commit()
        except OSError:
            return None
        return self.load(fingerprint)

    def store(self, fingerprint: str, array: np.ndarray) -> None:
        """Write atomically (temp file + rename) so a reader never sees half a file."""
        path = self._path(fingerprint)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with atomic_file(path) as handle:
                np.save(handle, array, allow_pickle=False)
        except OSError:
            return  # no writable cache: we still serve, just parse again next start


def _copy_range(source: int, target: int, size: int, at: int, progress: Progress | None) -> None:
    """Copy ``size`` bytes from the start of ``source`` to offset ``at`` of ``target``, by the
    kernel (a reflink where the filesystem can), falling back to reads and writes."""
    done = 0
    while done < size:
        step = min(COPY_STEP, size - done)
        try:
            copied = os.copy_file_range(source, target, step, done, at + done)
        except OSError:  # not across these filesystems, or not on this kernel
            copied = os.pwrite(target, os.pread(source, step, done), at + done)
        if copied == 0:
            raise OSError(f"the source ended after {done} of {size} bytes")
        done += copied
        if progress:
            progress(done, size)
