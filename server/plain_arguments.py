"""What ``serve``, ``export``, ``render`` and ``mcp`` share on the command line: the plain-array
options (``--metadata``, ``--sprite``, ``--vector-column``, ...), the LOGDIR argument's checks
and the catalog built from them, so a ``.npy`` + ``meta.tsv`` that can be served can also be
exported, rendered and given to an assistant (issue 33, item 4); and a port in 0..65535."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from projector_core.data.catalog import Catalog, PlainOptions


def port_number(text: str) -> int:
    """argparse's type for ``--port``: a clear error instead of an OverflowError at bind."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: give 0..65535 (0: any free port)")
    return port


def add_plain_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The plain-array options on ``parser``; :func:`plain_options` reads them back."""
    plain = parser.add_argument_group("plain arrays (a .npy/.npz/.parquet/.tsv given instead of "
                                      "a LOGDIR)")
    plain.add_argument("--metadata", help="metadata TSV for the array (TensorBoard's header rule)")
    plain.add_argument("--sprite", help="sprite image for the array")
    plain.add_argument("--sprite-dim", type=int, nargs=2, metavar=("W", "H"),
                       help="size of one thumbnail in the sprite")
    plain.add_argument("--vector-column", help="parquet: the list column holding the vectors")
    plain.add_argument("--shards", action="store_true",
                       help="LOGDIR is a folder of .npy files holding consecutive rows of one "
                       "embedding (a zarr array is recognised by itself)")
    return plain


def plain_options(args: argparse.Namespace) -> PlainOptions:
    from projector_core.data.catalog import PlainOptions

    return PlainOptions(
        metadata=Path(args.metadata) if args.metadata else None,
        sprite=Path(args.sprite) if args.sprite else None,
        sprite_dim=tuple(args.sprite_dim) if args.sprite_dim else None,
        vector_column=args.vector_column,
        shards=args.shards,
    )


def resolve_logdir(logdir: str | Path | None) -> Path:
    """The folder or array file to load (default: the bundled samples); ValueError says why
    it cannot be."""
    from projector.server.app import SAMPLE_DATA

    from projector_core.formats.arrays import PLAIN_SUFFIXES
    from projector_core.formats.config import CONFIG_NAMES

    root = Path(logdir) if logdir else SAMPLE_DATA
    if not root.exists():
        raise ValueError(f"LOGDIR {root} does not exist")
    if root.is_file() and root.name in CONFIG_NAMES:  # its run is the folder it is in
        root = root.parent
    if root.is_file() and root.suffix.lower() not in (*PLAIN_SUFFIXES, ".tsv"):
        raise ValueError(f"{root} is a file but not a .npy, .npz, .parquet or .tsv tensor; "
                         "pass a log directory or an array file")
    return root


def load_catalog(logdir: str | Path | None, plain: PlainOptions | None = None,
                 cache_dir: str | Path | None = None) -> Catalog:
    """The catalog ``export``, ``render`` and ``mcp`` work on; ValueError when it holds nothing."""
    from projector_core.data.catalog import Catalog

    root = resolve_logdir(logdir)
    catalog = Catalog(root, cache_dir=Path(cache_dir) if cache_dir else None, plain=plain)
    catalog.refresh()
    if not catalog.runs():
        raise ValueError(f"no projector_config.pbtxt or projector_config.json found under {root}")
    return catalog
