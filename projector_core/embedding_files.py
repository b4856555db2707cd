"""Building one embedding from the files its config entry names: the tensor (TSV, .bytes,
.npy, a zarr array or .npy shards, a TensorFlow checkpoint variable), its metadata, sprite and
bookmarks, each checked on its own so one broken part leaves the others served.

``Catalog`` finds the runs and decides when to (re)load them; this is what loading one entry
means, kept apart so discovery reads on its own.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from projector_core.cache import TensorCache, file_fingerprint
from projector_core.errors import DataError
from projector_core.formats.bookmarks import parse_bookmarks
from projector_core.formats.chunked import ChunkedVectors, is_chunked, open_chunked
from projector_core.formats.config import (
    PLUGIN_DIR,
    EmbeddingInfo,
    ProjectorConfig,
    resolve_asset,
)
from projector_core.formats.metadata import read_metadata
from projector_core.formats.sprite import check_sprite
from projector_core.formats.tf_checkpoint import embedding_variables, find_checkpoint, read_variable
from projector_core.ingest import ingest, rows_with_nan_or_inf, tensor_key
from projector_core.loading import Loading
from projector_core.model import Embedding

ProgressCallback = Callable[[str, int, int], None]  # (file shown, bytes done, bytes in all)


class EmbeddingFiles:
    """Loading a config's embedding entries (mixed into ``Catalog``, whose cache, progress
    callback and path display it uses)."""

    cache: TensorCache
    progress: ProgressCallback | None
    _loading_here: threading.local

    def display(self, path: Path) -> str:
        raise NotImplementedError  # Catalog's: a path relative to LOGDIR

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
