"""Search by meaning: the model that made an embedding's vectors embeds a phrase, the
neighbour indexes find its nearest points, and a finished projection places it on the map.

``encoder.py`` loads a local sentence-transformers model (never downloaded) and encodes;
``models.py`` knows which model made which embedding (declared by ``projector serve --model``,
by the writer's sidecar ``projector_models.json`` or by a text column's own model), loads it
in the background as a job and refuses one that does not fit the vectors; ``placement.py``
puts a new vector on a finished projection's map; ``search.py`` is the one method every door
asks (``ProjectionService.search_meaning``).
"""
