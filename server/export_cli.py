"""``projector export`` and ``projector render``: thin doors to the projection service.

They load the LOGDIR as ``projector serve`` does, ask a service of their own (one worker:
projections in turn, over the server's result cache) for the site or the picture, hand it the
app's page (rendered here, where the templates live) and print one progress line while the
work goes on. On Ctrl+C (``cli.main`` exits 130) they first wait for the running projection
to stop at its next step (``ProjectionService.stop``), and an export leaves its folder as it
was.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from projector.server.console import StageLine
from projector.server.plain_arguments import add_plain_arguments, load_catalog, plain_options

from projector_core.projection.default_request import WITH_DEFAULTS

if TYPE_CHECKING:
    from projector_core.service import ProjectionService


def _service(args: argparse.Namespace) -> ProjectionService:
    """The LOGDIR (default: the samples) loaded as ``serve`` loads it (the same plain-array
    options), under a service of its own with one worker (its embeddings showing the
    annotation columns of ``projector serve``'s store)."""
    from projector_core.service import ProjectionService

    catalog = load_catalog(args.logdir, plain_options(args), args.cache_dir)
    return ProjectionService.standalone(catalog, args.device, workers=1)


def _export(args: argparse.Namespace) -> int:
    from projector.server.routes.ui import site_page

    from projector_core.errors import DataError, UnknownName
    from projector_core.export.site import ExportOptions
    from projector_core.semantic.declarations import declared_models

    line = StageLine()
    try:
        service = _service(args)
        options = ExportOptions(run=args.run, embedding=args.embedding,
                                projections=tuple(dict.fromkeys(args.projection or ["pca"])),
                                neighbors=args.neighbors,
                                metrics=tuple(dict.fromkeys(args.metric or ["cosine"])),
                                max_points=args.max_points, gzip=args.gzip,
                                models=declared_models(args.model or [], [
                                    (run.name, e.name) for run in service.runs()
                                    for e in run.embeddings]))
        try:
            summary = service.export_site(Path(args.out), site_page(), options, line)
        except KeyboardInterrupt:
            line.end()
            print(f"projector export: interrupted; {args.out} is left as it was", file=sys.stderr)
            raise
        finally:
            line.end()
            service.stop(wait=True)  # no kernel may run on as Python exits
    except (ValueError, DataError, UnknownName) as error:
        print(f"projector export: {error}", file=sys.stderr)
        return 2
    for note in summary.notes:
        print(f"note: {note}")
    print(f"wrote {summary.files} data files for {', '.join(summary.embeddings)} into "
          f"{summary.out}: {summary.total_bytes / 2**20:.1f} MiB in all")
    print(f"serve it with: python -m http.server -d {summary.out}  (browsers refuse the app's "
          "modules from file://; any static host works)")
    return 0


def _render(args: argparse.Namespace) -> int:
    from projector_core.errors import DataError, UnknownName

    line = StageLine()
    try:
        service = _service(args)
        found = service.chosen_embeddings(args.run, args.embedding)
        if len(found) > 1:
            names = ", ".join(f"{e.run}/{e.name}" for e in found)
            raise ValueError(f"several embeddings ({names}): choose one with --run/--embedding")
        try:
            image = service.render(found[0], args.projection, Path(args.output), args.width,
                                   None if args.color_by == "none" else args.color_by, line,
                                   height=args.height, point_size=args.point_size,
                                   legend=not args.no_legend)
        finally:
            line.end()
            service.stop(wait=True)  # no kernel may run on as Python exits
    except (ValueError, DataError, UnknownName, OSError) as error:
        print(f"projector render: {error}", file=sys.stderr)
        return 2
    print(f"wrote {args.output}: {image.width} x {image.height} px, {found[0].run}/"
          f"{found[0].name} {args.projection}")
    return 0


def add_commands(commands: argparse._SubParsersAction) -> None:
    """The export subcommands on ``projector``'s parser."""
    export = commands.add_parser("export", help="write a static site of a LOGDIR's views "
                                 "(no server needed to open it)")
    export.add_argument("logdir", help="log directory (or plain array file) to export")
    export.add_argument("out", help="folder for the site (new, empty, or an earlier export)")
    export.add_argument("--run", help="only this run")
    export.add_argument("--embedding", help="only this embedding (tensor name)")
    export.add_argument("--projection", action="extend", nargs="+", choices=WITH_DEFAULTS,
                        help="projections to precompute (several, or repeated; default pca)")
    export.add_argument("--neighbors", type=int, default=30, metavar="K",
                        help="nearest neighbours kept per point (default 30)")
    export.add_argument("--metric", action="extend", nargs="+", choices=("cosine", "euclidean"),
                        help="neighbour metrics (default cosine)")
    export.add_argument("--max-points", type=int, metavar="N",
                        help="keep the first N points of the level-of-detail order (an even "
                             "sample) of sets larger than N")
    export.add_argument("--gzip", action="store_true",
                        help="gzip the data files (the page decompresses them itself)")
    export.add_argument("--device", default="cpu", help="array device for kernels: cpu or cuda")
    export.add_argument("--cache-dir", help="where parsed tensors and results are cached")
    export.add_argument("--model", action="append", metavar="MODEL | RUN/EMBEDDING=MODEL",
                        help="the model that made the vectors, as for serve: the site names it, "
                        "and its meaning mode says phrases need a server (no model runs there)")
    add_plain_arguments(export)
    export.set_defaults(handler=_export)
    render = commands.add_parser("render", help="draw a projection's first two columns (PCA: "
                                 "components 1 and 2) as a picture without a browser")
    render.add_argument("logdir", help="log directory (or plain array file)")
    render.add_argument("-o", "--output", required=True, help="picture file (.png)")
    render.add_argument("--projection", choices=WITH_DEFAULTS, default="pca",
                        help="the projection drawn (default pca; t-SNE and UMAP are computed, "
                        "or reused from the cache)")
    render.add_argument("--run", help="the run (needed when there are several embeddings)")
    render.add_argument("--embedding", help="the embedding (tensor name)")
    render.add_argument("--width", type=int, default=3000, help="pixels (default 3000)")
    render.add_argument("--height", type=int, help="pixels (default: from the points' aspect)")
    render.add_argument("--color-by", default="auto", help="metadata column to colour by "
                        "(default: the app's choice; 'none' for one colour)")
    render.add_argument("--point-size", type=float, help="disc diameter in pixels at 1000 px "
                        "wide (default: the app's size for this many points)")
    render.add_argument("--no-legend", action="store_true", help="leave the legend out")
    render.add_argument("--device", default="cpu", help="array device for kernels: cpu or cuda")
    render.add_argument("--cache-dir", help="where parsed tensors and results are cached")
    add_plain_arguments(render)
    render.set_defaults(handler=_render)
