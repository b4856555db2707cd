"""Bookmark files: a JSON list of TensorBoard ``State`` objects (files from TensorBoard load here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from projector_core.errors import DataError
from projector_core.formats import json_text
from projector_core.formats.budgets import BOOKMARKS_BYTES, read_bounded


def read_bookmarks(path: Path, display: str,
                   shape: tuple[int, int] | None) -> list[dict[str, Any]]:
    """A bookmarks file, refused unread past its budget (``budgets.BOOKMARKS_BYTES``)."""
    return parse_bookmarks(read_bounded(path, display, BOOKMARKS_BYTES), display, shape)


def parse_bookmarks(raw: bytes, display: str, shape: tuple[int, int] | None) -> list[dict[str, Any]]:
    """Parse and check a bookmarks file; states saved for another data set size are refused."""
    try:
        states = json_text.loads(raw.decode("utf-8-sig"), display)
    except UnicodeDecodeError:
        raise DataError("is not valid UTF-8", file=display) from None
    except json.JSONDecodeError as exc:
        raise DataError(f"is not valid JSON: {exc.msg}", file=display, line=exc.lineno) from None
    if not isinstance(states, list):
        raise DataError("must be a JSON list of bookmark states", file=display)
    for i, state in enumerate(states):
        if not isinstance(state, dict):
            raise DataError("must be an object", file=display, field=f"[{i}]")
        dims = state.get("dataSetDimensions")
        if shape is not None and dims is not None and list(dims) != list(shape):
            raise DataError(
                f"was saved for a data set of {dims}, this embedding is {list(shape)}",
                file=display, field=f"[{i}].dataSetDimensions")
    return states
