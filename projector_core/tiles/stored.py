"""Tiles in their stored form, read tile by tile: what serves a projection too large to hold.

The stored form (docs/ARCHITECTURE.md, "Tiles"): a zarr group with three arrays in tile
order, ``rows`` (uint32, N), ``coords`` (float32, N x k) and ``codes/<column>`` (int32, N,
its dictionary in the array's attributes), chunked by the tile budget, and the index table
``index`` (int32 ``z``, ``x``, ``y``; int64 ``offset``, ``count``) with the manifest's
budget, box and bounds in the group's attributes. A tile is one slice of each array, so the
server reads a tile's bytes and holds only the index (a few thousand rows at 100M points).
The Dask workers write it (``tiles/sharded_build.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from projector_core.storage.recent import Recent


def write_index(path: str, tiles: np.ndarray, offsets: np.ndarray, counts: np.ndarray, *,
                budget: int, axes: list[int], lo: list[float], hi: list[float],
                bounds: dict[str, list[float]]) -> None:
    """Write the index table and the manifest's fields into the group at ``path``."""
    import zarr

    group = zarr.open_group(store=path, mode="r+")
    size = max(1, tiles.shape[0])
    for name, values in (("z", tiles[:, 0]), ("x", tiles[:, 1]), ("y", tiles[:, 2])):
        group.create_array(f"index/{name}", shape=(tiles.shape[0],), chunks=(size,),
                           dtype="<i4", compressors=None)[:] = values.astype(np.int32)
    for name, values in (("offset", offsets), ("count", counts)):
        group.create_array(f"index/{name}", shape=(tiles.shape[0],), chunks=(size,),
                           dtype="<i8", compressors=None)[:] = values.astype(np.int64)
    group.attrs.update({"budget": int(budget), "axes": [int(a) for a in axes],
                        "box": {"lo": [float(v) for v in lo], "hi": [float(v) for v in hi]},
                        "bounds": bounds, "total": int(counts.sum())})


_OPEN: Recent[str, ZarrTileSource] = Recent(8)  # stores opened once, not per tile request


class ZarrTileSource:
    """A tile store on disk behind the tile contract: ``manifest``, ``read``, ``codes_dictionary``."""

    def __init__(self, path: str) -> None:
        import zarr

        self.path = str(path)
        self._group: Any = zarr.open_group(store=self.path, mode="r")  # zarr's types: Array | Group
        index: Any = self._group["index"]
        self._tiles = np.column_stack([np.asarray(index[n][:]) for n in ("z", "x", "y")]) \
            .astype(np.int32).reshape(-1, 3)
        self._offsets = np.asarray(index["offset"][:], np.int64)
        self._counts = np.asarray(index["count"][:], np.int64)
        # (z, x, y) -> tile number: one dict lookup per tile request.
        self._where = {(int(z), int(x), int(y)): t for t, (z, x, y) in enumerate(self._tiles)}
        self._attrs: dict[str, Any] = dict(self._group.attrs)

    def manifest(self) -> dict[str, Any]:
        """The tile index JSON the routes answer: budget, total, axes, box, bounds, tiles."""
        return {"budget": self._attrs["budget"], "total": self._attrs["total"],
                "axes": self._attrs["axes"], "box": self._attrs["box"],
                "bounds": self._attrs["bounds"],
                "tiles": np.column_stack([self._tiles, self._counts]).astype(int).tolist()}

    def read(self, z: int, x: int, y: int, column: str | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
        """(rows uint32 [n], coords float32 [n, k], codes int32 [n] or None) of one tile;
        None when no such tile. An unknown column is a KeyError naming the known ones."""
        tile = self._where.get((z, x, y))
        if tile is None:
            return None
        start = int(self._offsets[tile])
        stop = start + int(self._counts[tile])
        rows = np.asarray(self._group["rows"][start:stop], np.uint32)
        coords = np.asarray(self._group["coords"][start:stop], np.float32)
        codes = None
        if column is not None:
            codes = np.asarray(self._codes(column)[start:stop], np.int32)
        return rows, coords, codes

    def manifest_axes(self) -> list[int]:
        return list(self._attrs["axes"])

    def codes_dictionary(self, column: str) -> list[str]:
        """The categories the column's codes index into."""
        return list(self._codes(column).attrs["dictionary"])

    def columns(self) -> list[str]:
        return sorted(self._group["codes"].array_keys()) if "codes" in self._group else []

    def _codes(self, column: str) -> Any:
        if column not in self.columns():
            raise KeyError(f"unknown column {column!r}; the tiles carry "
                           f"{', '.join(self.columns()) or 'no column'}")
        return self._group["codes"][column]


def stored_tile_source(coordinates: Any, axes: list[int]) -> ZarrTileSource | None:
    """The tiles the workers wrote for a stored result over ``axes`` (None when the result
    is in memory, or its tiles are over other axes): what the tile routes serve it from."""
    path = getattr(coordinates, "tiles", None)
    if path is None:
        return None
    source = _OPEN.get_or_compute(str(path), lambda: ZarrTileSource(path))
    return source if source.manifest_axes() == list(axes) else None
