"""The one exception type for bad input: its message always says which file and where."""

from __future__ import annotations

from collections.abc import Iterable


class DataError(ValueError):
    """A user's file (or request data) that cannot be used as it is.

    The message names the file and, where known, the line or the field, so that the user can
    go straight to the problem: ``"run1/tensors.tsv line 12: 'abc' is not a number"``.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field '{self.field}'")
        return f"{' '.join(where)}: {self.message}" if where else self.message


NAMES_SAID = 20  # known names an unknown name's sentence lists


class UnknownName(KeyError):
    """An unknown run, embedding or job (a 404): the one sentence that names it and what is
    known, whichever door asked; a ``KeyError`` for code that looks names up."""

    def __str__(self) -> str:  # KeyError's would quote the sentence
        return str(self.args[0])


def known(names: list[str]) -> str:
    """Known names as a sentence lists them: the first few, and how many more."""
    shown = ", ".join(names[:NAMES_SAID]) or "none"
    return shown + (f" and {len(names) - NAMES_SAID} more" if len(names) > NAMES_SAID else "")


class UnknownColumn(ValueError, KeyError):
    """A metadata column the data (or the tiles) do not have: the request's fault (a 422),
    and a ``KeyError`` for code that looks a column up by name."""

    def __str__(self) -> str:  # KeyError's would quote the sentence
        return str(self.args[0])


def unknown_column(column: str, columns: Iterable[str]) -> UnknownColumn:
    """The one sentence for a metadata column the data lacks, naming those it has."""
    return UnknownColumn(f"unknown metadata column {column!r}; columns: "
                         f"{', '.join(columns) or 'none'}")
