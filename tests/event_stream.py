"""``GET /api/events`` read as a client reads it: a real HTTP stream (httpx) on a thread, its
server-sent events parsed and kept in order, for tests to wait on (never on a sleep)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class Message:
    event: str
    data: dict[str, Any]
    id: str | None = None
    raw: list[str] = field(default_factory=list)


class EventStream:
    """Follows ``{url}/api/events`` until closed; ``messages`` grows as events arrive."""

    def __init__(self, url: str, last_event_id: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.headers = dict(headers or {})
        if last_event_id is not None:
            self.headers["Last-Event-ID"] = last_event_id
        self.messages: list[Message] = []
        self.comments = 0
        self.ended = threading.Event()  # the server ended the stream (or it failed)
        self.error: BaseException | None = None
        self._arrived = threading.Condition()
        self._closing = threading.Event()
        self._client = httpx.Client(timeout=httpx.Timeout(30, read=None))
        self._thread = threading.Thread(target=self._read, daemon=True)

    def __enter__(self) -> EventStream:
        self._thread.start()
        self.wait_for(lambda m: m.event == "open")
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop following: the reading thread lets go at the next line (a heartbeat at the
        latest), or when the server stops and ends the stream."""
        self._closing.set()

    def wait_for(self, matches: Callable[[Message], bool], timeout: float = 60) -> Message:
        """The first message (from the start of the stream) that ``matches``."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                for message in self.messages:
                    if matches(message):
                        return message
                left = deadline - time.monotonic()
                if left <= 0 or self.ended.is_set():
                    kinds = [(m.event, m.data.get("action"), m.data.get("embedding"),
                              m.data.get("state")) for m in self.messages]
                    raise AssertionError(f"no such event within {timeout} s (error "
                                         f"{self.error!r}); got {kinds}")
                self._arrived.wait(left)

    def of(self, event: str, **fields: Any) -> list[Message]:
        """The messages so far of kind ``event`` whose data holds ``fields``."""
        with self._arrived:
            return [m for m in self.messages if m.event == event
                    and all(m.data.get(k) == v for k, v in fields.items())]

    def _read(self) -> None:
        try:
            with self._client.stream("GET", f"{self.url}/api/events",
                                     headers=self.headers) as response:
                assert response.status_code == 200, response.status_code
                assert response.headers["content-type"].startswith("text/event-stream")
                lines: list[str] = []
                for line in response.iter_lines():
                    if self._closing.is_set():
                        break
                    if line:
                        lines.append(line)
                        continue
                    self._add(lines)
                    lines = []
        except BaseException as exc:  # closed by us, or the server went away
            self.error = exc
        finally:
            self._client.close()
            self.ended.set()
            with self._arrived:
                self._arrived.notify_all()

    def _add(self, lines: list[str]) -> None:
        fields: dict[str, str] = {}
        for line in lines:
            if line.startswith(":"):
                self.comments += 1
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")
        if "event" not in fields:
            return
        message = Message(fields["event"], json.loads(fields.get("data", "{}")),
                          fields.get("id"), lines)
        with self._arrived:
            self.messages.append(message)
            self._arrived.notify_all()
