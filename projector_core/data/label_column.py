"""Which metadata column names a point: one rule for the page, the MCP tools and the API.

TensorBoard labels points by the first non-numeric column. That names digits by their
parity ("even"), so a search for "7" finds nothing; a column whose name says it is the
label (TensorBoard calls a headerless single column ``label``) is therefore preferred.
``GET /api/runs`` publishes the choice as ``label_column``, and the page starts from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

LABEL_NAMES = ("label", "name", "title", "word", "text")


def default_label_column(names: Sequence[str], is_numeric: Callable[[str], bool]) -> str | None:
    """A column named like a label, else the first non-numeric one, else the first."""
    for wanted in LABEL_NAMES:
        named = next((n for n in names if n.casefold() == wanted), None)
        if named is not None:
            return named
    return next((n for n in names if not is_numeric(n)), names[0] if names else None)
