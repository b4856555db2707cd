"""What the catalog remembers of what it read from LOGDIR, so that a rescan reads again only
what changed: each config entry (:class:`Entry`: what is listed for it, the files it was read
from, a read under way or held until its files stand still), each run's configs and entries
(:class:`RunFiles`), and the run listed from them (:func:`listing`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from projector_core.data.completeness import Signature
from projector_core.data.loading import Loading
from projector_core.data.model import Embedding, Run
from projector_core.formats.config import EmbeddingInfo


@dataclass
class Entry:
    """A config entry as last read: what is listed for it and the files it was read from."""

    listed: Embedding  # shown in the run (a loading placeholder until a read of it is shown)
    config: str  # the config as shown, and the entry in it: where a duplicate name is said
    where: str
    files: Signature  # the files as they were when last read (a change reads it again)
    since: float  # monotonic: when the files were first seen as they are
    shown: bool = False  # a read of it was listed: a new read replaces it once admitted
    reading: Loading | None = None  # the read under way (cancelled when superseded)
    held: Embedding | None = None  # read, shown once its files stood still ``wait`` seconds
    wait: float = 0.0

    def stop_reading(self) -> None:
        if self.reading is not None:
            self.reading.cancelled = True


@dataclass
class RunFiles:
    """What a LOGDIR run was last read from: its configs and each of their entries."""

    configs: Signature
    entries: dict[tuple[str, str, EmbeddingInfo], Entry] = field(default_factory=dict)


def listing(run: Run, read: RunFiles) -> Run:
    """``run`` listing its entries as they stand, its signature covering their files."""
    embeddings: list[Embedding] = []
    seen: dict[str, str] = {}
    for entry in read.entries.values():
        embedding = entry.listed
        if embedding.name in seen:
            embedding.errors["config"] = (f"{entry.config} {entry.where}: duplicate "
                                          f"tensor_name {embedding.name!r} (also "
                                          f"{seen[embedding.name]})")
        seen.setdefault(embedding.name, entry.where)
        embeddings.append(embedding)
    files = dict((p, (size, mtime)) for p, size, mtime in read.configs)
    for entry in read.entries.values():
        files.update((p, (size, mtime)) for p, size, mtime in entry.files)
    return replace(run, embeddings=embeddings,
                   signature=tuple(sorted((p, *stat) for p, stat in files.items())))
