"""``projector annotations export|import``: labels taken back to training, and brought in
from a file, without a server (the same store and service as ``projector serve``'s).

``export`` writes the metadata with the annotation columns beside the original ones: the TSV
in TensorBoard's metadata format, so a config's ``metadata_path`` may name it and TensorBoard
shows the labels; CSV or parquet for a training script. ``import`` sets every row of a column
from a file's column, as one edit (undone as one).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from projector.server.plain_arguments import load_catalog

from projector_core.annotations import AnnotationService, StoreError
from projector_core.annotations.export import FORMATS
from projector_core.annotations.serving import serve_annotations
from projector_core.data.model import Embedding


def _opened(args: argparse.Namespace) -> tuple[AnnotationService, list[Embedding]]:
    """The service over the LOGDIR and the embeddings ``--run`` / ``--embedding`` name."""
    catalog = load_catalog(args.logdir, cache_dir=args.cache_dir)
    service = serve_annotations(catalog, args.annotations, catalog.embedding)
    if service.store is None:
        raise ValueError(service.off_reason)
    found = [e for run in catalog.runs() for e in run.embeddings
             if (args.run is None or e.run == args.run)
             and (args.embedding is None or e.name == args.embedding)]
    if not found:
        known = ", ".join(f"{e.run}/{e.name}" for r in catalog.runs() for e in r.embeddings)
        raise ValueError(f"no embedding matches --run/--embedding (embeddings: {known})")
    return service, found


def _one(found: list[Embedding], service: AnnotationService, annotated_only: bool) -> Embedding:
    """The one embedding meant: named, or the only one (with labels, for an export)."""
    if len(found) > 1 and annotated_only:
        labelled = {(run, tag) for run, tag in service.annotated()}
        found = [e for e in found if (e.run, service.key_of(e).tag) in labelled] or found
    if len(found) > 1:
        names = ", ".join(f"{e.run}/{e.name}" for e in found)
        raise ValueError(f"several embeddings ({names}): choose one with --run/--embedding")
    return found[0]


def _export(args: argparse.Namespace) -> int:
    try:
        service, found = _opened(args)
        embedding = _one(found, service, annotated_only=True)
        columns = args.column or None
        output = args.output or re.sub(r"[^A-Za-z0-9._-]+", "_", f"{embedding.run}-"
                                       f"{embedding.name}-annotations") + f".{args.format}"
        if output == "-":
            service.export(embedding.run, embedding.name, args.format, sys.stdout.buffer, columns)
            return 0
        with open(output, "wb") as sink:
            service.export(embedding.run, embedding.name, args.format, sink, columns)
    except (ValueError, LookupError, OSError, StoreError) as error:  # DataError: a ValueError
        print(f"projector annotations export: {error}", file=sys.stderr)
        return 2
    shown = [c.name for c in service.columns(embedding.run, embedding.name) if c.shown]
    print(f"wrote {output}: {embedding.run}/{embedding.name} with "
          f"{', '.join(columns or shown) or 'no annotation column'}")
    return 0


def _import(args: argparse.Namespace) -> int:
    try:
        service, found = _opened(args)
        embedding = _one(found, service, annotated_only=False)
        path = Path(args.file)
        committed = service.import_column(embedding.run, embedding.name, args.column,
                                          path.read_bytes(), path.name, args.format, args.user,
                                          args.kind)
    except (ValueError, LookupError, OSError, StoreError) as error:
        print(f"projector annotations import: {error}", file=sys.stderr)
        return 2
    print(f"imported {args.column!r} into {embedding.run}/{embedding.name}: "
          f"{committed.changed:,} rows changed (edit {committed.edit.id}, undone as one)")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """``projector annotations export|import`` on ``projector``'s parser."""
    group = commands.add_parser("annotations", help="export labels with the metadata, or "
                                "import a column from a file")
    actions = group.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="the metadata with the annotation columns "
                                "beside the original ones")
    imported = actions.add_parser("import", help="set a column from a file's column (TSV, CSV "
                                  "with a header, or parquet; one row per point)")
    for action in (export, imported):
        action.add_argument("logdir", help="the log directory the labels belong to")
    imported.add_argument("file", help="the file")
    for action in (export, imported):
        action.add_argument("--run", help="the run (needed when there are several embeddings)")
        action.add_argument("--embedding", help="the embedding (tensor name)")
        action.add_argument("--annotations", metavar="PATH", help="the store (default "
                            "$PROJECTOR_ANNOTATIONS or the user data directory)")
        action.add_argument("--cache-dir", help="where parsed tensors are cached")
    export.add_argument("--format", choices=FORMATS, default="tsv",
                        help="tsv (TensorBoard's metadata format), csv or parquet")
    export.add_argument("-o", "--output", help="the file to write ('-': standard output; "
                        "default RUN-EMBEDDING-annotations.FORMAT here)")
    export.add_argument("--column", action="append", help="only this annotation column "
                        "(repeatable; default every shown one; a hidden one alone)")
    export.set_defaults(handler=_export)
    imported.add_argument("--column", required=True, help="the annotation column to set (the "
                          "file's column of that name, or its only column)")
    imported.add_argument("--format", choices=FORMATS, help="default: by the file's suffix")
    imported.add_argument("--kind", choices=("label", "flag", "note"),
                          help="a new column's kind (default label)")
    imported.add_argument("--user", help="the author the edit is recorded under (default local)")
    imported.set_defaults(handler=_import)
