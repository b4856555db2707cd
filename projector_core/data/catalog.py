"""Finds runs under LOGDIR (``discovery.py``: TensorBoard's rule) and keeps them current while
the server runs. ``refresh()`` re-reads only what changed: a rewritten config (a training run's
writer rewrites it at every step) reads only its new or changed entries again.

The first ``refresh()`` reads everything as it is. Later ones (``watching.py`` calls them when
files change) list a new or changed entry as ``loading`` at once, read it in the background and
show it only once its files are whole (``completeness.py``); a config that cannot be read yet,
or that lost entries in a rewrite, leaves the run as it was until the config settles. Every
change is published on ``events`` (``catalog_events.py``); what each read left behind, for the
next rescan to compare, is ``catalog_entries.py``'s. Memory stays bounded as steps pile up:
tensors stay in the cache's files, mapped when asked for (the few most recent kept), and
metadata equal across steps is held once.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

from projector_core.data.catalog_entries import Entry, RunFiles, listing
from projector_core.data.catalog_events import publish_changes, publish_progress
from projector_core.data.completeness import (
    Completeness,
    Settling,
    Signature,
    newest_write,
    pinned,
    signature,
)
from projector_core.data.discovery import CHECKPOINT_STATE, find_configs
from projector_core.data.embedding_files import EmbeddingFiles, PlainOptions, ProgressCallback, entry_name
from projector_core.data.loading import BackgroundLoader, LoadCancelled, Loading
from projector_core.data.model import AddedColumns, Embedding, Metadata, Run
from projector_core.data.steps import unlisted_steps_warning
from projector_core.errors import DataError, UnknownName, known
from projector_core.events import EventHub
from projector_core.formats.arrays import plain_array_files
from projector_core.formats.chunked import is_zarr
from projector_core.formats.config import EmbeddingInfo, ProjectorConfig, parse_config
from projector_core.storage.recent import Recent
from projector_core.storage.tensor_cache import TensorCache, default_cache_dir

__all__ = ["Catalog", "PlainOptions"]

KEEP_MAPPED = 4  # step tensors kept mapped (the newest, its predecessor, a comparison)


class Catalog:
    """The runs of one LOGDIR, loaded and checked, safe to read from many threads.

    LOGDIR may also be a plain array file (``.npy``, ``.npz``, ``.parquet``) or a folder of
    them without any config: then it is one run, ``.``, of those arrays. Runs held in memory
    (:mod:`projector_core.data.memory`: notebooks, uploads) are added with ``add_run``; with
    ``logdir=None`` they are the only runs.

    With ``background_bytes`` set, a tensor file at least that big and not yet cached is read
    on a background thread (``loading.py``) at the first refresh: its embedding is listed at
    once as loading, and ``on_loaded`` is called with the finished embedding (as for every
    entry read after the first refresh). ``completeness`` says how long files read while the
    server runs must stand still. Reading an embedding's files is ``embedding_files.py``'s;
    the catalog decides which runs and entries to read and when.
    """

    def __init__(self, logdir: Path | str | None, cache_dir: Path | None = None,
                 progress: ProgressCallback | None = None, plain: PlainOptions | None = None,
                 background_bytes: int | None = None,
                 on_loaded: Callable[[Embedding], None] | None = None,
                 events: EventHub | None = None,
                 completeness: Completeness | None = None) -> None:
        self.logdir = Path(logdir).resolve() if logdir is not None else None
        self.plain = plain or PlainOptions()
        self.cache = TensorCache(cache_dir if cache_dir is not None else default_cache_dir())
        self.files = EmbeddingFiles(self.cache, self.display, progress)
        self.background_bytes = background_bytes
        self.on_loaded = on_loaded
        self.events = events  # where changes are published (the server's stream)
        self.added: AddedColumns | None = None  # columns every listed embedding shows too
        self.completeness = completeness or Completeness()
        self._runs: dict[str, Run] = {}
        self._memory: dict[str, Run] = {}  # never re-scanned: they have no files
        self._read: dict[str, RunFiles] = {}  # what each LOGDIR run was read from
        self._settling = Settling()  # when files read while the server runs are shown
        self._mapped: Recent[str, np.ndarray] = Recent(KEEP_MAPPED)
        self._metadata: weakref.WeakValueDictionary[str, Metadata] = weakref.WeakValueDictionary()
        self._lock = threading.RLock()
        self._scanned = False  # the first scan shows files as they are; later ones wait for writes
        self._loader = BackgroundLoader()

    # -- lookups -----------------------------------------------------------------------------
    def runs(self) -> list[Run]:
        return list(self._runs.values())

    def run(self, name: str) -> Run:
        """The run, or :class:`UnknownName` listing the known ones."""
        try:
            return self._runs[name]
        except KeyError:
            raise UnknownName(f"unknown run {name!r} (runs: {known(list(self._runs))})") from None

    def embedding(self, run: str, name: str) -> Embedding:
        """The embedding, or :class:`UnknownName` naming what is unknown (and what is known)."""
        return self.run(run).embedding(name)

    def wait_loaded(self, timeout: float | None = None) -> bool:
        """Block until the background loads started so far are done; False on timeout."""
        return self._loader.wait_idle(timeout)

    def due(self) -> bool:
        """Whether something read earlier waits to be looked at again now (``refresh``):
        files that must stand still a while before they are shown."""
        return self._settling.due(time.monotonic())

    def add_run(self, run: Run) -> None:
        """Serve a run held in memory (it replaces a run of the same name)."""
        with self._lock:
            self._memory[run.name] = run
            self._set_runs({**self._runs, run.name: run})

    def remove_run(self, name: str) -> None:
        with self._lock:
            if self._memory.pop(name, None) is not None:
                self._set_runs({k: v for k, v in self._runs.items() if k != name})

    def add_columns(self, added: AddedColumns | None) -> None:
        """Every embedding listed, now and later, shows ``added``'s columns after its own
        (the annotation columns: ``data/added_columns.py``)."""
        with self._lock:
            self.added = added
            for run in self._runs.values():
                for embedding in run.embeddings:
                    embedding.added = added

    # -- loading -----------------------------------------------------------------------------
    def display(self, path: Path) -> str:
        """A path as shown in messages: relative to LOGDIR when inside it."""
        if self.logdir is None:
            return str(path)
        try:
            return str(path.relative_to(self.logdir))
        except ValueError:
            return str(path)

    def refresh(self) -> None:
        """Re-scan LOGDIR; re-read runs whose files changed, drop runs that disappeared."""
        with self._lock:
            now = time.monotonic()
            found: dict[str, list[Path]] = {}
            if self.logdir is not None and self.logdir.is_dir():
                for config in find_configs(self.logdir):
                    found.setdefault(config.run, []).append(config.path)
            if not found and self.logdir is not None and (
                    self.logdir.is_file() or is_zarr(self.logdir) or self.plain.shards
                    or plain_array_files(self.logdir)):
                found["."] = [self.logdir]
            runs: dict[str, Run] = {}
            for name, paths in found.items():
                old = self._runs.get(name)
                due = self._settling.due_at.get(name)
                if (old is not None and old.signature == self._signature(paths, old)
                        and (due is None or due > now)):
                    runs[name] = old
                    continue
                self._settling.due_at.pop(name, None)
                fresh = (self._load_plain_run(old, now) if paths == [self.logdir]
                         else self._load_run(name, paths, old, now))
                if fresh is not None:
                    runs[name] = fresh
                elif old is not None:
                    runs[name] = old  # kept until its config settles
            for gone in set(self._read) - set(runs):
                for entry in self._read.pop(gone).entries.values():
                    entry.stop_reading()
            self._settling.keep(found, {str(path) for paths in found.values() for path in paths})
            self._set_runs({**runs, **self._memory})
            self._scanned = True

    def _set_runs(self, runs: dict[str, Run]) -> None:
        """List ``runs``: stop the loads of embeddings no longer listed, publish the changes."""
        listed = {id(e) for run in runs.values() for e in run.embeddings}
        for run in runs.values():
            for embedding in run.embeddings:
                embedding.added = self.added
        for old in self._runs.values():
            for embedding in old.embeddings:
                if embedding.loading is not None and id(embedding) not in listed:
                    embedding.loading.cancelled = True
        before, self._runs = self._runs, runs
        if self.events is not None:
            publish_changes(self.events, before, runs, self.written)

    def _progressed(self, run: str, name: str, loading: Loading) -> None:
        """A background load got further: published, so that a page shows how far without
        asking (the hub may be attached after the first scan started the load)."""
        if self.events is not None:
            publish_progress(self.events, run, name, loading)

    def written(self, run: str, name: str) -> float | None:
        """When the files of ``run``'s embedding ``name`` were last written (seconds since the
        epoch); None for one not read from LOGDIR."""
        read = self._read.get(run)
        for entry in read.entries.values() if read is not None else ():
            if entry.listed.name == name:
                return newest_write(entry.files)
        return None

    def _signature(self, configs: list[Path], old: Run | None) -> Signature:
        """The configs and every file the run read last time, as they are now."""
        return signature([*configs, *(entry[0] for entry in old.signature)] if old else configs)

    def _load_run(self, name: str, configs: list[Path], old: Run | None, now: float) -> Run | None:
        """The run read from its configs; None to keep ``old`` while a config settles."""
        live = self._scanned
        errors: list[str] = []
        parsed: list[tuple[ProjectorConfig, Path | None, list[EmbeddingInfo]]] = []
        for path in configs:
            try:
                config = (ProjectorConfig(path=path) if path.name == CHECKPOINT_STATE
                          else parse_config(path, self.display(path)))
            except DataError as exc:
                wait = self.completeness.settle if old is not None else self.completeness.quiet
                if live and self._settling.young(name, path, signature([path]), wait, now):
                    return None  # perhaps half written: read again once it changes or settles
                errors.append(str(exc))
                continue
            checkpoint = self.files.checkpoint(config, errors)
            parsed.append((config, checkpoint, self.files.entries(config, checkpoint)))
        keys = [(str(config.path), entry_name(info, index), replace(info, where=""))
                for config, _, infos in parsed for index, info in enumerate(infos)]
        previous = self._read.get(name, RunFiles(()))
        if live and set(previous.entries) - set(keys) and any(
                self._settling.young(name, path, signature([path]), self.completeness.settle, now)
                for path in configs):
            return None  # a config rewritten in place can be read with its end missing
        read = RunFiles(signature(configs))
        self._read[name] = read
        run = Run(name=name, config=", ".join(self.display(p) for p in configs))
        keys_left = iter(keys)
        for config, checkpoint, infos in parsed:
            for index, info in enumerate(infos):
                key = next(keys_left)
                read.entries[key] = self._entry(name, key, config, info, index, checkpoint,
                                                previous.entries.get(key), now)
            unlisted = unlisted_steps_warning(config, self.display(config.path))
            if unlisted and config.path.name != CHECKPOINT_STATE:
                run.warnings.append(unlisted)
        for key, entry in previous.entries.items():
            if key not in read.entries:
                entry.stop_reading()
        run.error = "; ".join(errors) or None
        return listing(run, read)

    def _entry(self, run: str, key: tuple[str, str, EmbeddingInfo], config: ProjectorConfig,
               info: EmbeddingInfo, index: int, checkpoint: Path | None,
               previous: Entry | None, now: float) -> Entry:
        """The entry as last read when its files did not change; else read again: now at the
        first scan (a big tensor in the background), in the background afterwards, listed
        meanwhile as loading, or as it was when a read of it was shown before."""
        if previous is not None and signature(p for p, _, _ in previous.files) == previous.files:
            if previous.held is not None and not self._settling.wait_for(
                    run, previous.since, previous.wait, now):
                previous.listed, previous.held, previous.shown = previous.held, None, True
            return previous
        if previous is not None:
            previous.stop_reading()
        named = self.files.named_files(config, info, checkpoint)
        entry = Entry(listed=Embedding(run=run, name=key[1], fingerprint=""),
                       config=self.display(config.path), where=info.where,
                       files=signature(named), since=now,
                       shown=previous is not None and previous.shown)
        live = self._scanned
        slow = (None if self.background_bytes is None and not live
                else self.files.slow_tensor(config, info, self.background_bytes or 0))
        if slow is None and not live:
            read: list[Path] = []
            embedding = self.files.load_entry(run, config, info, index, read, checkpoint)
            entry.files, entry.listed, entry.shown = signature(read), self._kept(embedding), True
            return entry
        entry.reading = slow[1] if slow is not None else Loading(
            self.display(named[0]) if named else key[1], 0)
        entry.reading.listener = partial(self._progressed, run, key[1])
        entry.listed = previous.listed if previous is not None and entry.shown else Embedding(
            run=run, name=key[1], fingerprint="", loading=entry.reading,
            sources={"config": self.display(config.path), "tensor": entry.reading.source})
        self._loader.submit(partial(self._read_entry, run, key, entry, config, info, index,
                                    checkpoint, live))
        return entry

    def _read_entry(self, run: str, key: tuple[str, str, EmbeddingInfo], entry: Entry,
                    config: ProjectorConfig, info: EmbeddingInfo, index: int,
                    checkpoint: Path | None, gate: bool) -> None:
        """On the loader thread: read the entry, then list it (or hold it, ``gate``: until its
        files are whole), unless it was read again or dropped meanwhile."""
        loading = entry.reading
        assert loading is not None
        shown = None
        try:
            if loading.cancelled:
                raise LoadCancelled(loading.source)
            read: list[Path] = []
            try:
                with self.files.reporting_to(loading):
                    fresh = self.files.load_entry(run, config, info, index, read, checkpoint)
            except (LoadCancelled, KeyboardInterrupt):
                raise
            except Exception as exc:  # a reader's bug: reported, never "loading" for ever
                fresh = Embedding(run=run, name=key[1], fingerprint="",
                                  sources=entry.listed.sources,
                                  errors={"tensor": f"{loading.source}: could not be "
                                                    f"read: {exc!r}"})
            whole = pinned(info, fresh, read[0] if info.tensor_path and read else None)
            with self._lock:
                files = self._read.get(run)
                current = self._runs.get(run)
                if (loading.cancelled or current is None or files is None
                        or files.entries.get(key) is not entry):
                    raise LoadCancelled(loading.source)
                entry.reading = None
                known = {p for p, _, _ in entry.files}  # as seen before the read: a write
                entry.files = tuple(sorted(entry.files + signature(  # during it reads again
                    p for p in read if str(p) not in known)))
                shown = self._admit(run, entry, self._kept(fresh), whole, gate)
                self._set_runs({**self._runs, run: listing(current, files)})
        finally:
            loading.finished.set()
        if shown is not None and self.on_loaded is not None:
            self.on_loaded(shown)

    def _admit(self, run: str, entry: Entry, fresh: Embedding, whole: bool,
               gate: bool) -> Embedding | None:
        """List ``fresh`` for ``entry`` (returned), or hold it while its files may still be
        being written (``completeness.py``); the caller holds the lock."""
        wait = self.completeness.wait(fresh, whole, entry.shown) if gate else 0.0
        if not self._settling.wait_for(run, entry.since, wait, time.monotonic()):
            entry.listed, entry.held, entry.shown = fresh, None, True
            return fresh
        entry.held, entry.wait = fresh, wait
        if entry.shown:
            return None  # the read shown before stays listed meanwhile
        why = (f"not whole yet ({fresh.error}); shown as an error if its files stay as they "
               f"are for {wait:.0f} s" if fresh.errors else "its files are still changing")
        announced = entry.listed.loading.shape if entry.listed.loading is not None else None
        waiting = Loading(fresh.sources.get("tensor", fresh.name), 0, shape=announced, waiting=why)
        waiting.finished.set()  # nothing reads it: it is shown once its files stood still
        entry.listed = Embedding(run=run, name=fresh.name, fingerprint="", loading=waiting,
                                 sources=fresh.sources)
        return None

    def _kept(self, embedding: Embedding) -> Embedding:
        """The embedding holding only what it must in memory (see the module's docstring)."""
        embedding.keep_on_disk(self._mapped)
        embedding.share_metadata(self._metadata)
        return embedding

    def _load_plain_run(self, old: Run | None, now: float) -> Run | None:
        """Arrays given without a config (see ``EmbeddingFiles.load_plain``); None to keep
        ``old`` while a file of it is still being written."""
        assert self.logdir is not None
        whole = self.logdir.is_file() or is_zarr(self.logdir) or self.plain.shards
        files = [self.logdir] if whole else plain_array_files(self.logdir)
        if self._scanned and self._settling.young(".", self.logdir, signature(files),
                                                  self.completeness.settle, now):
            return old
        read: list[Path] = []
        run = self.files.load_plain(self.logdir, files, self.plain, read)
        for embedding in run.embeddings:
            self._kept(embedding)
        run.signature = signature(read)
        return run
