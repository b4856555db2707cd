"""A projection's points as level-of-detail tiles: built from a done projection's result.

The LOD order (``order.py``), the quadtree tiles cut from it (``build.py``; on a cluster by
the workers, ``sharded_build.py`` with ``shard_keys.py``), where they are kept (``store.py``
in memory, ``stored.py`` on disk), the one interface every answer reads them through
(``source.py``), the questions answered over them (``queries.py``) and whether a view is
shown from them at all (``view.py``). docs/ARCHITECTURE.md, "Tiles", describes the format.
"""
