"""Projector from Python: the one namespace users import from.

``show()`` for scripts, ``Projector`` for notebooks, ``Client`` for a running server's API,
``add_embedding`` to log embeddings from a training loop (PyTorch's call, without torch),
``write_zarr``, ``write_npy_shards`` and ``write_code_column`` for data larger than memory, and
``projector.torch.ProbeLogger`` to log a layer's activations. Where each is defined inside is
free to move: this namespace is the path the README and the docs name.

Every name is imported when first asked for, so ``import projector`` (and the ``projector``
command, which imports this package first) stays light: no web server, no numpy until used.
``Projector`` needs ``anywidget`` (``pip install 'embedding-projector[notebook]'``), and
``projector.torch`` needs torch.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the names below are, for type checkers and the API reference
    from projector.client.answers import ProjectorError
    from projector.client.api import ProjectorClient as Client
    from projector.local_server import LocalServer, memory_server
    from projector.script import show
    from projector.widget import Projector
    from projector_core.formats.chunked_writer import write_npy_shards, write_zarr
    from projector_core.formats.code_columns import write_code_column
    from projector_core.formats.writer import add_embedding

DISTRIBUTION = "embedding-projector"  # "projector" on PyPI is an unrelated package
SOURCE_VERSION = "0.1.0"  # pyproject.toml's [project] version, for a tree run without installing

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:
    __version__ = SOURCE_VERSION

# name -> the module that defines it; imported on first use (module __getattr__, PEP 562)
_WHERE = {
    "Client": "projector.client.api",
    "ProjectorError": "projector.client.answers",  # what a refused Client call raises
    "LocalServer": "projector.local_server",
    "memory_server": "projector.local_server",
    "show": "projector.script",
    "Projector": "projector.widget",
    "add_embedding": "projector_core.formats.writer",
    "write_zarr": "projector_core.formats.chunked_writer",
    "write_npy_shards": "projector_core.formats.chunked_writer",
    "write_code_column": "projector_core.formats.code_columns",
}

__all__ = ["Client", "LocalServer", "Projector", "ProjectorError", "__version__", "add_embedding",
           "memory_server", "show", "write_code_column", "write_npy_shards", "write_zarr"]


def __getattr__(name: str) -> Any:
    """Import a public name from where it is defined, the first time it is asked for."""
    if name == "torch":  # projector.torch.ProbeLogger: imports torch, so only when asked for
        return importlib.import_module("projector.torch")
    if name not in _WHERE:
        raise AttributeError(f"module 'projector' has no attribute {name!r}")
    if name == "Projector":
        try:
            module = importlib.import_module(_WHERE[name])
        except ImportError as exc:
            raise ImportError(f"the notebook widget needs anywidget ({exc}): "
                              "pip install 'embedding-projector[notebook]'") from None
    else:
        module = importlib.import_module(_WHERE[name])
    value = getattr(module, name)
    globals()[name] = value  # asked once: later lookups skip this function
    return value


def __dir__() -> list[str]:
    """The public names with the lazy ones, for completion in a shell or notebook."""
    return sorted({*globals(), *__all__})
