"""``GET /api/events`` under uvicorn: the stream a page follows instead of polling."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from projector_core.data import loading
from projector_core.data.catalog import Catalog
from projector_core.formats import tensor_files
from projector_core.formats.writer import add_embedding
from tests.builders import vectors, write_pbtxt_run
from tests.cli_server import cli_server
from tests.event_stream import EventStream
from tests.test_loading import HeldLoad

HANG = 30  # seconds: only catches a server that does not stop


def _ready(name: str):
    return lambda m: m.event == "embedding" and m.data["embedding"] == name and \
        m.data["status"] == "ready"


def test_embedding_events_carry_the_run_list_entry(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    add_embedding(logdir / "run", vectors(12, 3), metadata=[f"w{i}" for i in range(12)])
    url = serve(logdir)
    with EventStream(url) as stream:
        add_embedding(logdir / "run", vectors(12, 3, 1), metadata=[f"w{i}" for i in range(12)],
                      global_step=1)
        event = stream.wait_for(_ready("default:00001"))
        listed = httpx.get(f"{url}/api/runs").json()[0]["embeddings"][1]
        assert event.data["entry"] == listed  # what /api/runs says of it, without asking
        assert event.id and event.id.startswith(stream.messages[0].id.split("-")[0])
        run = stream.wait_for(lambda m: m.event == "run").data
        assert run["embeddings"] == ["default:00000", "default:00001"]


def test_a_reconnecting_follower_gets_what_it_missed(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    add_embedding(logdir / "run", vectors(8, 2))
    url = serve(logdir)
    with EventStream(url) as first:
        add_embedding(logdir / "run", vectors(8, 2, 1), global_step=1)
        seen = first.wait_for(_ready("default:00001"))
    add_embedding(logdir / "run", vectors(8, 2, 2), global_step=2)  # while nobody follows
    with EventStream(url, last_event_id=seen.id) as resumed:  # EventSource sends the last id
        assert resumed.messages[0].id == seen.id
        got = resumed.wait_for(_ready("default:00002"))
        assert all(m.event != "reset" for m in resumed.messages)
        assert not resumed.of("embedding", embedding="default:00001")  # not told twice
        assert got.id is not None
    with EventStream(url, last_event_id="0000-1") as stranger:  # another server's id
        stranger.wait_for(lambda m: m.event == "reset")


@pytest.mark.quiet_server
def test_a_loading_tensor_tells_its_progress(tmp_path: Path, serve, monkeypatch):
    """A page waiting for a big tensor shows how far it is from the stream, never polling."""
    matrix = vectors(400, 16, 5)
    write_pbtxt_run(tmp_path / "logs", 'embeddings { tensor_name: "big" tensor_path: "t.tsv" }',
                    {"t.tsv": "".join("\t".join(map(str, r.tolist())) + "\n" for r in matrix)})
    monkeypatch.setattr(tensor_files, "CHUNK_BYTES", 8 * 1024)
    monkeypatch.setattr(loading, "TELL_SECONDS", 0)
    held = HeldLoad()  # the load waits at its first report until the stream is open
    catalog = Catalog(tmp_path / "logs", cache_dir=tmp_path / "cache", progress=held,
                      background_bytes=0)
    catalog.refresh()  # as projector serve does: the load starts before the app and its hub
    try:
        url = serve(catalog=catalog)
        assert held.holding.wait(30)
        stream = EventStream(url).__enter__()
    finally:
        held.release()
    try:
        stream.wait_for(_ready("big"))
        told = [m.data for m in stream.of("embedding", embedding="big", status="loading")]
    finally:
        stream.close()
    fractions = [data["progress"] for data in told if "progress" in data]
    assert len(fractions) >= 2 and fractions == sorted(fractions) and 0 < fractions[-1] <= 1
    # The listing's entry as it is when sent: loading with its bytes, or ready by then.
    size = (tmp_path / "logs" / "t.tsv").stat().st_size
    assert all(data["entry"]["progress"]["bytes_total"] == size for data in told
               if data["entry"]["status"] == "loading")


def test_a_quiet_stream_sends_heartbeats(tmp_path: Path, serve, sample_logdir: Path):
    url = serve(sample_logdir, refresh_seconds=0, heartbeat_seconds=0.1)
    with EventStream(url) as stream:
        assert stream.messages[0].data == {"heartbeat": 0.1}
        deadline = time.monotonic() + 30
        while stream.comments < 3:  # comment lines, no events: nothing changed
            assert time.monotonic() < deadline and not stream.ended.is_set()
            time.sleep(0.05)
        assert [m.event for m in stream.messages] == ["open"]


@pytest.mark.slow
def test_stopping_the_server_ends_open_streams(tmp_path: Path):
    """uvicorn's graceful shutdown waits for every open response; a stream never ends by
    itself, so the server ends them (``stopping.py``) or SIGTERM would hang."""
    logdir = tmp_path / "logs"
    add_embedding(logdir / "run", vectors(8, 2))
    with cli_server([str(logdir), "--no-warm-up"], tmp_path) as server:
        streams = [EventStream(server.url).__enter__() for _ in range(3)]
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(HANG)
        except subprocess.TimeoutExpired:
            pytest.fail(f"projector serve still runs {HANG} s after SIGTERM with streams open")
        for stream in streams:
            assert stream.ended.wait(HANG)
