"""The three kinds of annotation column and what a value of each may be.

Every kind is stored the same way, as one code per row into the column's values, code 0
being the empty value, "nothing here" (what an empty metadata cell means), so an annotation
column is read, coloured and searched like any categorical metadata column:

- ``label``: a category per row (``label_fixed = "cat"``); a label is one line of text.
- ``flag``: a row is flagged or not (``duplicate``); its values are ``"true"`` and empty.
- ``note``: free text on a row; any text, line breaks included.

Setting a row to the empty value (``None``, ``""``, or ``False`` for a flag) clears it.
"""

from __future__ import annotations

from typing import Literal, get_args

from projector_core.formats.metadata import RESERVED_COLUMNS, SEQUENCE_COLUMNS

Kind = Literal["label", "flag", "note"]
KINDS: tuple[Kind, ...] = get_args(Kind)
EMPTY = ""  # code 0 of every column
FLAGGED = "true"
NAME_MAX = 200
LABEL_MAX = 1_000
NOTE_MAX = 10_000
_FLAG_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False,
               "": False}

Value = str | bool | int | None


def check_kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise ValueError(f"unknown annotation kind {kind!r}: one of {', '.join(KINDS)}")
    return kind


def kind_for(value: Value) -> Kind:
    """The kind a new column gets when the first edit does not say: a flag for a boolean."""
    return "flag" if isinstance(value, bool) else "label"


def check_name(name: str) -> str:
    """A column name that is also a valid metadata column name (a TSV header cell)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("an annotation column needs a name")
    if len(name) > NAME_MAX:
        raise ValueError(f"annotation column name is {len(name)} characters; at most {NAME_MAX}")
    if any(c in name for c in "\t\r\n"):
        raise ValueError(f"annotation column name {name!r} holds a tab or a line break")
    if name in RESERVED_COLUMNS or name in SEQUENCE_COLUMNS:
        raise ValueError(f"{name!r} is a reserved metadata column name")
    return name


def stored_value(kind: Kind, value: Value, column: str) -> str:
    """The text a row of ``column`` holds after being set to ``value`` (EMPTY: cleared);
    ValueError saying what a value of that kind may be."""
    if value is None:
        return EMPTY
    if kind == "flag":
        if isinstance(value, bool):
            return FLAGGED if value else EMPTY
        flagged = _FLAG_WORDS.get(str(value).strip().lower())
        if flagged is None:
            raise ValueError(f"{column!r} is a flag: its value is true or false, not {value!r}")
        return FLAGGED if flagged else EMPTY
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError(f"{column!r} is a {kind}: its value is text, not {value!r}")
    text = str(value)
    if kind == "label":
        if any(c in text for c in "\t\r\n"):
            raise ValueError(f"a label of {column!r} is one line: {text[:40]!r} holds a tab or "
                             "a line break (write it as a note)")
        if len(text) > LABEL_MAX:
            raise ValueError(f"a label of {column!r} is at most {LABEL_MAX:,} characters")
    elif len(text) > NOTE_MAX:
        raise ValueError(f"a note of {column!r} is at most {NOTE_MAX:,} characters")
    return text
