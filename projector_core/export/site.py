"""``projector export``: a static site of a LOGDIR's views that any static host serves
(GitHub Pages, S3, ``python -m http.server``), with no Python behind it.

The site is the app itself (the front end's files, unchanged, under ``static/``, and the
server's index page) plus ``static.json``, the manifest the page finds through a
``<meta name="projector-static">`` tag: it then reads the precomputed files listed there
instead of ``/api/`` (``frontend/js/static_mode.js``) and hides what needs a server.

Layout::

    index.html               the app's page, with the static-mode tag
    static/                  frontend/ (tests left out)
    static.json              manifest: runs as GET /api/runs lists them, one entry per embedding
    data/N/                  one embedding: PROJ.f32, PROJ.lod-AXES.i32, metadata.tsv,
                             columns/J.bin, neighbors/METRIC/CHUNK.bin, sprite/, bookmarks.json
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from projector_core.data.catalog import Catalog
from projector_core.data.model import Embedding
from projector_core.errors import DataError
from projector_core.export.embedding_data import EmbeddingExport, Progress, Project, export_embedding
from projector_core.export.files import SiteFiles
from projector_core.projection.default_request import WITH_DEFAULTS
from projector_core.projection.methods import parameter_table

MANIFEST = "static.json"
SITE_ENTRIES = ("static", "data", "index.html", MANIFEST)  # what an export owns in its folder
STATIC_TAG = f'<meta name="projector-static" content="{MANIFEST}">'
VIEW = re.compile(r"#s=[A-Za-z0-9_-]{1,20000}")
# Browsers refuse ES modules from file:// pages: say so instead of showing an empty app. A
# view the site was exported with becomes the URL hash before the app reads it.
OPENING_SCRIPT = """<script>
    if (location.protocol === 'file:') addEventListener('DOMContentLoaded', () => {
      const notice = Object.assign(document.createElement('p'), { className: 'notice' });
      notice.dataset.testid = 'file-url-notice';
      notice.textContent = 'Browsers do not run this app from a file: serve this folder '
        + '(python -m http.server, or any static host) and open it from there.';
      document.body.prepend(notice);
    });
    VIEW_LINE</script>"""
FORMAT = "projector-static-site"
VERSION = 1


@dataclass(frozen=True)
class SitePage:
    """The app's page as the server renders it and the front end's folder: handed in by the
    web layer, so this module never imports it."""

    html: str
    frontend: Path


@dataclass
class ExportOptions:
    run: str | None = None
    embedding: str | None = None
    projections: tuple[str, ...] = ("pca",)
    neighbors: int = 30
    metrics: tuple[str, ...] = ("cosine",)
    max_points: int | None = None
    gzip: bool = False
    device: str = "cpu"
    cache_dir: Path | None = None
    # Per method, the request to export instead of the app's default (the UI's current view).
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    view: str | None = None  # a URL hash (#s=...): the state the site opens in
    # (run, embedding or tag) -> the model that made it, as `serve --model` declares them (the
    # data's own are read with it): named in the site, whose page says phrases need a server.
    models: dict[tuple[str, str], str] = field(default_factory=dict)


@dataclass
class ExportSummary:
    out: Path
    files: int
    total_bytes: int
    embeddings: list[str]
    notes: list[str] = field(default_factory=list)


def check_options(options: ExportOptions) -> None:
    """ValueError naming the option that cannot be exported."""
    unknown = [m for m in options.projections if m not in WITH_DEFAULTS]
    if unknown or not options.projections:
        raise ValueError(f"--projection: {', '.join(unknown) or 'none given'}; choose from "
                         f"{', '.join(WITH_DEFAULTS)}")
    if options.neighbors < 0:
        raise ValueError(f"--neighbors must be 0 or more, not {options.neighbors}")
    if options.max_points is not None and options.max_points < 2:
        raise ValueError(f"--max-points must be at least 2, not {options.max_points}")
    bad = [m for m in options.metrics if m not in ("cosine", "euclidean")]
    if bad:
        raise ValueError(f"--metric: {', '.join(bad)}; choose cosine or euclidean")
    if options.view is not None and not VIEW.fullmatch(options.view):
        raise ValueError("view must be the app's URL hash, #s= and base64url text")


def chosen_embeddings(catalog: Catalog, options: ExportOptions) -> list[Embedding]:
    """The readable embeddings ``--run`` / ``--embedding`` name (all by default)."""
    if options.run is not None:  # an unknown name: the catalogue's one sentence (UnknownName)
        runs = [catalog.run(options.run)]
        if options.embedding is not None:
            catalog.embedding(options.run, options.embedding)
    else:
        runs = catalog.runs()
    found = [e for r in runs for e in r.embeddings
             if options.embedding is None or e.name == options.embedding]
    if options.embedding is not None and not found:
        known = ", ".join(f"{r.name}/{e.name}" for r in runs for e in r.embeddings) or "none"
        raise ValueError(f"--embedding {options.embedding!r}: not in the chosen runs "
                         f"(embeddings: {known})")
    readable = [e for e in found if e.shape is not None and "tensor" not in e.errors]
    if not readable:
        raise ValueError("no readable embedding to export")
    return readable


def check_out(out: Path) -> None:
    """``out`` may be new, an empty folder or an earlier export's (replaced once the new one
    is whole); never a file or a folder of other files."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} is a file, not a folder for the site")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise ValueError(f"{out} is not empty and holds no earlier export ({MANIFEST}); "
                         "choose a new or empty folder")
    out.parent.mkdir(parents=True, exist_ok=True)


def publish(staged: Path, out: Path) -> None:
    """The whole site written in ``staged`` becomes ``out``: a new or empty folder by one
    rename; an earlier export's entries are replaced (folders moved aside first, files
    renamed over, the manifest last, so ``out`` always holds one) and other files there (a
    CNAME, a .git) are kept."""
    if not out.exists() or not any(out.iterdir()):
        os.replace(staged, out)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    try:
        for name in SITE_ENTRIES:
            if (out / name).is_dir():
                os.replace(out / name, aside / name)
            os.replace(staged / name, out / name)
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def static_page(html: str, view: str | None = None) -> str:
    """The app's page with the tag that puts the front end in static mode."""
    if "</head>" not in html:
        raise ValueError("the app's page has no </head> to put the static-mode tag before")
    line = (f"if (!location.hash) history.replaceState(null, '', {json.dumps(view)});"
            if view else "")
    script = OPENING_SCRIPT.replace("VIEW_LINE", line)
    return html.replace("</head>", f"  {STATIC_TAG}\n  {script}\n</head>", 1)


def copy_front_end(frontend: Path, target: Path) -> None:
    shutil.copytree(frontend, target, ignore=shutil.ignore_patterns("tests", "__pycache__",
                                                                     "*.py", "*.pyc"))


def export_site(catalog: Catalog, out: Path, page: SitePage, options: ExportOptions,
                project: Project, progress: Progress) -> ExportSummary:
    """Writes the site into ``out``, each projection asked of ``project`` (the service's);
    ValueError (or DataError) when it cannot."""
    check_options(options)
    embeddings = chosen_embeddings(catalog, options)
    skipped = [f"{e.run}/{e.name} is left out: {e.error}" for r in catalog.runs()
               for e in r.embeddings if e.error and (options.run in (None, r.name))
               and (options.embedding in (None, e.name)) and e not in embeddings]
    check_out(out)
    # Written beside ``out`` and published whole: an export stopped half-way (Ctrl+C, an
    # error) leaves ``out`` as it was, never a folder the next export refuses.
    staged = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        progress("copying the front end", None)
        copy_front_end(page.frontend, staged / "static")
        files = SiteFiles(staged, options.gzip)
        what = EmbeddingExport(tuple(options.projections), options.neighbors, options.metrics,
                               options.max_points, options.device, options.cache_dir,
                               dict(options.requests), dict(options.models))
        entries = []
        for i, embedding in enumerate(embeddings):
            try:
                entries.append(export_embedding(embedding, files, f"data/{i}", what, project,
                                                progress))
            except DataError:
                raise
            except ValueError as error:
                raise ValueError(f"{embedding.run}/{embedding.name}: {error}") from None
        (staged / "index.html").write_text(static_page(page.html, options.view), encoding="utf-8")
        files.json(MANIFEST, manifest(entries, options.gzip))
        total = files.total_bytes + _size(staged / "static") + (staged / "index.html").stat().st_size
        publish(staged, out)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return ExportSummary(out, files.count, total, [f"{e['run']}/{e['embedding']}" for e in entries],
                         skipped + what.notes)


def manifest(entries: list[dict[str, Any]], gzip: bool) -> dict[str, Any]:
    """``static.json``: runs as ``GET /api/runs`` answers them, each embedding's files, and
    the parameter table without data (``GET /api/projections/methods``: what data loaded in
    the page asks its default requests of)."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        runs.setdefault(entry["run"], []).append(entry["info"])
    return {"format": FORMAT, "version": VERSION, "gzip": gzip, "methods": parameter_table(),
            "runs": [{"name": name, "error": None, "embeddings": infos}
                     for name, infos in runs.items()],
            "embeddings": [{k: v for k, v in e.items() if k != "info"} for e in entries]}


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in _files(folder))


def _files(folder: Path) -> Iterable[Path]:
    return (p for p in folder.rglob("*") if p.is_file())
