"""Finds runs under LOGDIR and keeps them current while the server runs.

Discovery follows TensorBoard: every folder holding a ``projector_config.pbtxt`` (or the
standalone ``projector_config.json``) at any depth is a run named by its path relative to LOGDIR
(``.`` for LOGDIR itself); a config inside ``RUN/plugins/org_tensorflow_tensorboard_projector/``
belongs to RUN. ``refresh()`` re-reads only runs whose files changed, and leaves alone files
modified in the last moment (they may still be being written).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from projector_core.data.embedding_files import EmbeddingFiles, PlainOptions, ProgressCallback, entry_name
from projector_core.data.loading import BackgroundLoader, LoadCancelled
from projector_core.data.model import Embedding, Run
from projector_core.data.steps import unlisted_steps
from projector_core.errors import DataError
from projector_core.formats.arrays import plain_array_files
from projector_core.formats.chunked import is_zarr
from projector_core.formats.config import (
    CONFIG_NAMES,
    PLUGIN_DIR,
    EmbeddingInfo,
    ProjectorConfig,
    parse_config,
)
from projector_core.storage.tensor_cache import TensorCache, default_cache_dir

__all__ = ["Catalog", "PlainOptions", "find_configs"]

CHECKPOINT_STATE = "checkpoint"  # TensorFlow's text file naming the latest checkpoint
SETTLE_SECONDS = 1.0  # a file younger than this may still be being written


@dataclass(frozen=True)
class _ConfigFile:
    run: str
    path: Path


def _run_name(logdir: Path, folder: Path) -> str:
    relative = folder.relative_to(logdir).parts
    if relative[-len(PLUGIN_DIR):] == PLUGIN_DIR:
        relative = relative[: -len(PLUGIN_DIR)]
    return "/".join(relative) or "."


def find_configs(logdir: Path) -> Iterator[_ConfigFile]:
    """Every config under ``logdir``, in a stable order; symlinked folders are not followed."""
    for folder, dirs, files in os.walk(logdir):
        dirs.sort()
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        configs = [name for name in CONFIG_NAMES if name in files]
        if not configs and CHECKPOINT_STATE in files:
            configs = [CHECKPOINT_STATE]  # a TF checkpoint alone is a run, as in TensorBoard
        for name in configs:
            yield _ConfigFile(_run_name(logdir, Path(folder)), Path(folder) / name)


class Catalog:
    """The runs of one LOGDIR, loaded and checked, safe to read from many threads.

    LOGDIR may also be a plain array file (``.npy``, ``.npz``, ``.parquet``) or a folder of
    them without any config: then it is one run, ``.``, of those arrays. Runs held in memory
    (:mod:`projector_core.data.memory`: notebooks, uploads) are added with ``add_run``; with
    ``logdir=None`` they are the only runs.

    With ``background_bytes`` set, a tensor file at least that big and not yet cached is read
    on a background thread (``loading.py``): its embedding is listed at once as loading, and
    ``on_loaded`` is called with the finished embedding. Reading an embedding's files is
    ``embedding_files.py``'s; the catalog decides which runs to read and when.
    """

    def __init__(self, logdir: Path | str | None, cache_dir: Path | None = None,
                 progress: ProgressCallback | None = None, plain: PlainOptions | None = None,
                 background_bytes: int | None = None,
                 on_loaded: Callable[[Embedding], None] | None = None) -> None:
        self.logdir = Path(logdir).resolve() if logdir is not None else None
        self.plain = plain or PlainOptions()
        self.cache = TensorCache(cache_dir if cache_dir is not None else default_cache_dir())
        self.files = EmbeddingFiles(self.cache, self.display, progress)
        self.background_bytes = background_bytes
        self.on_loaded = on_loaded
        self._runs: dict[str, Run] = {}
        self._memory: dict[str, Run] = {}  # never re-scanned: they have no files
        self._lock = threading.Lock()
        self._scanned = False  # the first scan loads everything; later ones wait for writes to settle
        self._loader = BackgroundLoader()

    # -- lookups -----------------------------------------------------------------------------
    def runs(self) -> list[Run]:
        return list(self._runs.values())

    def run(self, name: str) -> Run:
        return self._runs[name]

    def embedding(self, run: str, name: str) -> Embedding:
        return self._runs[run].embedding(name)

    def wait_loaded(self, timeout: float | None = None) -> bool:
        """Block until the background loads started so far are done; False on timeout."""
        return self._loader.wait_idle(timeout)

    def add_run(self, run: Run) -> None:
        """Serve a run held in memory (it replaces a run of the same name)."""
        with self._lock:
            self._memory[run.name] = run
            self._runs = {**self._runs, run.name: run}

    def remove_run(self, name: str) -> None:
        with self._lock:
            if self._memory.pop(name, None) is not None:
                self._runs = {k: v for k, v in self._runs.items() if k != name}

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
        """Re-scan LOGDIR; rebuild runs whose files changed, drop runs that disappeared."""
        with self._lock:
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
                signature = self._signature(paths, old)
                if old is not None and old.signature == signature:
                    runs[name] = old
                    continue
                fresh = None if self._scanned and self._settling(signature) else self._load_run(name, paths)
                if fresh is not None and self._scanned and self._settling(fresh.signature):
                    fresh = None  # a file it read is still being written: try again next scan
                if fresh is not None:
                    runs[name] = fresh
                elif old is not None:
                    runs[name] = old
            for old in self._runs.values():
                if runs.get(old.name) is not old:  # replaced or gone: stop its loads
                    for embedding in old.embeddings:
                        if embedding.loading is not None:
                            embedding.loading.cancelled = True
            self._runs = {**runs, **self._memory}
            self._scanned = True

    def _signature(self, configs: list[Path], old: Run | None) -> tuple[tuple[str, int, int], ...]:
        """Size and mtime of the configs and of every file the run read last time."""
        paths = {str(p) for p in configs}
        if old is not None:
            paths.update(s[0] for s in old.signature)
        entries = []
        for path in sorted(paths):
            try:
                stat = os.stat(path)
                entries.append((path, stat.st_size, stat.st_mtime_ns))
            except OSError:
                entries.append((path, -1, -1))
        return tuple(entries)

    @staticmethod
    def _settling(signature: tuple[tuple[str, int, int], ...]) -> bool:
        newest = max(mtime for _, _, mtime in signature)
        return time.time() - newest / 1e9 < SETTLE_SECONDS

    def _load_run(self, name: str, configs: list[Path]) -> Run:
        if configs == [self.logdir]:
            return self._load_plain_run()
        run = Run(name=name, config=", ".join(self.display(p) for p in configs))
        read: list[Path] = list(configs)
        errors = []
        for path in configs:
            try:
                config = (ProjectorConfig(path=path) if path.name == CHECKPOINT_STATE
                          else parse_config(path, self.display(path)))
            except DataError as exc:
                errors.append(str(exc))
                continue
            checkpoint = self.files.checkpoint(config, errors)
            seen: dict[str, str] = {}
            for index, info in enumerate(self.files.entries(config, checkpoint)):
                embedding = self._load_or_defer(run, config, info, index, read, checkpoint)
                if embedding.name in seen:
                    embedding.errors["config"] = (
                        f"{self.display(path)} {info.where}: duplicate tensor_name "
                        f"{embedding.name!r} (also {seen[embedding.name]})")
                seen.setdefault(embedding.name, info.where)
                run.embeddings.append(embedding)
            self._say_unlisted_steps(run, path, config)
        run.error = "; ".join(errors) or None
        run.signature = self._signature(read, None)
        return run

    def _say_unlisted_steps(self, run: Run, path: Path, config: ProjectorConfig) -> None:
        listed = {(config.folder / info.tensor_path).resolve()
                  for info in config.embeddings if info.tensor_path}
        unlisted = unlisted_steps(config.folder, listed)
        if unlisted and path.name != CHECKPOINT_STATE:
            shown = ", ".join(unlisted[:5]) + (f" and {len(unlisted) - 5} more" if len(unlisted) > 5
                                               else "")
            run.warnings.append(
                f"{self.display(path)} does not list the tensors in {shown}: a SummaryWriter "
                "opened again on this run rewrote the config with its own steps only "
                "(TensorBoard does not show them either); write every step with one writer")

    def _load_plain_run(self) -> Run:
        """Arrays given without a config (see ``EmbeddingFiles.load_plain``)."""
        assert self.logdir is not None
        whole = self.logdir.is_file() or is_zarr(self.logdir) or self.plain.shards
        read: list[Path] = []
        run = self.files.load_plain(self.logdir, [self.logdir] if whole
                                    else plain_array_files(self.logdir), self.plain, read)
        run.signature = self._signature(read, None)
        return run

    def _load_or_defer(self, run: Run, config: ProjectorConfig, info: EmbeddingInfo, index: int,
                       read: list[Path], checkpoint: Path | None) -> Embedding:
        """The embedding loaded now, or a loading placeholder for a big tensor not yet cached
        that the background loader replaces with the loaded embedding."""
        slow = (None if self.background_bytes is None
                else self.files.slow_tensor(config, info, self.background_bytes))
        if slow is None:
            return self.files.load_entry(run.name, config, info, index, read, checkpoint)
        path, loading = slow
        read.append(path)
        placeholder = Embedding(run=run.name, name=entry_name(info, index),
                                fingerprint="", loading=loading,
                                sources={"config": self.display(config.path),
                                         "tensor": loading.source})

        def load() -> None:
            later: list[Path] = []
            try:
                try:
                    with self.files.reporting_to(loading):
                        fresh = self.files.load_entry(run.name, config, info, index, later,
                                                      checkpoint)
                except (LoadCancelled, KeyboardInterrupt):
                    raise
                except Exception as exc:  # a reader's bug: reported, never "loading" for ever
                    fresh = Embedding(run=run.name, name=placeholder.name, fingerprint="",
                                      sources=placeholder.sources,
                                      errors={"tensor": f"{loading.source}: could not be "
                                                        f"read: {exc!r}"})
                if loading.cancelled:
                    raise LoadCancelled(loading.source)
                with self._lock:
                    run.embeddings = [fresh if e is placeholder else e for e in run.embeddings]
                    run.signature = self._signature(
                        [Path(entry[0]) for entry in run.signature] + later, None)
            finally:
                loading.finished.set()
            if self.on_loaded is not None:
                self.on_loaded(fresh)

        self._loader.submit(load)
        return placeholder
