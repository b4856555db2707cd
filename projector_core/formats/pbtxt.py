"""A small, schema-driven parser for protobuf text format (``projector_config.pbtxt``).

TensorBoard parses the config with the protobuf library; we only need the few messages of
``tensorboard.projector.ProjectorConfig``, so a schema of field names is enough and keeps the
protobuf runtime out of our dependencies. Errors name the line, like protoc's do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from projector_core.errors import DataError

# A schema maps a field name to "string", "uint", or a nested schema (a message).
Schema = dict[str, Any]

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\f\v]+|\n)
  | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>[-+]?(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)[fFuU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>[{}<>\[\]:,;])
    """,
    re.VERBOSE,
)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "a": "\a",
            "b": "\b", "f": "\f", "v": "\v", "?": "?"}


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    line: int


def _tokenize(text: str, file: str) -> list[_Token]:
    tokens: list[_Token] = []
    line, pos = 1, 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise DataError(f"unexpected character {text[pos]!r}", file=file, line=line)
        kind = match.lastgroup or ""
        value = match.group()
        if kind == "ws":
            line += value.count("\n")
        elif kind != "comment":
            tokens.append(_Token(kind, value, line))
        pos = match.end()
    return tokens


def _unquote(token: _Token, file: str) -> bytes:
    """Decode a C-escaped protobuf string literal to bytes (octal and hex escapes included)."""
    body = token.text[1:-1]
    out = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ESCAPES:
            out += _ESCAPES[nxt].encode()
            i += 2
        elif nxt in "xX":
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
            if not digits:
                raise DataError("bad \\x escape in string", file=file, line=token.line)
            out.append(int(digits.group(), 16))
            i += 2 + len(digits.group())
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(int(digits.group(), 8) & 0xFF)  # type: ignore[union-attr]
            i += 1 + len(digits.group())  # type: ignore[union-attr]
        else:
            raise DataError(f"unknown escape \\{nxt} in string", file=file, line=token.line)
    return bytes(out)


class _Parser:
    def __init__(self, tokens: list[_Token], file: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.file = file

    def _peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _next(self, what: str) -> _Token:
        token = self._peek()
        if token is None:
            last = self.tokens[-1].line if self.tokens else 1
            raise DataError(f"unexpected end of file, expected {what}", file=self.file, line=last)
        self.pos += 1
        return token

    def _fail(self, token: _Token, message: str) -> DataError:
        return DataError(message, file=self.file, line=token.line)

    def message(self, schema: Schema, type_name: str, closer: str | None) -> dict[str, list[Any]]:
        """Parse fields until ``closer`` (or end of file for the top level)."""
        fields: dict[str, list[Any]] = {}
        while True:
            token = self._peek()
            if token is None:
                if closer is None:
                    return fields
                raise DataError(f"unexpected end of file, expected '{closer}'", file=self.file,
                                line=self.tokens[-1].line)
            if closer is not None and token.text == closer:
                self.pos += 1
                return fields
            if token.kind != "ident":
                raise self._fail(token, f"expected a field name, found {token.text!r}")
            self.pos += 1
            if token.text not in schema:
                raise self._fail(token, f"unknown field '{token.text}' in {type_name}")
            kind = schema[token.text]
            fields.setdefault(token.text, []).extend(self._field_value(token, kind))
            if (sep := self._peek()) is not None and sep.text in ",;":
                self.pos += 1

    def _field_value(self, name: _Token, kind: Any) -> list[Any]:
        token = self._peek()
        if isinstance(kind, dict):
            if token is not None and token.text == ":":
                self.pos += 1
            opener = self._next("'{'")
            if opener.text not in "{<" or opener.kind != "punct":
                raise self._fail(opener, f"expected '{{' after '{name.text}'")
            closer = "}" if opener.text == "{" else ">"
            return [self.message(kind["fields"], kind["name"], closer)]
        colon = self._next("':'")
        if colon.text != ":":
            raise self._fail(colon, f"expected ':' after '{name.text}'")
        if (token := self._peek()) is not None and token.text == "[":
            self.pos += 1
            values: list[Any] = []
            while True:
                item = self._next("a value or ']'")
                if item.text == "]" and not values:
                    return values
                values.append(self._scalar(item, kind, name.text))
                end = self._next("',' or ']'")
                if end.text == "]":
                    return values
                if end.text != ",":
                    raise self._fail(end, "expected ',' or ']' in list")
        return [self._scalar(self._next("a value"), kind, name.text)]

    def _scalar(self, token: _Token, kind: str, field: str) -> Any:
        if kind == "string":
            if token.kind != "string":
                raise self._fail(token, f"field '{field}' needs a quoted string, found {token.text!r}")
            raw = _unquote(token, self.file)
            while (more := self._peek()) is not None and more.kind == "string":
                self.pos += 1
                raw += _unquote(more, self.file)
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                raise self._fail(token, f"field '{field}' is not valid UTF-8") from None
        if token.kind != "number":
            raise self._fail(token, f"field '{field}' needs a number, found {token.text!r}")
        text = token.text.rstrip("uU")
        try:
            value = int(text, 0)
        except ValueError:
            message = f"field '{field}' needs an unsigned integer, found {token.text!r}"
            raise self._fail(token, message) from None
        if value < 0 or value >= 2**32:
            raise self._fail(token, f"field '{field}' is out of range for uint32: {value}")
        return value


def parse_pbtxt(text: str, schema: Schema, type_name: str, file: str) -> dict[str, list[Any]]:
    """Parse text-format protobuf into ``{field: [values]}``; nested messages are dicts too."""
    return _Parser(_tokenize(text, file), file).message(schema, type_name, None)
