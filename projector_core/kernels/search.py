"""Metadata search, as TensorBoard's inspector: case-insensitive substring or regex."""

from __future__ import annotations

import re


def search(values: list[str], query: str, regex: bool = False) -> list[int]:
    """Indices of the values that match ``query``, ascending.

    Substring mode compares case-folded text; regex mode finds the pattern anywhere in
    the value (``re.search`` with IGNORECASE, like JavaScript's ``RegExp.test``). A
    blank query matches nothing, as TensorBoard clears the selection for it. A bad
    regular expression raises ValueError naming the problem.
    """
    if not query.strip():
        return []
    if regex:
        try:
            pattern = re.compile(query, re.IGNORECASE)
        except re.error as error:
            raise ValueError(f"invalid regular expression {query!r}: {error}") from error
        return [i for i, value in enumerate(values) if pattern.search(value)]
    needle = query.casefold()
    return [i for i, value in enumerate(values) if needle in value.casefold()]
