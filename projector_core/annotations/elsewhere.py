"""Edits committed to the store by other processes, told as this server's own are.

An assistant over MCP, ``projector annotations import``, a second server or a script using
the service write the same store file; the pages of this server hear of their edits (and
saved bookmarks) through :class:`ElsewhereWatch`, which looks at the store every ``seconds``
for entries it did not commit itself and hands each to the service's subscribers (the event
hub: ``serving.py``). A look is two indexed queries; an edit this process commits is told at
once by the service and skipped here.
"""

from __future__ import annotations

import logging
import threading

from projector_core.annotations.errors import StoreError
from projector_core.annotations.saved_bookmarks import SavedBookmarks
from projector_core.annotations.service import AnnotationService, Change
from projector_core.annotations.store import AnnotationStore

log = logging.getLogger(__name__)

SECONDS = 0.5  # how often the store is looked at (an edit elsewhere reaches pages this late)


class ElsewhereWatch:
    """Started and stopped with the server (``start``, ``stop``)."""

    def __init__(self, service: AnnotationService, seconds: float = SECONDS) -> None:
        assert service.store is not None and service.saved is not None and service.logdir
        self.service, self.seconds = service, seconds
        self.logdir = str(service.logdir)
        self._edit, self._bookmark = service.store.last_edit(), service.saved.last_id()
        self._own: set[tuple[str, int]] = set()  # told by the service, not yet seen here
        self._unsubscribe = service.subscribe(self._told)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="annotations-elsewhere",
                                        daemon=True)

    def start(self) -> ElsewhereWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._unsubscribe()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def look(self) -> None:
        """Tell every entry committed elsewhere since the last look."""
        store, saved = self.service.store, self.service.saved
        assert store is not None and saved is not None
        with self.service.committing:  # our own commits are all told (and known) by now
            self._look(store, saved)

    def _look(self, store: AnnotationStore, saved: SavedBookmarks) -> None:
        for key, edit in store.edits_after(self.logdir, self._edit):
            self._edit = max(self._edit, edit.id)
            if not self._mine("edit", edit.id):
                self.service.tell(Change(key.logdir, key.run, key.tag, edit.column, edit.id,
                                         edit.author, edit.action))
        for key, bookmark in saved.saved_after(self.logdir, self._bookmark):
            self._bookmark = max(self._bookmark, bookmark.id)
            if not self._mine("bookmark", bookmark.id):
                self.service.tell(Change(key.logdir, key.run, key.tag, None, bookmark.id,
                                         bookmark.author, "bookmark-saved"))

    def _told(self, change: Change) -> None:
        if change.action != "bookmark-deleted":
            self._own.add(("edit" if change.column is not None else "bookmark", change.edit))

    def _mine(self, what: str, id: int) -> bool:
        if (what, id) in self._own:
            self._own.discard((what, id))
            return True
        return False

    def _run(self) -> None:
        while not self._stop.wait(self.seconds):
            try:
                self.look()
            except StoreError as error:  # a store gone bad: said, looked at again later
                log.warning("annotation store: %s", error)
