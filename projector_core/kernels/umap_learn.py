"""umap-learn imported without pynndescent.

``umap.umap_`` imports pynndescent at its top, and pynndescent compiles dozens of numba
functions while it is imported: about 12 s of one core on an empty numba cache (2 s warm),
for an NN-descent that our UMAP never runs (its neighbours come from our own exact and
approximate indexes, ``kernels/umap.py``). So umap-learn is imported here with stand-ins for
the three names it takes from pynndescent; each stand-in imports the real pynndescent the
first time it is used, so ``umap.UMAP`` (the Dask sample fit, the tests' reference) still
works as before, and pays the import then. pynndescent itself is left unimported.

umap-learn caches few of its numba kernels on disk itself; the others are marked for caching
here, before their first compile, so a later process loads them from numba's cache directory
(``warmup.use_numba_cache``) instead of compiling them again.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Iterator, Mapping
from typing import Any

# Held while the compute libraries are imported: numba's modules import each other in circles,
# and two threads importing them at once can meet a half-initialised module (ImportError).
import_lock = threading.RLock()


def _real(module: str, name: str) -> Any:
    return getattr(importlib.import_module(module), name)


class _DeferredMapping(Mapping[str, Any]):
    """pynndescent's table of distance names, read from pynndescent when first looked up."""

    def __init__(self, module: str, name: str) -> None:
        self._where = (module, name)

    def __getitem__(self, key: str) -> Any:
        return _real(*self._where)[key]

    def __iter__(self) -> Iterator[str]:
        return iter(_real(*self._where))

    def __len__(self) -> int:
        return len(_real(*self._where))


class _DeferredClass(type):
    """Calls and isinstance checks go to the real ``pynndescent.NNDescent``."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _real("pynndescent", "NNDescent")(*args, **kwargs)

    def __instancecheck__(cls, instance: object) -> bool:
        return "pynndescent" in sys.modules and isinstance(instance, _real("pynndescent", "NNDescent"))


class NNDescent(metaclass=_DeferredClass):
    """Stand-in for ``pynndescent.NNDescent`` (see :class:`_DeferredClass`)."""


def _stand_ins() -> dict[str, types.ModuleType]:
    names: dict[str, dict[str, object]] = {
        "pynndescent": {"NNDescent": NNDescent},
        "pynndescent.distances": {
            "named_distances": _DeferredMapping("pynndescent.distances", "named_distances")},
        "pynndescent.sparse": {
            "sparse_named_distances": _DeferredMapping("pynndescent.sparse", "sparse_named_distances")},
    }
    modules = {}
    for name, attributes in names.items():
        module = types.ModuleType(name, "stand-in while umap-learn is imported")
        module.__dict__.update(attributes)
        module.__path__ = []  # a package, so its submodules resolve to the stand-ins above
        modules[name] = module
    return modules


def umap_module() -> types.ModuleType:
    """``umap.umap_``, imported (once) without importing pynndescent, its kernels cached."""
    with import_lock:
        if "umap.umap_" in sys.modules or "pynndescent" in sys.modules:
            module = importlib.import_module("umap.umap_")
        else:
            stand_ins = _stand_ins()
            sys.modules.update(stand_ins)
            try:
                module = importlib.import_module("umap.umap_")
            finally:
                for name, stand_in in stand_ins.items():
                    if sys.modules.get(name) is stand_in:
                        del sys.modules[name]
        if not _cached:
            _cached.append(_cache_kernels())
        return module


_cached: list[int] = []  # how many kernels were marked, once marked
_KERNEL_MODULES = ("umap.umap_", "umap.layouts", "umap.spectral", "umap.utils")


def _cache_kernels() -> int:
    """Mark umap-learn's numba kernels for the on-disk cache; how many were marked."""
    from numba.core.dispatcher import Dispatcher

    marked = 0
    for name in _KERNEL_MODULES:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, Dispatcher):
                try:
                    value.enable_caching()
                except RuntimeError:  # no source file to key the cache on: compiled per process
                    continue
                marked += 1
    return marked
