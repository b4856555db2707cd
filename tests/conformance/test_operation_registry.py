"""The registry of operations and doors is complete, and the suite asks every offered pair."""

from __future__ import annotations

import pytest

from projector_core.operations import BY_NAME, DOORS, OPERATIONS, Operation, offered
from tests.conformance.cases import CASES, KNOWN, Case
from tests.conformance.table import ADAPTERS, Cell, cells, check_askable


def test_every_door_is_said_once_for_every_operation() -> None:
    for operation in OPERATIONS:
        assert sorted([*operation.offered, *operation.not_offered]) == sorted(DOORS), operation.name
        assert all(operation.not_offered.values()), f"{operation.name}: say why a door does not offer it"
    with pytest.raises(ValueError, match="every door once"):
        Operation("half", "said for one door", {}, offered={"rest": "GET /api/half"}, not_offered={})


def test_the_issue_s_operations_and_doors_are_all_there() -> None:
    assert set(DOORS) == {"rest", "client", "widget", "mcp", "cli", "page"}
    assert {"load", "pca_2d", "pca_3d", "tsne", "umap", "neighbors_of_row", "neighbors_of_label",
            "search", "clusters", "quality", "compare", "export", "render", "annotate",
            "annotation_history"} <= set(BY_NAME)
    assert BY_NAME["pca_2d"].fixed == {"method": "pca", "dims": 2}
    assert "render" in offered("widget") and "tsne" not in offered("cli")
    assert "annotate" in offered("cli") and "annotation_history" not in offered("widget")


def test_every_offered_pair_is_asked_and_nothing_else() -> None:
    """Each offered (operation, door) has an adapter method and a case; no adapter method
    asks an operation its door does not offer; no case names a door that does not offer it."""
    for cell in cells():
        check_askable(cell)
    for door, adapter in ADAPTERS.items():
        asks = {name for name in BY_NAME if callable(getattr(adapter, name, None))}
        assert asks == set(offered(door)), f"{adapter.__name__} asks {sorted(asks ^ set(offered(door)))}"
    for case in CASES:
        assert case.operation in BY_NAME, case.id
        assert set(case.doors or ()) <= set(BY_NAME[case.operation].offered), case.id
    table = {(c.operation, c.door, c.case.name) for c in cells() if c.case}
    assert set(KNOWN) <= table, f"known disagreements of no cell: {set(KNOWN) - table}"


def test_an_operation_offered_without_an_adapter_fails_the_suite() -> None:
    """The meta-rule: a registry entry the suite cannot ask is a failing cell, not a missing one."""
    teleport = Operation("teleport", "move every point", {}, offered={"rest": "POST /api/teleport"},
                         not_offered={d: "not yet" for d in DOORS if d != "rest"})
    (cell,) = cells([teleport], [Case("teleport", "answer")])
    assert cell == Cell("teleport", "rest", Case("teleport", "answer"))
    with pytest.raises(pytest.fail.Exception, match="Rest cannot ask it"):
        check_askable(cell)
    unasked = cells([BY_NAME["search"]], [])
    assert [c.case for c in unasked] == [None] * len(BY_NAME["search"].offered)
    with pytest.raises(pytest.fail.Exception, match="no case asks search of rest"):
        check_askable(unasked[0])
    with pytest.raises(pytest.fail.Exception, match="no adapter"):
        check_askable(Cell("search", "holodeck", Case("search", "answer")))
