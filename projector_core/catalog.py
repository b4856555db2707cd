"""Finds runs under LOGDIR and keeps them current while the server runs.

Discovery follows TensorBoard: every folder holding a ``projector_config.pbtxt`` (or the
standalone ``projector_config.json``) at any depth is a run named by its path relative to LOGDIR
(``.`` for LOGDIR itself); a config inside ``RUN/plugins/org_tensorflow_tensorboard_projector/``
belongs to RUN. ``refresh()`` re-reads only runs whose files changed, and leaves alone files
modified in the last moment (they may still be being written).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from projector_core.cache import TensorCache, default_cache_dir, file_fingerprint
from projector_core.errors import DataError
from projector_core.formats.arrays import PlainEmbedding, plain_array_files, read_plain_array
from projector_core.formats.bookmarks import parse_bookmarks
from projector_core.formats.chunked import ChunkedVectors, is_chunked, is_zarr, open_chunked
from projector_core.formats.config import (
    CONFIG_NAMES,
    EmbeddingInfo,
    ProjectorConfig,
    parse_config,
    resolve_asset,
)
from projector_core.formats.metadata import Metadata, read_metadata
from projector_core.formats.sprite import check_sprite
from projector_core.formats.tensor_files import npy_layout
from projector_core.formats.tf_checkpoint import embedding_variables, find_checkpoint, read_variable
from projector_core.ingest import ingest, rows_with_nan_or_inf, tensor_key
from projector_core.loading import BackgroundLoader, LoadCancelled, Loading
from projector_core.model import Embedding, Run

PLUGIN_DIR = ("plugins", "org_tensorflow_tensorboard_projector")
CHECKPOINT_STATE = "checkpoint"  # TensorFlow's text file naming the latest checkpoint
SETTLE_SECONDS = 1.0  # a file younger than this may still be being written

# Reports loading progress: (what, done, total); total 0 means "unknown".
ProgressCallback = Callable[[str, int, int], None]


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


@dataclass(frozen=True)
class PlainOptions:
    """What the command line adds to plain array files that carry no config."""

    metadata: Path | None = None
    sprite: Path | None = None
    sprite_dim: tuple[int, int] | None = None
    vector_column: str | None = None
    shards: bool = False  # LOGDIR is a folder of .npy row shards of one embedding


class Catalog:
    """The runs of one LOGDIR, loaded and checked, safe to read from many threads.

    LOGDIR may also be a plain array file (``.npy``, ``.npz``, ``.parquet``) or a folder of
    them without any config: then it is one run, ``.``, of those arrays. Runs held in memory
    (:mod:`projector_core.memory`: notebooks, uploads) are added with ``add_run``; with
    ``logdir=None`` they are the only runs.

    With ``background_bytes`` set, a tensor file at least that big and not yet cached is read
    on a background thread (``loading.py``): its embedding is listed at once as loading, and
    ``on_loaded`` is called with the finished embedding.
    """

    def __init__(self, logdir: Path | str | None, cache_dir: Path | None = None,
                 progress: ProgressCallback | None = None, plain: PlainOptions | None = None,
                 background_bytes: int | None = None,
                 on_loaded: Callable[[Embedding], None] | None = None) -> None:
        self.logdir = Path(logdir).resolve() if logdir is not None else None
        self.plain = plain or PlainOptions()
        self.cache = TensorCache(cache_dir if cache_dir is not None else default_cache_dir())
        self.progress = progress
        self.background_bytes = background_bytes
        self.on_loaded = on_loaded
        self._runs: dict[str, Run] = {}
        self._memory: dict[str, Run] = {}  # never re-scanned: they have no files
        self._lock = threading.Lock()
        self._scanned = False  # the first scan loads everything; later ones wait for writes to settle
        self._loader = BackgroundLoader()
        self._loading_here = threading.local()  # the Loading the current thread reports to

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
            checkpoint = self._find_checkpoint(config, errors)
            seen: dict[str, str] = {}
            for index, info in enumerate(self._with_checkpoint_entries(config, checkpoint)):
                embedding = self._load_or_defer(run, config, info, index, read, checkpoint)
                if embedding.name in seen:
                    embedding.errors["config"] = (
                        f"{self.display(path)} {info.where}: duplicate tensor_name "
                        f"{embedding.name!r} (also {seen[embedding.name]})")
                seen.setdefault(embedding.name, info.where)
                run.embeddings.append(embedding)
        run.error = "; ".join(errors) or None
        run.signature = self._signature(read, None)
        return run

    def _load_plain_run(self) -> Run:
        """Arrays given without a config; metadata and sprite from the command line, if any."""
        whole = self.logdir.is_file() or is_zarr(self.logdir) or self.plain.shards
        files = [self.logdir] if whole else plain_array_files(self.logdir)
        read = list(files)
        run = Run(name=".", config="(plain arrays)")
        try:
            found = ([PlainEmbedding(self.logdir.stem, open_chunked(self.logdir, str(self.logdir)),
                                     None)] if is_zarr(self.logdir) or self.plain.shards
                     else read_plain_array(self.logdir, self.plain.vector_column))
        except DataError as exc:
            run.error = str(exc)
            found = []
        for plain in found:
            embedding = Embedding(run=".", name=plain.name, fingerprint="")
            embedding.sources["tensor"] = self.display(self.logdir)
            tensor_hash = hashlib.sha256(f"{[file_fingerprint(f) for f in files]}|{plain.name}"
                                         .encode()).hexdigest()[:32]
            if isinstance(plain.vectors, ChunkedVectors):  # lazy: never copied into the cache
                tensor_hash = plain.vectors.fingerprint
                embedding._vectors = plain.vectors
            else:
                cached = self.cache.load(tensor_hash)
                embedding._vectors = cached if cached is not None else self._own_copy(
                    tensor_hash, plain.vectors)
            n_points = int(plain.vectors.shape[0])
            try:
                if self.plain.metadata is not None and len(found) == 1:
                    read.append(self.plain.metadata)
                    embedding.sources["metadata"] = str(self.plain.metadata)
                    embedding._metadata = read_metadata(self.plain.metadata,
                                                        str(self.plain.metadata), n_points)
                elif plain.metadata_columns:
                    embedding._metadata = Metadata.from_columns(plain.metadata_columns)
            except DataError as exc:
                embedding.errors["metadata"] = str(exc)
            if self.plain.sprite is not None and len(found) == 1:
                read.append(self.plain.sprite)
                embedding.sources["sprite"] = str(self.plain.sprite)
                try:
                    embedding.sprite = check_sprite(self.plain.sprite, str(self.plain.sprite),
                                                    self.plain.sprite_dim or (), n_points,
                                                    embedding.warnings)
                except DataError as exc:
                    embedding.errors["sprite"] = str(exc)
            embedding.fingerprint = tensor_hash
            run.embeddings.append(embedding)
        run.signature = self._signature(read, None)
        return run

    def _find_checkpoint(self, config: ProjectorConfig, errors: list[str]) -> Path | None:
        """The TF checkpoint of a run: the config's model_checkpoint_path or the folder's latest."""
        folder = config.folder
        if folder.parts[-len(PLUGIN_DIR):] == PLUGIN_DIR:
            folder = folder.parents[len(PLUGIN_DIR) - 1]
        try:
            return find_checkpoint(folder, config.model_checkpoint_path)
        except DataError as exc:
            errors.append(f"{self.display(config.path)}: {exc.message}")
            return None

    def _with_checkpoint_entries(self, config: ProjectorConfig,
                                 checkpoint: Path | None) -> list[EmbeddingInfo]:
        """The config's entries plus every checkpoint embedding it does not name (TensorBoard's rule).

        An unnamed first entry is a template: its metadata and bookmarks apply to the others.
        """
        entries = list(config.embeddings)
        if checkpoint is None:
            return entries
        template = entries[0] if entries and not entries[0].tensor_name else None
        if template is not None and not template.tensor_path:
            entries = entries[1:]
        named = {e.tensor_name.removesuffix(":0") for e in entries}
        try:
            variables = embedding_variables(checkpoint)
        except DataError:
            variables = {}  # reading a named variable reports the broken checkpoint in its entry
        for variable in sorted(set(variables) - named):
            entries.append(EmbeddingInfo(
                tensor_name=variable,
                metadata_path=template.metadata_path if template else None,
                bookmarks_path=template.bookmarks_path if template else None,
                sprite=template.sprite if template else None,
                where=f"checkpoint variable {variable!r}",
            ))
        return entries

    def _asset(self, config: ProjectorConfig, asset: str, field: str, read: list[Path]) -> Path:
        path = resolve_asset(config.folder, asset, self.display(config.path), field)
        read.append(path)
        return path

    @staticmethod
    def _embedding_name(info: EmbeddingInfo, index: int) -> str:
        return info.tensor_name or (Path(info.tensor_path).stem if info.tensor_path
                                    else f"embedding-{index}")

    def _load_or_defer(self, run: Run, config: ProjectorConfig, info: EmbeddingInfo, index: int,
                       read: list[Path], checkpoint: Path | None) -> Embedding:
        """The embedding loaded now, or a loading placeholder for a big tensor not yet cached
        that the background loader replaces with the loaded embedding."""
        slow = self._slow_tensor(config, info)
        if slow is None:
            return self._load_embedding(run.name, config, info, index, read, checkpoint)
        path, loading = slow
        read.append(path)
        placeholder = Embedding(run=run.name, name=self._embedding_name(info, index),
                                fingerprint="", loading=loading,
                                sources={"config": self.display(config.path),
                                         "tensor": loading.source})

        def load() -> None:
            later: list[Path] = []
            self._loading_here.current = loading
            try:
                try:
                    fresh = self._load_embedding(run.name, config, info, index, later, checkpoint)
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
                self._loading_here.current = None
                loading.finished.set()
            if self.on_loaded is not None:
                self.on_loaded(fresh)

        self._loader.submit(load)
        return placeholder

    def _slow_tensor(self, config: ProjectorConfig, info: EmbeddingInfo) -> tuple[Path, Loading] | None:
        """A tensor file worth reading in the background: big, and not in the cache yet."""
        if self.background_bytes is None or not info.tensor_path:
            return None
        try:
            path = resolve_asset(config.folder, info.tensor_path, self.display(config.path),
                                 "tensor_path")
            size = path.stat().st_size
            if size < self.background_bytes or not path.is_file():
                return None
            fingerprint, kind = tensor_key(path, info.tensor_shape)
            if self.cache.contains(fingerprint):
                return None
            shape = (npy_layout(path, self.display(path)).shape if kind == "npy"
                     else tuple(info.tensor_shape) if kind == "bytes" else None)
        except (DataError, OSError):
            return None  # read now, so that the error is reported the usual way
        return path, Loading(self.display(path), size,
                             shape=shape if shape and len(shape) == 2 else None)

    def _load_embedding(self, run: str, config: ProjectorConfig, info: EmbeddingInfo,
                        index: int, read: list[Path], checkpoint: Path | None) -> Embedding:
        name = self._embedding_name(info, index)
        embedding = Embedding(run=run, name=name, fingerprint="")
        config_display = self.display(config.path)
        embedding.sources["config"] = config_display
        hashes = [name]
        n_points: int | None = None
        try:
            vectors, tensor_hash = self._load_tensor(config, info, read, checkpoint)
            embedding._vectors = vectors
            hashes.append(tensor_hash)
            n_points = int(vectors.shape[0])
            embedding.sources["tensor"] = self.display(read[-1])
            invalid = 0 if isinstance(vectors, ChunkedVectors) else (  # not read whole
                rows_with_nan_or_inf(vectors))
            if invalid:
                embedding.warnings.append(
                    f"{embedding.sources['tensor']}: {invalid} rows hold NaN or Inf; they are "
                    "kept out of neighbours and projections")
            if vectors.shape[1] == 1:
                embedding.warnings.append(
                    f"{embedding.sources['tensor']}: has a single column (D = 1), so each point "
                    "is one number; if these are labels or ids, name the file in metadata_path")
        except DataError as exc:
            embedding.errors["tensor"] = str(exc)
        if info.metadata_path:
            try:
                path = self._asset(config, info.metadata_path, "metadata_path", read)
                embedding.sources["metadata"] = self.display(path)
                embedding._metadata = read_metadata(path, self.display(path), n_points)
                hashes.append(embedding._metadata.digest)
                embedding.warnings.extend(embedding._metadata.warnings)
            except DataError as exc:
                embedding.errors["metadata"] = str(exc)
        if info.sprite is not None:
            try:
                if not info.sprite.image_path:
                    raise DataError("sprite has no image_path", file=config_display,
                                    field=f"{info.where}.sprite.image_path")
                dim = info.sprite.single_image_dim
                if len(dim) != 2 or 0 in dim:
                    raise DataError(f"a sprite needs single_image_dim [width, height], found "
                                    f"{list(dim)}", file=config_display,
                                    field=f"{info.where}.sprite.single_image_dim")
                path = self._asset(config, info.sprite.image_path, "sprite.image_path", read)
                embedding.sources["sprite"] = self.display(path)
                embedding.sprite = check_sprite(path, self.display(path),
                                                info.sprite.single_image_dim,
                                                n_points or 0, embedding.warnings)
                read.extend(embedding.sprite.files)
            except DataError as exc:
                embedding.errors["sprite"] = str(exc)
        if info.bookmarks_path:
            embedding.has_bookmarks = True
            try:
                path = self._asset(config, info.bookmarks_path, "bookmarks_path", read)
                embedding.sources["bookmarks"] = self.display(path)
                embedding._bookmarks = parse_bookmarks(self._read_file(path), self.display(path),
                                                       embedding.shape)
            except DataError as exc:
                embedding.errors["bookmarks"] = str(exc)
        embedding.fingerprint = hashlib.sha256("|".join(hashes).encode()).hexdigest()[:32]
        return embedding

    def _read_file(self, path: Path) -> bytes:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise DataError("file not found", file=self.display(path)) from None
        except OSError as exc:
            raise DataError(f"cannot be read: {exc.strerror}", file=self.display(path)) from None

    def _load_tensor(self, config: ProjectorConfig, info: EmbeddingInfo, read: list[Path],
                     checkpoint: Path | None) -> tuple[np.ndarray, str]:
        config_display = self.display(config.path)
        if not info.tensor_path:
            if checkpoint is None:
                raise DataError(f"embedding {info.tensor_name!r} has no tensor_path and the run "
                                "has no TensorFlow checkpoint", file=config_display,
                                field=f"{info.where}.tensor_path")
            return self._load_checkpoint_variable(checkpoint, info, read)
        path = self._asset(config, info.tensor_path, "tensor_path", read)
        display = self.display(path)
        chunked = open_chunked(path, display) if is_chunked(path) else None  # read lazily
        if chunked is None and not path.is_file():
            raise DataError("tensor file not found", file=display)
        if chunked is not None:
            return chunked, chunked.fingerprint
        fingerprint, kind = tensor_key(path, info.tensor_shape)
        vectors = self.cache.load(fingerprint)
        if vectors is None:
            verb = "parsing" if kind == "tsv" else "reading"
            vectors = ingest(self.cache, fingerprint, path, display, kind, info.tensor_shape,
                             self._tensor_progress(display, verb))
        shape = tuple(int(s) for s in vectors.shape)
        if info.tensor_shape and tuple(info.tensor_shape) != shape:
            raise DataError(f"tensor_shape {list(info.tensor_shape)} disagrees with the tensor "
                            f"file {display}, which is {list(shape)}", file=config_display,
                            field=f"{info.where}.tensor_shape")
        return vectors, fingerprint

    def _load_checkpoint_variable(self, checkpoint: Path, info: EmbeddingInfo,
                                  read: list[Path]) -> tuple[np.ndarray, str]:
        index = checkpoint.with_name(checkpoint.name + ".index")
        read.append(index)
        variable = info.tensor_name.removesuffix(":0")
        try:
            vectors = read_variable(checkpoint, variable)
        except DataError as exc:
            if exc.file:
                exc = DataError(exc.message, file=self.display(Path(exc.file)), field=exc.field,
                                line=exc.line)
            raise exc from None
        if vectors.ndim != 2:
            raise DataError(f"variable has shape {list(vectors.shape)}; an embedding is 2-D",
                            file=self.display(index), field=variable)
        fingerprint = hashlib.sha256(f"{file_fingerprint(index)}|{variable}".encode()).hexdigest()
        return np.ascontiguousarray(vectors, dtype="<f4"), fingerprint[:32]

    def _own_copy(self, fingerprint: str, vectors: np.ndarray) -> np.ndarray:
        """The vectors in a file of ours, never a memory map of the user's file.

        A user's file rewritten in place (``np.save`` truncates it) while we map it would kill
        the whole server with SIGBUS on the next read; our cache entries are only ever replaced
        by rename, so a map of one stays valid. Without a usable cache, the vectors are read
        into memory.
        """
        self.cache.store(fingerprint, vectors)
        cached = self.cache.load(fingerprint)
        if cached is not None:
            return cached
        return np.array(vectors) if isinstance(vectors, np.memmap) else vectors

    def _tensor_progress(self, display: str, verb: str) -> Callable[[int, int], None] | None:
        """Progress to the command line and, on the loader thread, to the embedding's Loading."""
        report = self.progress
        loading: Loading | None = getattr(self._loading_here, "current", None)
        if report is None and loading is None:
            return None

        def progress(done: int, total: int) -> None:
            if loading is not None:
                loading.report(done, total)
            if report is not None:
                report(f"{verb} {display}", done, total)

        return progress
