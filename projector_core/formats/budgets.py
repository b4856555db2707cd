"""What a parser may build from one input, declared here once and checked before it builds.

A byte limit on a body or a file does not bound what is built from it: a 60 MB TSV holding one
line of 30,000,000 columns made the tensor parser allocate per column and ran the server out of
memory, and 4 MB of ``[`` make any recursive JSON reader recurse a million times. So each
parser states, before it builds anything, the budget that bounds what it will build: the first
line of a TSV decides its width, and a width over the budget is refused with that line's
number; a JSON file's nesting is measured before it is decoded. Uploads and LOGDIR files go
through the same readers, so the same budgets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from projector_core.errors import DataError

MIB = 2**20


@dataclass(frozen=True)
class Budget:
    """A bound on what one input may make a parser build; its errors name it."""

    limit: int
    unit: str  # "columns", "bytes", ...
    per: str  # "per tensor TSV row"

    def __str__(self) -> str:
        if self.unit == "bytes" and self.limit % MIB == 0:
            return f"{self.limit // MIB} MiB {self.per}"
        return f"{self.limit:,} {self.unit} {self.per}"

    def exceeded(self, found: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None) -> DataError:
        """The error for an input over this budget; ``found`` says what it has."""
        return DataError(f"{found}, over the budget of {self}", file=file, line=line,
                         field=field)


# Tensor TSV (formats/tensor_files.py). The widest embeddings in use are a few thousand
# dimensions (16,384 for the largest language models' hidden states); 65,536 also takes a
# flattened 128 x 128 x 3 image. A row is read whole before it is parsed, so its text is
# bounded too: 512 bytes a number at the widest row (no writer writes a number longer than 30).
TENSOR_COLUMNS = Budget(65_536, "columns", "per tensor TSV row")
TENSOR_ROW_BYTES = Budget(32 * MIB, "bytes", "per tensor TSV row")

# Metadata TSV (formats/metadata.py): each column costs its own pass of checks (about 0.5 ms
# a column even when short: 100,000 columns took 48 s), and a row is read whole.
METADATA_COLUMNS = Budget(4_096, "columns", "per metadata TSV")
METADATA_ROW_BYTES = Budget(1 * MIB, "bytes", "per metadata row")

# JSON and pbtxt files (formats/config.py, formats/bookmarks.py, formats/json_text.py): a
# TensorBoard config or bookmark state nests five levels deep; each level is a recursion of the
# decoder. A config lists embeddings in a few lines each; bookmarks may carry coordinates.
JSON_DEPTH = Budget(64, "levels of nesting", "per JSON document")
CONFIG_BYTES = Budget(4 * MIB, "bytes", "per projector config")
BOOKMARKS_BYTES = Budget(64 * MIB, "bytes", "per bookmarks file")


def read_bounded(path: Path, display: str, budget: Budget) -> bytes:
    """A file's bytes, refused (naming the budget) without reading past it when it has more."""
    try:
        with path.open("rb") as handle:
            data = handle.read(budget.limit + 1)
    except FileNotFoundError:
        raise DataError("file not found", file=display) from None
    except OSError as exc:
        raise DataError(f"cannot be read: {exc.strerror}", file=display) from None
    if len(data) > budget.limit:
        raise budget.exceeded("too large", file=display)
    return data
