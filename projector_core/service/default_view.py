"""What the page's default view asks for first, prepared as soon as a tensor is loaded.

A first visit opens the first readable embedding with the page's default view: PCA (3
components asked; a 2-column embedding's PCA is its own plane, rotated), its bounds,
level-of-detail order and tiles over the axes shown, and the colour and label columns as
dictionary codes. Each is computed here, on a background thread, once the catalog has loaded,
so the page's first requests find them ready instead of computing them one after another
while the user waits.
The request is the one ``frontend/js/controller/projecting.js`` makes (``requestFor('pca')``:
the parameter table's ``default_request``, ``projection/default_request.py``), asked through
the service as the page's is, so the two share one job and one cached result. Whether the
view is shown from tiles, and over which axes, is ``tiles/view.py``'s to say. It is a
guess, so it is background work (``jobs/priority.py``): it gives way to any requested job,
and a page asking for this very projection makes its job a requested one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager

from projector_core.data.catalog import Catalog
from projector_core.data.model import Embedding
from projector_core.jobs.job import Job, JobStatus
from projector_core.jobs.priority import Priority, yield_point
from projector_core.projection.default_request import projection_request
from projector_core.projection.jobs import projection_result
from projector_core.projection.params import ProjectionRequest
from projector_core.tiles.store import LodStore
from projector_core.tiles.view import chosen_axes, shown_from_tiles

log = logging.getLogger("projector")

FIRST_COLUMNS = 4  # metadata columns encoded ahead: the page's default colour and label are among them
Start = Callable[[ProjectionRequest, Embedding, Priority], Job]  # the service's checked start


def first_embedding(catalog: Catalog) -> Embedding | None:
    """The embedding a page opens without a URL state: the first listed that is readable."""
    for run in catalog.runs():
        for embedding in run.embeddings:
            if embedding.error is None and embedding.shape is not None:
                return embedding
    return None


def prepare_default_view(catalog: Catalog, start: Start, lod: LodStore,
                         background: Callable[[], AbstractContextManager[object]]) -> None:
    """Waits for the catalog, then computes the default view of the first embedding, as
    background work (inside ``background()``, its job of background priority)."""
    catalog.wait_loaded()
    embedding = first_embedding(catalog)
    if embedding is None:
        return
    try:
        with background():
            # The projection first (the page's first tiles wait for it); the colour column is
            # encoded (a stored one counted, as a tiled page asks) on this thread meanwhile.
            job = start(projection_request(embedding, "pca"), embedding, Priority.BACKGROUND)
            for name in embedding.metadata_columns()[:FIRST_COLUMNS]:
                yield_point()
                embedding.column_counts(name)
            job.wait()
            if job.status is JobStatus.DONE:
                coordinates = projection_result(job).coordinates
                tiles = shown_from_tiles(coordinates.shape[0])
                lod.prepare(job, chosen_axes(None, coordinates.shape[1], tiles), tiles=tiles)
    except Exception:  # logged, not raised: a page asking later gets the error itself
        log.warning("could not prepare the default view of %s/%s", embedding.run,
                    embedding.name, exc_info=True)
