"""What a user can ask the projector, and through which door: one table that docs and tests read.

Each :class:`Operation` names what it takes (its parameters, and the values fixed by the
operation itself, such as PCA's ``dims``) and, for every door in :data:`DOORS`, either how
it is asked there (``offered``) or why that door does not offer it (``not_offered``): no
door is left unsaid. The door conformance suite (``tests/conformance/``) is generated from
this table: each offered pair is a cell that asks the same thing of that door, on the same
data, and must get the same answer as every other door; an offered pair the suite cannot
ask fails it. A new door or operation is therefore a new row or column here first.

Data only: nothing here imports a door (the doors are strings), so the core stays below them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

DOORS: tuple[str, ...] = ("rest", "client", "widget", "mcp", "cli", "page")
"""``rest``: the HTTP API (``server/routes``); ``client``: ``projector.Client``; ``widget``:
``projector.Projector``'s Python side; ``mcp``: ``projector mcp`` (stdio); ``cli``: ``projector
export`` / ``render`` / ``annotations``; ``page``: the web page (``frontend/``)."""

NAMES = {"run": "run name, as GET /api/runs lists it",
         "embedding": "embedding (tensor) name within the run"}


@dataclass(frozen=True)
class Operation:
    """One thing a user asks; ``offered`` and ``not_offered`` together name every door once."""

    name: str
    summary: str
    params: Mapping[str, str]  # parameter name -> what it means
    offered: Mapping[str, str]  # door -> how the operation is asked there
    not_offered: Mapping[str, str]  # door -> why that door does not offer it
    fixed: Mapping[str, Any] = field(default_factory=dict)  # values the operation itself sets

    def __post_init__(self) -> None:
        both = set(self.offered) & set(self.not_offered)
        said = set(self.offered) | set(self.not_offered)
        if both or said != set(DOORS):
            raise ValueError(f"operation {self.name}: every door once, offered or not "
                             f"(both: {sorted(both)}, unsaid: {sorted(set(DOORS) - said)}, "
                             f"unknown: {sorted(said - set(DOORS))})")
        for name in ("params", "offered", "not_offered", "fixed"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))


_NO_COORDINATES = ("the widget's Python side chooses the page's projection (its `projection` "
                   "trait) and reads no coordinates; `Client(widget.url)` asks its server")
_EXPORT_DEFAULTS = ("`projector export` and `render` compute the page's default request of a "
                    "method, with no flags for its parameters")
_PROJECTION = {"run": NAMES["run"], "embedding": NAMES["embedding"],
               "params": "the method's parameters (GET /api/projections/methods)"}
_OF_A_JOB = "a finished projection job (from a projection)"
_NOT_IN_WIDGET = "the widget's Python side has no such method; `Client(widget.url)` asks its server"
_NOT_IN_CLI = "no CLI command answers it"


def _projection(name: str, method: str, dims: int, title: str, page: str) -> Operation:
    return Operation(
        name, f"{title}: N x {dims} coordinates (dims is the output width)", _PROJECTION,
        fixed={"method": method, "dims": dims},
        offered={"rest": f"POST /api/projections {{method: {method}, dims: {dims}}}, then "
                         "GET /api/jobs/ID/result",
                 "client": f"Client.project(run, embedding, {method!r}, dims={dims}, **params)",
                 "mcp": f"tool project {{method: {method}, dims: {dims}, params}}",
                 "page": page},
        not_offered={"widget": _NO_COORDINATES, "cli": _EXPORT_DEFAULTS})


# Labels kept in the annotation store (projector_core/annotations/), every door through its one
# AnnotationService.
_LABELS_IN_THE_PAGE = ("the page labels the selection (frontend/js/labelling/), checked by its "
                       "browser tests; the suite's page door does not drive it")
_ANNOTATION = {**NAMES, "column": "a new or existing annotation column (not a metadata column)"}
_ANNOTATIONS: tuple[Operation, ...] = (
    Operation(
        "annotate", "label rows with a value in one edit (the later edit of a cell wins), then "
        "read the column back: its value per row and each value's count",
        {**_ANNOTATION, "value": "the label", "rows": "row numbers"},
        offered={"rest": "POST /api/annotations, then GET /api/annotations/export",
                 "client": "Client.annotate(run, embedding, rows, column, value), then "
                           "Client.annotations(run, embedding)",
                 "widget": "Projector.annotate(column, value, rows), then Projector.annotations",
                 "mcp": "tool annotate {column, value, rows}, then tools metadata and annotations",
                 "cli": "projector annotations import LOGDIR FILE --column (the file: the value "
                        "on the rows), then projector annotations export"},
        not_offered={"page": _LABELS_IN_THE_PAGE}),
    Operation(
        "annotation_history", "everyone's edits of an embedding, newest first: column, action, "
        "rows, value, whether undone and whose",
        {**_ANNOTATION, "limit": "latest edits listed"},
        offered={"rest": "GET /api/annotations/history?column=",
                 "client": "Client.annotation_history(run, embedding, column)",
                 "mcp": "tool annotations {history}"},
        not_offered={"widget": _NOT_IN_WIDGET, "cli": _NOT_IN_CLI,
                     "page": "the page undoes and redoes; it lists no history"}),
)

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "load", "serve an array with its metadata: its shape and metadata as written",
        {"vectors": "an N x D array", "metadata": "a table of N rows (a DataFrame, or a TSV)"},
        offered={"rest": "POST /api/uploads (multipart fields tensor and metadata)",
                 "client": "Client.upload(vectors, metadata)",
                 "widget": "Projector(vectors, metadata)",
                 "mcp": "projector mcp FILE.npy --metadata FILE.tsv",
                 "cli": "projector export FILE.npy OUT --metadata FILE.tsv",
                 "page": "Load data: a tensor file and a metadata file"},
        not_offered={}),
    _projection("pca_2d", "pca", 2, "PCA to two dimensions", "PCA tab in 2D: the x and y components"),
    _projection("pca_3d", "pca", 3, "PCA to three dimensions",
                "PCA tab in 3D: the x, y and z components"),
    _projection("tsne", "tsne", 2, "t-SNE", "t-SNE tab (perplexity, learning rate, iterations)"),
    _projection("umap", "umap", 2, "UMAP", "UMAP tab (neighbours, minimum distance)"),
    Operation(
        "neighbors_of_row", "the k nearest rows to one row in the original space, itself "
        "excluded: indices and distances, nearest first",
        {**NAMES, "index": "the row", "k": "how many, at most N - 1", "metric": "cosine or euclidean"},
        offered={"rest": "GET /api/neighbors?index=&k=&metric=",
                 "client": "Client.neighbors(run, embedding, index=, k=, metric=)",
                 "mcp": "tool neighbors {index, k, metric}",
                 "page": "a click on a point: the neighbour list"},
        not_offered={"widget": _NOT_IN_WIDGET,
                     "cli": "`projector export` writes every row's neighbours (operation export)"}),
    Operation(
        "neighbors_of_label", "the k nearest rows to the rows whose label is a value (their "
        "centroid when several match, those rows excluded)",
        {**NAMES, "query": "the label", "column": "the label column (default: the one that "
                                                  "names points)", "k": "how many",
         "metric": "cosine or euclidean"},
        offered={"mcp": "tool neighbors {query, column, k, metric}"},
        not_offered={"rest": "GET /api/search then POST /api/neighbors with their centroid",
                     "client": "Client.search then Client.neighbors(vector=their centroid)",
                     "page": "a search selects the rows; neighbours are listed for one point",
                     "widget": _NOT_IN_WIDGET, "cli": _NOT_IN_CLI}),
    Operation(
        "search", "the rows whose metadata column matches a query (case-insensitive substring)",
        {**NAMES, "column": "metadata column", "query": "text (or a regular expression)",
         "regex": "whether the query is a regular expression"},
        offered={"rest": "GET /api/search?column=&query=&regex=",
                 "client": "Client.search(run, embedding, column, query)",
                 "mcp": "tool search {column, query}",
                 "page": "the search box: the matches are selected"},
        not_offered={"widget": _NOT_IN_WIDGET, "cli": _NOT_IN_CLI}),
    Operation(
        "clusters", "HDBSCAN clusters of a projection, named by the label column",
        {"job": _OF_A_JOB, "min_cluster_size": "smallest cluster", "label_column": "names them",
         "space": "projection or original"},
        offered={"rest": "GET /api/jobs/ID/clusters", "client": "Client.clusters(job)",
                 "mcp": "tool clusters {job}", "page": "Structure panel: clusters"},
        not_offered={"widget": _NOT_IN_WIDGET, "cli": _NOT_IN_CLI}),
    Operation(
        "quality", "how faithful a projection is: trustworthiness, continuity, neighbourhood kept",
        {"job": _OF_A_JOB, "k": "neighbours compared", "metric": "cosine or euclidean"},
        offered={"rest": "GET /api/jobs/ID/quality", "client": "Client.quality(job)",
                 "mcp": "tool quality {job}", "page": "Structure panel: quality"},
        not_offered={"widget": _NOT_IN_WIDGET, "cli": _NOT_IN_CLI}),
    Operation(
        "compare", "how each point's k-neighbourhood changed from one embedding to another of "
        "the same points",
        {**NAMES, "other_run": "run of B", "other_embedding": "embedding of B",
         "k": "neighbours compared", "metric": "cosine or euclidean", "top": "most changed rows"},
        offered={"rest": "GET /api/compare", "client": "Client.compare(run, embedding, other_run, "
                                                       "other_embedding)",
                 "mcp": "tool compare", "page": "Compare panel"},
        not_offered={"widget": _NOT_IN_WIDGET, "cli": _NOT_IN_CLI}),
    Operation(
        "export", "a static site of an embedding's views: projections, metadata, neighbours",
        {**NAMES, "projection": "methods to include (pca, tsne, umap)",
         "neighbors": "neighbours kept per point"},
        offered={"rest": "GET /api/export/site (a zip)", "cli": "projector export LOGDIR OUT",
                 "page": "Export site"},
        not_offered={"client": "no method; GET /api/export/site answers the zip",
                     "mcp": "the MCP server writes nothing",
                     "widget": _NOT_IN_WIDGET}),
    Operation(
        "render", "a projection drawn as a picture without a browser, coloured as the page colours",
        {**NAMES, "projection": "pca, tsne or umap", "width": "pixels"},
        offered={"cli": "projector render LOGDIR -o FILE.png", "widget": "Projector.save_image(path)"},
        not_offered={"page": "Save image saves the view as shown (camera, selection, WebGL): "
                             "another picture",
                     "rest": "no route draws pictures", "client": "no method draws pictures",
                     "mcp": "the MCP server writes nothing"}),
    *_ANNOTATIONS,
)

BY_NAME: Mapping[str, Operation] = MappingProxyType({op.name: op for op in OPERATIONS})


def offered(door: str) -> tuple[str, ...]:
    """The operations ``door`` offers, in table order."""
    if door not in DOORS:
        raise ValueError(f"unknown door {door!r}: the doors are {', '.join(DOORS)}")
    return tuple(op.name for op in OPERATIONS if door in op.offered)
