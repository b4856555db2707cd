"""The application factory: one FastAPI app over one LOGDIR (each test builds its own)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI
from fastapi.middleware.trustedhost import TrustedHostMiddleware
from projector.server.access import add_access_control
from projector.server.body_limit import DEFAULT_MAX_BODY_BYTES, BodySizeLimit
from projector.server.error_responses import add_error_handlers
from projector.server.openapi_docs import document
from projector.server.routes import (
    compare,
    data,
    docs,
    export,
    jobs,
    lod,
    neighbors,
    projections,
    session,
    sprites,
    tile_queries,
    tiles,
    ui,
    uploads,
)

from projector_core.data.catalog import Catalog
from projector_core.data.uploads import Uploads
from projector_core.jobs.engine import JobManager
from projector_core.jobs.followers import DEFAULT_GRACE, Followers
from projector_core.projection.default_view import start_preparing
from projector_core.projection.jobs import ProjectionJobs
from projector_core.projection.warmup import start_warm_up, use_numba_cache
from projector_core.session import SessionState
from projector_core.storage.lod_store import LodStore
from projector_core.storage.result_cache import ResultCache

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
SAMPLE_DATA = Path(__file__).resolve().parent.parent / "sample_data"
log = logging.getLogger("projector")


def create_app(
    logdir: str | Path | None = None,
    *,
    cache_dir: Path | None = None,
    device: str = "cpu",
    catalog: Catalog | None = None,
    refresh_seconds: float = 2.0,
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
) -> FastAPI:
    """Build the app. ``catalog`` may be passed already loaded (the CLI loads it with progress).

    ``allowed_hosts`` bounds the Host header (default: loopback names only), so that a web page
    cannot reach the local server through DNS rebinding; ``["*"]`` allows any.
    ``background_bytes``: tensor files this big are read after the server is up (see
    ``Catalog``). ``warm_up``: import and compile the compute libraries in the background once
    the server is up, so the first projection does not wait for them (``warmup.py``). ``cluster``
    (``projector serve --dask``) computes on chunked embeddings' shards; its failures are 503.
    ``token``: every request needs it (``access.py``); writes come only from the server's own
    pages, or from ``allowed_origins``' (default: ``$PROJECTOR_PROXY_URL``'s).
    ``unfollowed_grace``: seconds after which a job a page started, and no page follows any
    more, is cancelled (``projector_core.jobs.followers``).
    ``prepare_view``: once loaded, compute what a first visit's default view asks for
    (``projector_core/projection/default_view.py``).
    """
    if catalog is None:
        catalog = Catalog(Path(logdir) if logdir is not None else SAMPLE_DATA, cache_dir=cache_dir,
                          background_bytes=background_bytes)
        catalog.refresh()
    if warm_up:
        use_numba_cache(catalog.cache.directory)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(_keep_fresh(catalog, refresh_seconds)) if refresh_seconds else None
        if warm_up:
            start_warm_up(after=catalog.wait_loaded, jobs=app.state.jobs)
        if prepare_view and cluster is None:
            start_preparing(catalog, app.state.projection_jobs, app.state.lod, device)
        yield
        if task is not None:
            task.cancel()
        app.state.jobs.shutdown()
        app.state.followers.stop()

    app = FastAPI(
        title="Projector",
        version="0.1.0",
        description="Embedding projector: runs, tensors, metadata, projections and neighbours.",
        lifespan=lifespan,
        docs_url=None,  # routes/docs.py serves /docs with its own copy of Swagger UI (offline)
    )
    app.state.catalog = catalog
    app.state.device = device
    app.state.cluster = cluster
    app.state.jobs = JobManager()
    app.state.followers = Followers(unfollowed_grace)
    app.state.projection_jobs = ProjectionJobs(app.state.jobs, ResultCache(catalog.cache.directory))
    app.state.lod = LodStore()  # orders, bounds and tiles of done projections
    app.state.session = SessionState()  # shared with a notebook widget
    app.state.uploads = Uploads(catalog)
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes,
                       paths={uploads.UPLOAD_PATH: uploads.upload_limit(max_upload_bytes)})
    add_access_control(app, token, allowed_origins)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts or LOOPBACK_HOSTS)

    add_error_handlers(app)  # every error's status: error_responses.py
    document(app)  # what /openapi.json adds to FastAPI's schema: openapi_docs.py

    app.include_router(data.router)
    app.include_router(sprites.router)
    app.include_router(projections.router)
    app.include_router(jobs.router)
    app.include_router(neighbors.router)
    app.include_router(lod.router)
    app.include_router(tiles.router)
    app.include_router(tile_queries.router)  # pick, select, search over all points
    app.include_router(compare.router)
    app.include_router(export.router)  # GET /api/export/site: the UI's "Export site"
    app.include_router(session.router)
    app.include_router(uploads.router)
    app.include_router(ui.router)
    app.include_router(docs.router)
    return app


async def _keep_fresh(catalog: Catalog, every: float) -> None:
    """Live logdirs: re-scan in a worker thread so new runs and rewritten configs appear."""
    while True:
        await asyncio.sleep(every)
        try:
            await asyncio.to_thread(catalog.refresh)
        except Exception:  # a scan must never stop the server; the next one retries
            log.exception("refreshing %s failed", catalog.logdir)
