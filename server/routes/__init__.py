"""One APIRouter per URL family; a URL's handler is in the file its prefix names:

==================================================  ==============================
``/api/health``, ``/api/runs``, ``/api/tensor``,     ``data.py`` (the read API)
``/api/metadata``, ``/api/metadata/column``,
``/api/search``, ``/api/steps``
``/api/sprite``, ``/api/sprite/atlas``, ``/page``     ``sprites.py``
``/api/projections``, ``/api/projections/methods``   ``projections.py``
``/api/jobs``, ``/api/jobs/ID`` and its ``/pause``,   ``jobs.py``
``/resume``, ``/result``, ``/stream`` (WebSocket),
``/clusters``, ``/quality``
``/api/jobs/ID/lod``, ``/api/jobs/ID/lod/points``    ``lod.py``
``/api/jobs/ID/tiles...``                            ``tiles.py``
``/api/neighbors`` (GET and POST)                    ``neighbors.py``
``/api/search/meaning``                              ``meaning.py``
``/api/compare``, ``/api/compare/pairs``             ``compare.py``
``/api/export/site``                                 ``export.py``
``/api/session/state``                               ``session.py``
``/api/uploads``                                     ``uploads.py``
``/api/annotations`` and its ``/history``, ``/undo``,  ``annotations.py``
``/redo``, ``/export``, ``/import``
``/api/bookmarks`` (GET, POST, DELETE)               ``bookmarks.py``
``/api/events`` (server-sent events)                 ``events.py``
``/``, ``/compare``, ``/static/...`` (the pages)     ``ui.py``
``/docs``, ``/openapi.json``                         ``docs.py`` (and FastAPI)
==================================================  ==============================

What a route takes from the app is in ``server/deps.py``; how an error becomes a status, in
``server/error_responses.py``.
"""
