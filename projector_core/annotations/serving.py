"""The annotation service of a served catalogue, opened once for every door (the projection
service holds it): its columns shown by every embedding the catalogue lists, and every
committed change published on the catalogue's event hub, so each page, client and agent
following ``GET /api/events`` sees an edit made anywhere through this server.

The events (one schema, stated here):

- ``annotation`` / ``changed``, key ``annotation:RUN/TAG/COLUMN`` (a newer change of a column
  stands for an older one still queued: a follower reads the column as it is then):
  ``{"run", "tag", "column", "edit", "author", "change": "set" | "import" | "undo" | "redo",
  "rows": rows that hold another value now, "code": a set's value's code in the column or
  null, "values": the column's dictionary's length}``. ``tag`` is the embedding's name
  without its step (``enc`` for ``enc:00010``): every step of a timeline shows the change.
- ``bookmark`` / ``added`` or ``removed``: ``{"run", "tag", "id", "author"}``.

An edit committed by another process (an assistant over MCP, ``projector annotations import``)
is told the same way within half a second (``elsewhere.py``), ``rows``, ``code`` and
``values`` then null (the page reads the column again).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from projector_core.annotations.elsewhere import ElsewhereWatch
from projector_core.annotations.service import AnnotationService, Change, Lookup
from projector_core.annotations.shown import ShownColumns
from projector_core.data.catalog import Catalog
from projector_core.events import CHANGED, EventHub

ANNOTATION_EVENT = "annotation"
BOOKMARK_EVENT = "bookmark"
_BOOKMARK_ACTIONS = {"bookmark-saved": "added", "bookmark-deleted": "removed"}


def serve_annotations(catalog: Catalog, option: str | Path | None,
                      lookup: Lookup) -> AnnotationService:
    """The store ``option`` names (``location.py``: None for ``$PROJECTOR_ANNOTATIONS`` or
    the default, ``off``) opened for ``catalog``: off with the reason when it cannot be used,
    never an error."""
    service = AnnotationService.open(option, catalog.logdir, lookup)
    if service.store is not None:
        catalog.add_columns(ShownColumns(service))
        if catalog.events is not None:
            service.subscribe(publisher(catalog.events))
    return service


def watch_elsewhere(service: AnnotationService) -> ElsewhereWatch | None:
    """Edits other processes commit to the store told on the event hub too, while a server
    runs (``create_app``'s lifespan starts and stops it); None when annotations are off."""
    if service.store is None or service.logdir is None:
        return None
    return ElsewhereWatch(service).start()


def publisher(hub: EventHub) -> Callable[[Change], None]:
    """What publishes each committed change on ``hub`` (the module's schema)."""
    def publish(change: Change) -> None:
        where = {"run": change.run, "tag": change.tag}
        if change.column is None:
            hub.publish(BOOKMARK_EVENT, _BOOKMARK_ACTIONS[change.action],
                        {**where, "id": change.edit, "author": change.author})
            return
        hub.publish(ANNOTATION_EVENT, CHANGED, {
            **where, "column": change.column, "edit": change.edit, "author": change.author,
            "change": change.action, "rows": change.changed, "code": change.code,
            "values": change.values}, key=f"annotation:{change.run}/{change.tag}/{change.column}")
    return publish
