"""The server's event stream (``GET /api/events``, server-sent events) for the client: every
event in order (:class:`EventReader`), and a training run's steps as each becomes readable
(:func:`landing_steps`), as the page's Follow sees them.

Standard library only, like the rest of the client. A stream that drops, or stays silent past
``silence`` seconds (the server sends a comment every 15 s, so silence means a dead link), is
opened again with ``Last-Event-ID``: the server sends what was missed, or a ``reset`` event when
it no longer keeps it (another server, or this follower fell too far behind), after which what
the follower keeps is read again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from dataclasses import dataclass, field
from http.client import HTTPResponse
from typing import Any

SILENCE = 45.0  # seconds without a byte (three heartbeats) before the stream is opened again
RETRIES = 5  # failed openings in a row before the reader gives up
SILENT = "silent"  # the kind of the reader's own event: nothing came for `silence` seconds


@dataclass(frozen=True)
class Event:
    kind: str  # run, embedding, step, reset, ...; open: a stream began; silent: none came
    data: dict[str, Any]
    id: str = ""


@dataclass
class EventReader:
    """Follows ``{base_url}/api/events`` until closed. Iterate it for :class:`Event` values;
    :meth:`close` (from any thread) ends the iteration at once."""

    base_url: str
    headers: dict[str, str] = field(default_factory=dict)
    last_id: str | None = None
    silence: float = SILENCE
    _response: HTTPResponse | None = None
    _closed: bool = False

    def __iter__(self) -> Iterator[Event]:
        failures = 0
        while not self._closed:
            try:
                self._response = self._open()
                failures = 0
                yield from self._read(self._response)
            except (OSError, urllib.error.URLError, ValueError) as error:
                if self._closed:
                    return
                if _timed_out(error):  # a slow server: silence, said, and asked again
                    yield Event(SILENT, {})
                    continue
                if isinstance(error, urllib.error.HTTPError) or failures >= RETRIES:
                    raise ConnectionError(f"{self.base_url}/api/events: {error}") from error
                failures += 1
                time.sleep(min(1.0 * failures, 5.0))
            finally:
                if self._response is not None:
                    self._response.close()

    def close(self) -> None:
        self._closed = True
        if self._response is not None:
            self._response.close()  # a read blocked on it ends

    def _open(self) -> HTTPResponse:
        headers = {"Accept": "text/event-stream", **self.headers}
        if self.last_id:
            headers["Last-Event-ID"] = self.last_id
        request = urllib.request.Request(f"{self.base_url}/api/events", headers=headers)
        return urllib.request.urlopen(request, timeout=self.silence)

    def _read(self, response: HTTPResponse) -> Iterator[Event]:
        fields: dict[str, str] = {}
        data: list[str] = []
        try:
            for raw in response:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line:
                    if not line.startswith(":"):
                        name, _, value = line.partition(":")
                        value = value.removeprefix(" ")
                        if name == "data":
                            data.append(value)
                        else:
                            fields[name] = value
                    continue
                if "event" in fields:
                    if "id" in fields:
                        self.last_id = fields["id"]
                    yield Event(fields["event"], json.loads("\n".join(data) or "{}"),
                                fields.get("id", ""))
                fields, data = {}, []
        except TimeoutError:
            # Silent past `silence`: said (a follower waiting with a deadline looks at it),
            # then opened again, resuming after the last id.
            yield Event(SILENT, {})


def _timed_out(error: BaseException) -> bool:
    return isinstance(error, TimeoutError) or (isinstance(error, urllib.error.URLError)
                                               and isinstance(error.reason, TimeoutError))


def landing_steps(reader: EventReader, listed: Callable[[], list[dict[str, Any]]], run: str,
                  tag: str | None = None, written: bool = False,
                  idle: float | None = None) -> Generator[dict[str, Any], None, None]:
    """Each step of ``run`` (of ``tag``, or every tag) once it is readable, in the order they
    become so: ``{run, tag, step, embedding, rows, written}``. ``listed()`` answers the run's
    timelines (``GET /api/steps``); the steps it lists when the stream opens are given first
    with ``written``, else only taken as seen. Ends after ``idle`` seconds without a new step
    (the reader's ``silence`` should be at most that)."""
    seen: set[str] = set()
    opened = False

    def fresh() -> Iterator[dict[str, Any]]:
        for timeline in listed():
            if tag is not None and timeline["tag"] != tag:
                continue
            for step in timeline["steps"]:
                if step["rows"] is not None and step["embedding"] not in seen:
                    seen.add(step["embedding"])
                    yield {"run": run, "tag": timeline["tag"], **step}

    deadline = None if idle is None else time.monotonic() + idle
    for event in reader:
        if event.kind == "open" and not opened:  # the stream is the server's: nothing missed
            opened = True
            steps = list(fresh())
            if written:
                yield from steps
        elif event.kind == "reset":
            yield from fresh()
        elif (event.kind == "step" and event.data.get("run") == run
              and (tag is None or event.data.get("tag") == tag)
              and event.data.get("state") == "ready" and event.data.get("action") != "removed"
              and event.data["embedding"] not in seen):
            seen.add(event.data["embedding"])
            yield {key: event.data[key] for key in ("run", "tag", "step", "embedding", "rows",
                                                     "written")}
        else:
            if deadline is not None and time.monotonic() > deadline:
                return
            continue
        deadline = None if idle is None else time.monotonic() + idle


async def in_thread(items: Generator[Any, None, None],
                    close: Callable[[], None]) -> AsyncIterator[Any]:
    """A blocking generator (over a stream's reader) as an async iterator: it runs on a
    thread of its own, each item handed to the event loop; leaving the ``async for`` calls
    ``close`` (the reader's: the thread's blocked read ends)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def hand(kind: str, value: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

    def pump() -> None:
        try:
            for item in items:
                hand("item", item)
                if stop.is_set():
                    break
        except BaseException as error:  # handed to the awaiting side
            hand("error", error)
        finally:
            items.close()
            hand("end", None)

    threading.Thread(target=pump, name="projector-events", daemon=True).start()
    try:
        while True:
            kind, value = await queue.get()
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        close()
