"""LOGDIR watched while the server runs: told of changes, not polling for them.

The operating system tells of new and changed files (inotify, FSEvents, ReadDirectoryChangesW,
through ``watchfiles``); each batch of changes re-reads what changed (``Catalog.refresh``, which
publishes the changes as events). File systems that tell nothing of changes made elsewhere
(NFS, SMB, sshfs and other network mounts) are polled instead: ``mode="auto"`` finds them in
the mount table (Linux), ``mode="poll"`` asks for polling anywhere (as does watchfiles'
``WATCHFILES_FORCE_POLLING``), and notifications that cannot start (the watch limit reached)
fall back to polling too.

Between changes the watcher wakes every ``tick`` seconds only to give the catalog what it waits
for: files that must stand still a while before they are shown (``completeness.py``).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Literal

import watchfiles

from projector_core.data.catalog import Catalog

log = logging.getLogger("projector")

WatchMode = Literal["auto", "notify", "poll"]
WATCH_MODES: tuple[WatchMode, ...] = ("auto", "notify", "poll")
TICK_SECONDS = 0.25
DEBOUNCE_MS = 400  # the most a batch of changes is held back while writes go on
MOUNT_TABLE = Path("/proc/self/mountinfo")
# File systems whose changes made by other machines no local notification reports.
UNTOLD = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "afs", "ceph", "glusterfs",
                    "lustre", "gpfs", "beegfs", "panfs", "davfs", "fuse.sshfs", "fuse.s3fs",
                    "fuse.gcsfuse", "fuse.rclone", "fuse.glusterfs", "fuse.cephfs",
                    "fuse.juicefs", "fuse.davfs2", "vboxsf", "prl_fs"})


def file_system(path: Path, mount_table: Path = MOUNT_TABLE) -> str | None:
    """The type of the file system holding ``path`` (Linux: from the mount table); None when
    unknown."""
    try:
        lines = mount_table.read_text().splitlines()
    except OSError:
        return None
    target = os.path.realpath(path)
    best, kind = "", None
    for line in lines:
        mounted, _, after = line.partition(" - ")
        fields = mounted.split()
        if len(fields) < 5 or not after:
            continue
        point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, after.split()[0]
    return kind


def polls(path: Path, mode: WatchMode) -> bool | None:
    """Whether to poll ``path``: True or False, or None to leave it to watchfiles (which polls
    where ``WATCHFILES_FORCE_POLLING`` is set, and on WSL's Windows drives)."""
    if mode != "auto":
        return mode == "poll"
    return True if file_system(path) in UNTOLD else None


def _wanted(change: watchfiles.Change, path: str) -> bool:
    """Changes that can matter to the catalog: not a writer's hidden file before its rename
    (``storage/atomic_write.py``), nor TensorBoard's event files, which it never reads."""
    name = os.path.basename(path)
    return not name.startswith(".") and not name.startswith("events.out.tfevents.")


class LogdirWatcher:
    """A daemon thread refreshing ``catalog`` when its LOGDIR changes, until ``stop()``."""

    def __init__(self, catalog: Catalog, mode: WatchMode = "auto", poll_seconds: float = 1.0,
                 tick: float = TICK_SECONDS) -> None:
        if catalog.logdir is None:
            raise ValueError("a catalog without a LOGDIR has nothing to watch")
        self.catalog = catalog
        self.target = catalog.logdir if catalog.logdir.is_dir() else catalog.logdir.parent
        self.polling = polls(self.target, mode)
        self.poll_seconds = poll_seconds
        self.tick = tick
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="logdir-watcher", daemon=True)

    @property
    def mode(self) -> str:
        """What it does: "notify" (told by the system) or "poll"."""
        return "poll" if self.polling else "notify"

    def start(self) -> LogdirWatcher:
        self._thread.start()
        return self

    def stop(self, timeout: float = 10) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._watch()
            except Exception as exc:  # notifications refused (watch limit), LOGDIR gone...
                if self.polling:
                    log.exception("watching %s failed; trying again", self.target)
                    self._stop.wait(self.poll_seconds)
                else:
                    log.warning("cannot be told of changes under %s (%s); polling every "
                                "%.1f s instead", self.target, exc, self.poll_seconds)
                    self.polling = True

    def _watch(self) -> None:
        """Until stopped: refresh on every batch of changes, and when the catalog is due. The
        first wake-up refreshes too: a change made before the watch began is seen then."""
        first = True
        for changes in watchfiles.watch(
                self.target, watch_filter=_wanted, debounce=DEBOUNCE_MS, step=50,
                stop_event=self._stop, rust_timeout=max(1, int(self.tick * 1000)),
                yield_on_timeout=True, raise_interrupt=False, force_polling=self.polling,
                poll_delay_ms=max(1, int(self.poll_seconds * 1000)),
                ignore_permission_denied=True):
            if changes or first or self.catalog.due():
                first = False
                self._refresh()

    def _refresh(self) -> None:
        try:
            self.catalog.refresh()
        except Exception:  # a scan must never stop the watching; the next change retries
            log.exception("refreshing %s failed", self.catalog.logdir)
