"""The data model every other layer reads: runs holding embeddings (vectors + metadata + assets).

An ``Embedding`` is built once (``embedding_builder.py``, whatever the input) with each part
already checked; a broken part is recorded in ``errors`` under its name (tensor, metadata,
sprite, bookmarks) and the healthy parts stay usable, so one bad file never takes the rest down.
Its data parts are private: read through the methods below, which refuse a broken or loading
part, and handed over once through ``Embedding.of``.

Its metadata columns are the metadata file's, then the categorical columns stored beside a
chunked embedding as int32 codes (``formats/code_columns.py``), then the columns another
layer adds (``added_columns.py``: the annotation columns): the methods here decide which
answers a column, so a 100M-point set is coloured and searched by its codes without a
string per row ever held, and a label made a moment ago is a column like the others.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from projector_core.data.added_columns import CodedColumn
from projector_core.data.loading import Loading, StillLoading
from projector_core.errors import DataError, UnknownName, known, unknown_column
from projector_core.formats.code_columns import CodeColumn
from projector_core.formats.metadata import Metadata
from projector_core.formats.sprites.sprite import Sprite
from projector_core.storage.recent import Recent

__all__ = ["CodeColumn", "Embedding", "Metadata", "Run"]

INDEX_COLUMN = "index"  # the column of data without metadata
_ONE_LINE = str.maketrans("\t\r\n", "   ")


class AddedColumns(Protocol):
    """What the layer keeping added columns (annotations) gives the catalogue: the model
    declares it, so that it imports nothing of that layer."""

    def columns_of(self, embedding: Embedding) -> Mapping[str, CodedColumn]:
        """The columns ``embedding`` shows now, by name, in the order they are listed (none
        while its row count is unknown)."""
        ...

@dataclass
class Embedding:
    run: str
    name: str
    fingerprint: str
    sprite: Sprite | None = None
    has_bookmarks: bool = False
    errors: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    loading: Loading | None = None  # set on a placeholder while its tensor is read in the background
    code_columns: dict[str, CodeColumn] = field(default_factory=dict)  # stored beside chunked data
    model: str | None = None  # the model that made the vectors, as the data says (semantic/)
    added: AddedColumns | None = None  # columns kept elsewhere (annotations): Catalog sets it
    _vectors: np.ndarray | None = field(default=None, init=False, repr=False)
    _reopen: Callable[[], np.ndarray] | None = field(default=None, init=False, repr=False)
    _shape: tuple[int, int] | None = field(default=None, init=False, repr=False)
    _metadata: Metadata | None = field(default=None, init=False, repr=False)
    _bookmarks: list[dict[str, Any]] | None = field(default=None, init=False, repr=False)

    @classmethod
    def of(cls, run: str, name: str, fingerprint: str, *, vectors: np.ndarray | None = None,
           metadata: Metadata | None = None, bookmarks: list[dict[str, Any]] | None = None,
           **parts: Any) -> Embedding:
        """An embedding holding these data parts (``parts``: the public fields)."""
        embedding = cls(run=run, name=name, fingerprint=fingerprint, **parts)
        embedding._vectors, embedding._metadata, embedding._bookmarks = vectors, metadata, bookmarks
        return embedding

    @property
    def shape(self) -> tuple[int, int] | None:
        if self._vectors is not None:
            return int(self._vectors.shape[0]), int(self._vectors.shape[1])
        if self._shape is not None:
            return self._shape
        return self.loading.shape if self.loading is not None else None

    @property
    def status(self) -> Literal["loading", "ready", "error"]:
        """"loading" while the tensor is read in the background; "error" when it could not be
        read (``error`` says why); else "ready" (a broken metadata or sprite file leaves the
        points usable: ``error`` names it)."""
        if self.loading is not None:
            return "loading"
        missing = self._vectors is None and self._reopen is None
        return "error" if missing or "tensor" in self.errors else "ready"

    def raise_if_loading(self) -> None:
        if self.loading is not None:
            raise StillLoading(self.loading)

    @property
    def error(self) -> str | None:
        return "; ".join(self.errors.values()) if self.errors else None

    def _raise_if_broken(self, part: str) -> None:
        if part in self.errors:
            raise DataError(self.errors[part])

    def vectors(self) -> np.ndarray:
        """float32 [N, D], C-contiguous; may be a read-only memory map."""
        self.raise_if_loading()
        self._raise_if_broken("tensor")
        if self._vectors is not None:
            return self._vectors
        assert self._reopen is not None
        return self._reopen()

    def keep_on_disk(self, opened: Recent[str, np.ndarray]) -> None:
        """Let go of vectors that are a map of a file (our tensor cache's): mapped again when
        asked for, ``opened`` keeping the few most recently used mapped. A server following
        a training run lists hundreds of steps and reads a few; pages of a map once read
        would otherwise stay counted in its memory for as long as the step is listed."""
        vectors = self._vectors
        if not isinstance(vectors, np.memmap) or vectors.filename is None:
            return
        path, source = os.fspath(vectors.filename), self.sources.get("tensor", self.name)

        def reopen() -> np.ndarray:
            return opened.get_or_compute(path, lambda: _map_again(path, source))

        opened.put(path, vectors)  # just read: the likeliest to be asked for next
        self._shape = (int(vectors.shape[0]), int(vectors.shape[1]))
        self._vectors, self._reopen = None, reopen

    def share_metadata(self, held: MutableMapping[str, Metadata]) -> None:
        """Hold metadata equal to one already held (by digest) only once: the steps of a
        training run usually carry the same labels, written again at every step."""
        if self._metadata is not None:
            self._metadata = held.setdefault(self._metadata.digest, self._metadata)

    def metadata(self) -> Metadata | None:
        self.raise_if_loading()
        self._raise_if_broken("metadata")
        return self._metadata

    def metadata_or_index(self) -> Metadata:
        """The metadata, or for data without a metadata file the one column TensorBoard then
        shows: ``index``, each row's number (what /api/metadata serves and search reads)."""
        metadata = self.metadata()
        if metadata is not None:
            return metadata
        import pyarrow as pa  # on first use: start-up stays free of it

        n = self.shape[0] if self.shape else 0
        # Made here, not parsed: nothing in it to check, and it is fast for millions of rows.
        text = INDEX_COLUMN + "\n" + "".join(f"{i}\n" for i in range(n))
        return Metadata(names=[INDEX_COLUMN], has_header=True, raw=text.encode(),
                        arrays={INDEX_COLUMN: pa.array(np.arange(n)).cast(pa.string())})

    def data_columns(self) -> list[str]:
        """The metadata file's columns, then the stored code columns it does not name: the
        data's own, whose names an added column may not take."""
        names = list(self._metadata.names) if self._metadata is not None else []
        return names + [name for name in self.code_columns if name not in names]

    def metadata_columns(self) -> list[str]:
        """The data's columns, then the added ones (an embedding without a metadata file
        that shows added columns lists ``index`` first, as its metadata TSV has it)."""
        names = self.data_columns()
        added = list(self.added_columns())
        if added and not names:
            names = [INDEX_COLUMN]
        return names + added

    def metadata_with_stored(self) -> Metadata:
        """The metadata file's columns (or ``index``) and the coded ones (stored, added)
        spelled out, a string per row: only for a set small enough to be shown whole
        (``/api/metadata`` decides)."""
        return self._spelled_out(list(self.coded_columns()))

    def metadata_with_added(self) -> Metadata | None:
        """The metadata file's columns (or ``index``) and the added ones spelled out: what
        the readers of a ``Metadata`` (cluster names, a static site, a picture) show; the
        file's metadata alone (None without one) when nothing is added."""
        added = list(self.added_columns())
        return self._spelled_out(added) if added else self.metadata()

    def metadata_of(self, columns: list[str]) -> Metadata | None:
        """The metadata file when it names every one of ``columns`` (None without one), else
        those of them that are added columns spelled out, a string per row: what a request
        naming a column reads (supervision, a custom projection's axes)."""
        metadata = self.metadata()
        added = self.added_columns()
        if not any(name in added for name in columns):
            return metadata
        return Metadata.from_columns({name: _spelled(added[name]) for name in columns
                                      if name in added}, self.sources.get("tensor", self.name))

    def _spelled_out(self, coded: list[str]) -> Metadata:
        """The file's columns, then ``coded`` a string per row (``index`` first when the data
        has no column of its own, as :meth:`metadata_columns` lists)."""
        metadata = self.metadata_or_index() if not self.data_columns() else self.metadata()
        columns = {name: metadata.column(name) for name in metadata.names} if metadata else {}
        for name in coded:
            found = self.code_column(name)
            if found is not None:
                columns[name] = _spelled(found)
        return Metadata.from_columns(columns, self.sources.get("tensor", self.name))

    def code_column(self, column: str) -> CodedColumn | None:
        """The codes answering ``column``, stored or added (None: the metadata file's, or
        unknown)."""
        if self._metadata is not None and column in self._metadata.names:
            return None
        stored = self.code_columns.get(column)
        return stored if stored is not None else self.added_columns().get(column)

    def coded_columns(self) -> dict[str, CodedColumn]:
        """The stored and added columns answering for their names."""
        return {name: coded for name in self.metadata_columns()
                if (coded := self.code_column(name)) is not None}

    def stored_columns(self) -> dict[str, CodeColumn]:
        """The stored columns answering for their names (not those the metadata file names):
        files beside the data that workers read."""
        names = self._metadata.names if self._metadata is not None else ()
        return {name: stored for name, stored in self.code_columns.items() if name not in names}

    def added_columns(self) -> dict[str, CodedColumn]:
        """The added columns (annotations) shown now, by name (none while loading or broken;
        a name the data has is the data's: not among them)."""
        if self.added is None or self.loading is not None or self.shape is None:
            return {}
        own = set(self.data_columns())
        return {name: c for name, c in self.added.columns_of(self).items() if name not in own}

    def categorical(self, column: str) -> tuple[list[str], np.ndarray]:
        """``column``'s dictionary and one int32 code per row into it; KeyError naming the
        known columns for an unknown one."""
        code = self.code_column(column)
        if code is not None:
            return code.dictionary, code.codes
        return self._file_column(column).categorical(column)

    def column_counts(self, column: str) -> tuple[list[str], np.ndarray]:
        """``column``'s dictionary and the rows holding each value (stored codes: counted a
        chunk at a time, never all read at once)."""
        code = self.code_column(column)
        if code is not None:
            return code.dictionary, code.counts
        dictionary, codes = self._file_column(column).categorical(column)
        return dictionary, np.bincount(codes, minlength=len(dictionary))

    def code_blocks(self, column: str) -> Iterator[np.ndarray]:
        """``column``'s int32 codes in row order, a block at a time (stored codes: a zarr
        chunk each, so a search that stops early reads little)."""
        code = self.code_column(column)
        if code is not None:
            yield from code.blocks()
        else:
            yield self._file_column(column).categorical(column)[1]

    def is_numeric(self, column: str) -> bool:
        """Whether ``column`` holds numbers (stored codes never do: they are categories)."""
        return self.code_column(column) is None and self._file_column(column).is_numeric(column)

    def _file_column(self, column: str) -> Metadata:
        metadata = self.metadata()
        if metadata is None or column not in metadata.names:
            raise unknown_column(column, self.metadata_columns())
        return metadata

    def bookmarks(self) -> list[dict[str, Any]]:
        self.raise_if_loading()
        self._raise_if_broken("bookmarks")
        return list(self._bookmarks or [])


def _spelled(coded: CodedColumn) -> list[str]:
    """A coded column as a string per row, each one line (a note may hold line breaks and
    tabs, which a TSV cell cannot)."""
    dictionary = [value.translate(_ONE_LINE) for value in coded.dictionary]
    return [dictionary[code] for code in coded.codes.tolist()]


def _map_again(path: str, source: str) -> np.ndarray:
    try:
        mapped: np.ndarray = np.load(path, mmap_mode="r", allow_pickle=False)  # a memmap
        return mapped
    except (OSError, ValueError):
        raise DataError("its cached copy is gone; it is read again when the file changes or "
                        "the server restarts", file=source) from None


@dataclass
class Run:
    name: str
    embeddings: list[Embedding] = field(default_factory=list)
    error: str | None = None
    config: str | None = None
    signature: tuple[tuple[str, int, int], ...] = ()
    warnings: list[str] = field(default_factory=list)  # served all the same, said at start

    def embedding(self, name: str) -> Embedding:
        """The embedding, or :class:`UnknownName` listing the run's."""
        for embedding in self.embeddings:
            if embedding.name == name:
                return embedding
        raise UnknownName(f"unknown embedding {name!r} in run {self.name!r} (embeddings: "
                          f"{known([e.name for e in self.embeddings])})")
