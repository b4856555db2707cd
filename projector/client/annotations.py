"""What the annotation methods of :class:`projector.client.api.ProjectorClient` send and
read: an edit's body, and the annotation columns as one DataFrame."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from projector.client.wire import given, names

if TYPE_CHECKING:
    import pandas as pd


def annotate_body(run: str, embedding: str, rows: Any, column: str, value: Any,
                  kind: str | None, selection: dict[str, Any] | None) -> dict[str, Any]:
    """``POST /api/annotations``'s body: ``rows`` (row numbers, any sequence or array) or
    ``selection`` (``{"job", "box" | "polygon", "axes"}``). The answer: the history entry
    (``edit``), rows ``changed``, the value's ``code`` and the ``rule`` for two edits of one
    cell. A boolean value makes a flag column; ``kind``: label, flag or note."""
    body = {**names(run, embedding), "column": column, "value": value,
            **given(kind=kind, selection=selection)}
    if selection is None:
        body["rows"] = np.asarray(rows, np.int64).ravel().tolist()
    return body


def annotation_frame(columns: dict[str, tuple[bytes, dict[str, str]]]) -> pd.DataFrame:
    """``GET /api/metadata/column`` answers (dictionary, then int32 codes) by column name as
    one DataFrame of categoricals, indexed by point; code 0 (no value set) is NaN."""
    import pandas as pd

    frame = pd.DataFrame()
    for name, (body, headers) in columns.items():
        head = int(headers["x-dictionary-bytes"])
        dictionary = json.loads(body[:head])
        codes = np.frombuffer(body, "<i4", offset=head)
        frame[name] = pd.Categorical.from_codes(codes - 1, dictionary[1:])  # "" is code 0
    frame.index.name = "index"
    return frame
