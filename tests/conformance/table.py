"""The suite's table, generated from the registry: one cell per operation, door offering it,
and case asked of that door. A cell the suite cannot ask (no adapter method for the door, or
no case) is still a cell, and fails: a new operation or door in the registry fails the suite
until the suite asks it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pytest

from projector_core.operations import OPERATIONS, Operation
from tests.conformance.cases import CASES, KNOWN, Case
from tests.conformance.doors_cli import Cli
from tests.conformance.doors_http import ClientDoor, Rest
from tests.conformance.doors_mcp import Mcp
from tests.conformance.doors_page import PageDoor
from tests.conformance.doors_widget import Widget

ADAPTERS: Mapping[str, type] = {"rest": Rest, "client": ClientDoor, "widget": Widget, "mcp": Mcp,
                                "cli": Cli, "page": PageDoor}


@dataclass(frozen=True)
class Cell:
    operation: str
    door: str
    case: Case | None  # None: no case asks the operation of this door

    @property
    def id(self) -> str:
        return f"{self.operation}-{self.case.name if self.case else 'NO-CASE'}-{self.door}"


def cells(operations: Iterable[Operation] = OPERATIONS,
          cases: Iterable[Case] = CASES) -> list[Cell]:
    cases = list(cases)
    table = []
    for operation in operations:
        for door in operation.offered:
            asked = [c for c in cases if c.operation == operation.name
                     and (c.doors is None or door in c.doors)]
            table += [Cell(operation.name, door, case) for case in asked] or [
                Cell(operation.name, door, None)]
    return table


def check_askable(cell: Cell, adapters: Mapping[str, type] = ADAPTERS) -> Case:
    """The cell's case, or a failure saying why the suite cannot ask this door."""
    if cell.door not in adapters:
        pytest.fail(f"door {cell.door!r} offers {cell.operation} but the suite has no adapter "
                    "for it: add one to tests/conformance/table.py ADAPTERS")
    if not callable(getattr(adapters[cell.door], cell.operation, None)):
        pytest.fail(f"{cell.door} offers {cell.operation} (projector_core/operations.py) but "
                    f"{adapters[cell.door].__name__} cannot ask it: add its method")
    if cell.case is None:
        pytest.fail(f"no case asks {cell.operation} of {cell.door}: add one to tests/conformance/cases.py")
    return cell.case


def params(table: Iterable[Cell] = ()) -> list:
    """The cells as pytest parameters: known disagreements as strict xfails, the page's cells
    marked ``browser``."""
    out = []
    for cell in table or cells():
        marks = [pytest.mark.browser] if cell.door == "page" else []
        reason = KNOWN.get((cell.operation, cell.door, cell.case.name if cell.case else ""))
        if reason is not None:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        out.append(pytest.param(cell, id=cell.id, marks=marks))
    return out
