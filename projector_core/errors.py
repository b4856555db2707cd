"""The one exception type for bad input: its message always says which file and where."""

from __future__ import annotations


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
