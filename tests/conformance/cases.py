"""The requests the suite asks each door, per operation of the registry, and the cells known
to disagree today.

A case is one request of an operation; it is asked of every door that offers the operation
(``projector_core.operations``), or of the ``doors`` named where a door cannot put it (the
page has no dims 4). Refusals are cases too: the same wrong request must be refused with the
same sentence everywhere. ``KNOWN`` marks the cells that disagree today, each with the item of
issue 33 that fixes it: strict xfails, so a fix turns them into failures until its mark goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.conformance.dataset import EMBEDDING, LATER, OTHER_EMBEDDING, OTHER_RUN, RUN, N

PCA_2D = {"method": "pca", "dims": 2}
EDIT_A = {"value": "dup", "rows": list(range(0, N, 7))}  # an annotation case's edits, in order
EDIT_B = {"value": "keep", "rows": list(range(0, N, 5))}  # rows 0, 35, 70... relabelled


@dataclass(frozen=True)
class Case:
    operation: str
    name: str
    request: Mapping[str, Any] = field(default_factory=dict)
    doors: tuple[str, ...] | None = None  # None: every door that offers the operation

    @property
    def id(self) -> str:
        return f"{self.operation}-{self.name}"


UNKNOWN = {"run": RUN, "embedding": "nope"}
ANOTHER = {"named": {"run": OTHER_RUN, "embedding": OTHER_EMBEDDING}}  # a job asked under it
CASES: tuple[Case, ...] = (
    Case("load", "array_and_table"),
    Case("load", "one_column", {"columns": ["group"]}, doors=("client", "widget")),
    Case("load", "quoted_cells", {"quoted": True}, doors=("client", "widget")),
    Case("pca_2d", "answer", {"params": {"spherize": False}}),
    Case("pca_2d", "unknown_embedding", {**UNKNOWN}, doors=("rest", "client", "mcp")),
    Case("pca_3d", "answer", {"params": {"spherize": False}}),
    Case("pca_3d", "dims_4", {"dims": 4}, doors=("rest", "client", "mcp")),
    Case("tsne", "answer", {"params": {"perplexity": 20, "learning_rate": "auto", "n_iter": 300}}),
    Case("umap", "answer", {"params": {"n_neighbors": 10, "min_dist": 0.1}}),
    Case("neighbors_of_row", "answer", {"index": 5, "k": 10, "metric": "cosine"}),
    Case("neighbors_of_row", "k_out_of_range", {"index": 5, "k": N, "metric": "cosine"},
         doors=("rest", "client", "mcp")),
    Case("neighbors_of_row", "unknown_embedding", {**UNKNOWN, "index": 5, "k": 10, "metric": "cosine"},
         doors=("rest", "client", "mcp")),
    Case("neighbors_of_label", "answer", {"query": "g3", "column": "group", "k": 10, "metric": "cosine"}),
    Case("search", "answer", {"column": "group", "query": "g3"}),
    Case("clusters", "answer", {"of": PCA_2D, "label_column": "group", "min_cluster_size": 10}),
    Case("clusters", "of_the_job_alone", {"of": PCA_2D}, doors=("mcp",)),
    Case("clusters", "asked_under_another_embedding", {"of": PCA_2D, **ANOTHER}, doors=("mcp",)),
    Case("quality", "answer", {"of": PCA_2D, "k": 10, "metric": "cosine"}),
    Case("quality", "asked_under_another_embedding",
         {"of": PCA_2D, "k": 10, "metric": "cosine", **ANOTHER}, doors=("mcp",)),
    Case("compare", "answer", {"other_run": RUN, "other_embedding": LATER, "k": 10,
                               "metric": "cosine", "top": 50}),  # the Compare page's top
    Case("export", "pca", {"projection": ["pca"], "neighbors": 30}),
    Case("export", "tsne_and_umap", {"projection": ["pca", "tsne", "umap"], "neighbors": 10},
         doors=("rest", "cli")),
    Case("render", "pca", {"projection": "pca", "width": 480}),
    Case("render", "unknown_embedding", {**UNKNOWN, "projection": "pca", "width": 480}),
    # Each annotation case edits a column of its own (a door keeps one store for the suite).
    Case("annotate", "answer", {"column": "checked", "edits": [EDIT_A]}),
    Case("annotate", "later_edit_wins", {"column": "fixed", "edits": [EDIT_A, EDIT_B]},
         doors=("rest", "client", "widget", "mcp")),  # an import sets every row
    Case("annotate", "own_edit_undone", {"column": "undone", "edits": [EDIT_A, EDIT_B],
                                         "undo": True}, doors=("rest", "client", "widget")),
    Case("annotate", "metadata_name", {"column": "group", "edits": [EDIT_A]}),
    Case("annotate", "unknown_embedding", {**UNKNOWN, "column": "checked", "edits": [EDIT_A]},
         doors=("rest", "client", "mcp")),
    Case("annotation_history", "answer", {"column": "listed", "edits": [EDIT_A, EDIT_B]}),
    Case("annotation_history", "own_edit_undone", {"column": "listed_undone",
                                                   "edits": [EDIT_A, EDIT_B], "undo": True},
         doors=("rest", "client")),
)

# (operation, door, case name) -> why the cell disagrees today (and which item fixes it).
# Empty: every door agrees on every cell; a disagreement found later is named here, strict.
KNOWN: dict[tuple[str, str, str], str] = {}


def cases_of(operation: str) -> list[Case]:
    return [case for case in CASES if case.operation == operation]


def request_of(case: Case) -> dict[str, Any]:
    """The case's request with the names filled in (the blobs' first step unless it says)."""
    return {"run": RUN, "embedding": EMBEDDING, **case.request}
