"""The client's annotation routes: labels, flags and notes the server keeps (every edit
undoable), with what they send and read: an edit's body, and the annotation columns as one
DataFrame."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from projector.client.transport import Connection
from projector.client.wire import OCTET_STREAM, given, names

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


class AnnotationRoutes(Connection):
    """``/api/annotations``: edit, read, undo and redo, export and import annotation columns."""

    def annotate(self, run: str, embedding: str, rows: Any, column: str, value: Any, *,
                 kind: str | None = None, selection: dict[str, Any] | None = None) -> dict[str, Any]:
        """Set ``column`` to ``value`` on ``rows``, or inside ``selection`` (a region of a done
        projection's map, ``rows`` None), in one edit: see :func:`annotate_body`."""
        return self._json("POST", "/api/annotations", body=annotate_body(
            run, embedding, rows, column, value, kind, selection))

    def annotation_columns(self, run: str, embedding: str) -> dict[str, Any]:
        """``enabled`` (else ``reason``) and the embedding's ``columns`` (kind, shown...)."""
        return self._json("GET", "/api/annotations", names(run, embedding))

    def annotations(self, run: str, embedding: str) -> pd.DataFrame:
        """The shown annotation columns, a row per point (categoricals, NaN where unset)."""
        listed = self.annotation_columns(run, embedding)["columns"]
        return annotation_frame({c["name"]: self._request(
            "GET", "/api/metadata/column", {**names(run, embedding), "column": c["name"],
                                            "kind": "categorical"}, accept=OCTET_STREAM)
            for c in listed if c["shown"]})

    def annotation_history(self, run: str, embedding: str, column: str | None = None,
                           limit: int = 100) -> list[dict[str, Any]]:
        """Everyone's edits of the embedding, newest first."""
        return self._json("GET", "/api/annotations/history",
                          {**names(run, embedding), **given(column=column), "limit": limit})

    def undo(self, run: str, embedding: str) -> dict[str, Any]:
        """Undo this user's last edit of the embedding (others' edits stay)."""
        return self._json("POST", "/api/annotations/undo", body=names(run, embedding))

    def redo(self, run: str, embedding: str) -> dict[str, Any]:
        """Redo this user's last undone edit of the embedding."""
        return self._json("POST", "/api/annotations/redo", body=names(run, embedding))

    def export_annotations(self, run: str, embedding: str, format: str = "tsv") -> bytes:
        """The metadata with the annotation columns beside it (tsv, csv or parquet bytes)."""
        return self._request("GET", "/api/annotations/export",
                             {**names(run, embedding), "format": format}, accept="*/*")[0]

    def import_annotations(self, run: str, embedding: str, column: str, path: str | Path,
                           **options: str) -> dict[str, Any]:
        """Set every row of ``column`` from a file's column; ``options``: format, kind."""
        return json.loads(self._request("POST", "/api/annotations/import", {
            **names(run, embedding), "column": column, "name": Path(path).name, **options},
            raw=Path(path).read_bytes())[0])

