"""How a projection reaches the page: whole or as tiles, and over which axes.

The one place the server decides "from tiles?": ``/api/runs`` tells the page per embedding
(``tiles``, ``tsne_umap_tiles``), the default view's preparation builds tiles when they will
be asked for, and the metadata route refuses a whole TSV of a set shown from tiles. The page
asks nothing else. Also the one rule for the coordinate columns a view names (``axes``): the
level-of-detail order, tiles, picks and the result route read them through
:func:`chosen_axes`.
"""

from __future__ import annotations

from projector_core.distributed.coords_store import WHOLE_BYTES

TILES_ABOVE = 2_000_000  # above this many points a 2-D PCA or custom view comes as tiles


def shown_from_tiles(points: int) -> bool:
    """Whether the page shows this embedding's 2-D PCA and custom views from tiles (and opens
    in 2-D, the tiles' quadtree being over two axes), not as the whole set in LOD order."""
    return points > TILES_ABOVE


def tsne_umap_from_tiles(points: int) -> bool:
    """Whether this embedding's 2-D t-SNE and UMAP come to the page as tiles: followed for
    progress alone (no frames, never ``/result``), then shown from their tiles, because their
    N x 2 float32 is over the most a page takes whole (``WHOLE_BYTES``: 33.5M points). The
    same figure stops a cluster's frames and whole reads (``distributed/coords_store.py``), so
    a layout the page follows whole is one the server can send whole."""
    return points * 2 * 4 > WHOLE_BYTES


def chosen_axes(asked: list[int] | None, columns: int, tiles: bool = False) -> list[int]:
    """The result columns a view shows: ``asked`` (ValueError unless 1 to 3 of
    0..``columns`` - 1), else the first three, or two for tiles (their quadtree is over two)."""
    if asked is None:
        return list(range(min(columns, 2 if tiles else 3)))
    if not 1 <= len(asked) <= 3 or any(not 0 <= a < columns for a in asked):
        raise ValueError(f"axes {','.join(map(str, asked))}: 1 to 3 columns of "
                         f"0..{columns - 1}")
    return list(asked)


def axes_as_shown(asked: list[int], columns: int) -> list[int]:
    """The axes the page shows for ``asked`` over a result of ``columns`` columns: 2-D when a
    third is asked of fewer than three, an axis past the last column as the last."""
    if len(asked) == 3 and columns < 3:
        asked = asked[:2]
    return [min(a, columns - 1) for a in asked]
