"""Reading embeddings from LOGDIR's files: a config entry's tensor (TSV, .bytes, .npy, a zarr
array or .npy shards, a TensorFlow checkpoint variable), metadata, sprite and bookmarks; or
plain array files given without a config, with metadata and sprite from the command line.

Each input finds and reads its own parts here; ``EmbeddingBuilder`` holds the rules they
share. ``Catalog`` decides which runs to (re)load and when; this is what loading one means.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np

from projector_core.data.embedding_builder import EmbeddingBuilder
from projector_core.data.ingest import ingest, tensor_key
from projector_core.data.loading import Loading
from projector_core.data.model import Embedding, Run
from projector_core.errors import DataError
from projector_core.formats.arrays import PlainEmbedding, read_plain_array
from projector_core.formats.chunked import ChunkedVectors, is_chunked, is_zarr, open_chunked
from projector_core.formats.config import (
    PLUGIN_DIR,
    EmbeddingInfo,
    ProjectorConfig,
    resolve_asset,
)
from projector_core.formats.metadata import Metadata
from projector_core.formats.model_sidecar import models_path
from projector_core.formats.npy_files import npy_layout
from projector_core.formats.tf_checkpoint import embedding_variables, find_checkpoint, read_variable
from projector_core.storage.fingerprint import fingerprint
from projector_core.storage.tensor_cache import TensorCache, file_fingerprint

ProgressCallback = Callable[[str, int, int], None]  # (file shown, bytes done, bytes in all)


@dataclass(frozen=True)
class PlainOptions:
    """What the command line adds to plain array files that carry no config."""

    metadata: Path | None = None
    sprite: Path | None = None
    sprite_dim: tuple[int, int] | None = None
    vector_column: str | None = None
    shards: bool = False  # LOGDIR is a folder of .npy row shards of one embedding


def entry_name(info: EmbeddingInfo, index: int) -> str:
    """A config entry's embedding name: its tensor_name, else its tensor file's stem."""
    return info.tensor_name or (Path(info.tensor_path).stem if info.tensor_path
                                else f"embedding-{index}")


class EmbeddingFiles:
    """Loads embeddings from files into the tensor cache, reporting progress; paths in
    messages are shown by ``display`` (relative to LOGDIR)."""

    def __init__(self, cache: TensorCache, display: Callable[[Path], str],
                 progress: ProgressCallback | None) -> None:
        self.cache = cache
        self.display = display
        self.progress = progress
        self._loading_here = threading.local()  # the Loading the current thread reports to

    @contextmanager
    def reporting_to(self, loading: Loading) -> Iterator[None]:
        """Tensor progress on this thread also goes to ``loading`` (a background load)."""
        self._loading_here.current = loading
        try:
            yield
        finally:
            self._loading_here.current = None

    # -- config entries --------------------------------------------------------------------------
    def checkpoint(self, config: ProjectorConfig, errors: list[str]) -> Path | None:
        """The TF checkpoint of a run: the config's model_checkpoint_path or the folder's latest."""
        folder = config.folder
        if folder.parts[-len(PLUGIN_DIR):] == PLUGIN_DIR:
            folder = folder.parents[len(PLUGIN_DIR) - 1]
        try:
            return find_checkpoint(folder, config.model_checkpoint_path)
        except DataError as exc:
            errors.append(f"{self.display(config.path)}: {exc.message}")
            return None

    @staticmethod
    def entries(config: ProjectorConfig, checkpoint: Path | None) -> list[EmbeddingInfo]:
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

    def _asset(self, config: ProjectorConfig, asset: str, field: str) -> Path:
        return resolve_asset(config.folder, asset, self.display(config.path), field)

    def named_files(self, config: ProjectorConfig, info: EmbeddingInfo,
                    checkpoint: Path | None) -> list[Path]:
        """The files a config entry names, tensor first, as far as they resolve: what tells
        that the entry changed before it is read (reading may find more, a sprite's pages)."""
        paths = []
        if not info.tensor_path and checkpoint is not None:
            paths.append(checkpoint.with_name(checkpoint.name + ".index"))
        for asset, field in ((info.tensor_path, "tensor_path"),
                             (info.metadata_path, "metadata_path"),
                             (info.sprite.image_path if info.sprite else None, "sprite.image_path"),
                             (info.bookmarks_path, "bookmarks_path")):
            if asset:
                with suppress(DataError):  # reading the entry reports it
                    paths.append(self._asset(config, asset, field))
        return paths

    def load_entry(self, run: str, config: ProjectorConfig, info: EmbeddingInfo, index: int,
                   read: list[Path], checkpoint: Path | None) -> Embedding:
        """One config entry's embedding; every file it read is added to ``read``."""
        built = EmbeddingBuilder(run, entry_name(info, index))
        config_display = self.display(config.path)
        built.sources["config"] = config_display
        with built.part("tensor"):
            vectors, key, path = self._load_tensor(config, info, built.files, checkpoint)
            built.tensor(vectors, key, self.display(path))
        if info.metadata_path:
            with built.part("metadata"):
                path = self._asset(config, info.metadata_path, "metadata_path")
                built.metadata_file(path, self.display(path))
        if info.sprite is not None:
            with built.part("sprite"):
                if not info.sprite.image_path:
                    raise DataError("sprite has no image_path", file=config_display,
                                    field=f"{info.where}.sprite.image_path")
                dim = info.sprite.single_image_dim
                if len(dim) != 2 or 0 in dim:
                    raise DataError(f"a sprite needs single_image_dim [width, height], found "
                                    f"{list(dim)}", file=config_display,
                                    field=f"{info.where}.sprite.single_image_dim")
                path = self._asset(config, info.sprite.image_path, "sprite.image_path")
                built.sprite_file(path, self.display(path), dim)
        if info.bookmarks_path:
            with built.part("bookmarks"):
                path = self._asset(config, info.bookmarks_path, "bookmarks_path")
                built.bookmarks_file(path, self.display(path))
        sidecar = models_path(config.folder)
        if sidecar.is_file():
            with built.part("model"):
                built.model_file(sidecar, self.display(sidecar))
        read.extend(built.files)
        return built.build()

    def _load_tensor(self, config: ProjectorConfig, info: EmbeddingInfo, read: list[Path],
                     checkpoint: Path | None) -> tuple[np.ndarray, str, Path]:
        """(vectors, their cache key, the file shown as their source)."""
        config_display = self.display(config.path)
        if not info.tensor_path:
            if checkpoint is None:
                raise DataError(f"embedding {info.tensor_name!r} has no tensor_path and the run "
                                "has no TensorFlow checkpoint", file=config_display,
                                field=f"{info.where}.tensor_path")
            return self._load_checkpoint_variable(checkpoint, info, read)
        path = self._asset(config, info.tensor_path, "tensor_path")
        read.append(path)
        display = self.display(path)
        chunked = open_chunked(path, display) if is_chunked(path) else None  # read lazily
        if chunked is None and not path.is_file():
            raise DataError("tensor file not found", file=display)
        if chunked is not None:
            return cast(np.ndarray, chunked), chunked.fingerprint, path  # an array read lazily
        key, kind = tensor_key(path, info.tensor_shape)
        vectors = self.cache.load(key)
        if vectors is None:
            verb = "parsing" if kind == "tsv" else "reading"
            vectors = ingest(self.cache, key, path, display, kind, info.tensor_shape,
                             self._tensor_progress(display, verb))
        shape = tuple(int(s) for s in vectors.shape)
        if info.tensor_shape and tuple(info.tensor_shape) != shape:
            raise DataError(f"tensor_shape {list(info.tensor_shape)} disagrees with the tensor "
                            f"file {display}, which is {list(shape)}", file=config_display,
                            field=f"{info.where}.tensor_shape")
        return vectors, key, path

    def _load_checkpoint_variable(self, checkpoint: Path, info: EmbeddingInfo,
                                  read: list[Path]) -> tuple[np.ndarray, str, Path]:
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
        return (np.ascontiguousarray(vectors, dtype="<f4"),
                fingerprint(file_fingerprint(index), variable), index)

    def slow_tensor(self, config: ProjectorConfig, info: EmbeddingInfo,
                    min_bytes: int) -> tuple[Path, Loading] | None:
        """A tensor file worth reading in the background: ``min_bytes`` or more, not cached yet."""
        if not info.tensor_path:
            return None
        try:
            path = self._asset(config, info.tensor_path, "tensor_path")
            size = path.stat().st_size
            if size < min_bytes or not path.is_file():
                return None
            key, kind = tensor_key(path, info.tensor_shape)
            if self.cache.contains(key):
                return None
            shape = (npy_layout(path, self.display(path)).shape if kind == "npy"
                     else tuple(info.tensor_shape) if kind == "bytes" else None)
        except (DataError, OSError):
            return None  # read now, so that the error is reported the usual way
        return path, Loading(self.display(path), size,
                             shape=shape if shape and len(shape) == 2 else None)

    # -- plain arrays ----------------------------------------------------------------------------
    def load_plain(self, logdir: Path, files: list[Path], plain: PlainOptions,
                   read: list[Path]) -> Run:
        """``files`` (LOGDIR itself, or the plain arrays in it; a lone file may be a tensor TSV)
        without a config; metadata and sprite from the command line, for a single embedding
        only. Every file read is added to ``read``."""
        run = Run(name=".", config="(plain arrays)")
        read.extend(files)
        tsv_key = None
        try:
            if logdir.is_file() and logdir.suffix.lower() == ".tsv":
                tsv_key, vectors = self._plain_tsv(logdir)
                found = [PlainEmbedding(logdir.stem, vectors, None, logdir)]
            else:
                found = ([PlainEmbedding(logdir.stem, cast(np.ndarray, open_chunked(logdir, str(logdir))),
                                         None, logdir)]  # ChunkedVectors: read lazily
                         if is_zarr(logdir) or plain.shards
                         else read_plain_array(logdir, plain.vector_column))
        except DataError as exc:
            run.error = str(exc)
            found = []
        if plain.metadata is not None and len(found) > 1:  # whose rows would it describe?
            run.error = (f"--metadata {plain.metadata}: {logdir} holds {len(found)} arrays "
                         f"({', '.join(a.name for a in found)}); --metadata describes a single "
                         "array: give that array's file instead")
            found = []
        for array in found:
            built = EmbeddingBuilder(".", array.name)
            if isinstance(array.vectors, ChunkedVectors):  # lazy: never copied into the cache
                key, vectors = array.vectors.fingerprint, array.vectors
            elif tsv_key is not None:  # parsed straight into the cache already
                key, vectors = tsv_key, array.vectors
            else:
                key = fingerprint(*[file_fingerprint(f) for f in files], array.name)
                cached = self.cache.load(key)
                vectors = cached if cached is not None else self._own_copy(key, array.vectors)
            built.tensor(vectors, key, str(array.path))  # as the command line named it
            alone = len(found) == 1
            with built.part("metadata"):
                if plain.metadata is not None and alone:
                    built.metadata_file(plain.metadata, str(plain.metadata))
                    if array.metadata_columns:  # said, not silent: the command line wins
                        built.warnings.append(
                            f"--metadata {plain.metadata} is shown instead of the metadata "
                            f"columns of {array.path} ({', '.join(array.metadata_columns)})")
                elif array.metadata_columns:
                    source = str(array.path)
                    built.metadata(Metadata.from_columns(array.metadata_columns, source), source)
            if plain.sprite is not None and alone:
                with built.part("sprite"):
                    built.sprite_file(plain.sprite, str(plain.sprite), plain.sprite_dim or ())
            read.extend(built.files)
            run.embeddings.append(built.build())
        return run

    def _plain_tsv(self, path: Path) -> tuple[str, np.ndarray]:
        """A tensor TSV given alone (the ``vectors.tsv`` the standalone projector loads, or a
        writer's ``tensors.tsv``): parsed once into the cache, as a config's TSV is."""
        key, _ = tensor_key(path, ())
        vectors = self.cache.load(key)
        if vectors is None:
            vectors = ingest(self.cache, key, path, str(path), "tsv", (),
                             self._tensor_progress(str(path), "parsing"))
        return key, vectors

    def _own_copy(self, key: str, vectors: np.ndarray) -> np.ndarray:
        """The vectors in a file of ours, never a memory map of the user's file.

        A user's file rewritten in place (``np.save`` truncates it) while we map it would kill
        the whole server with SIGBUS on the next read; our cache entries are only ever replaced
        by rename, so a map of one stays valid. Without a usable cache, the vectors are read
        into memory.
        """
        self.cache.store(key, vectors)
        cached = self.cache.load(key)
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
