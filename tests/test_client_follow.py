"""The client follows a training run as the page does: each new step as it lands, from
``GET /api/events`` under real uvicorn (blocking, by callback, and as an async iterator)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from projector import Client
from projector_core.formats.writer import add_embedding
from tests.builders import vectors

pytestmark = pytest.mark.quiet_server


def _write(logdir: Path, step: int, tag: str = "default", rows: int = 20) -> None:
    add_embedding(logdir / "train", vectors(rows, 4, step), tag=tag, global_step=step)


def test_steps_lists_each_tag_with_when_it_was_written(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    for step in (0, 10):
        _write(logdir, step)
    client = Client(serve(logdir))
    [timeline] = client.steps("train")
    assert timeline["tag"] == "default"
    assert [(s["step"], s["embedding"], s["rows"]) for s in timeline["steps"]] == [
        (0, "default:00000", 20), (10, "default:00010", 20)]
    assert all(isinstance(s["written"], float) for s in timeline["steps"])


def test_follow_steps_yields_each_step_as_it_lands(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    _write(logdir, 0)
    client = Client(serve(logdir))
    landed = []
    steps = client.follow_steps("train", written=True)
    landed.append(next(steps))  # the step already written, the stream open from here on
    for step in (5, 10):
        _write(logdir, step)
        landed.append(next(steps))
    _write(logdir, 15, tag="other")  # another tag of the run: followed too when none is named
    landed.append(next(steps))
    steps.close()
    assert [(s["tag"], s["step"], s["embedding"], s["rows"]) for s in landed] == [
        ("default", 0, "default:00000", 20), ("default", 5, "default:00005", 20),
        ("default", 10, "default:00010", 20), ("other", 15, "other:00015", 20)]
    assert all(s["run"] == "train" and s["written"] > 0 for s in landed)


def test_follow_calls_back_until_told_to_stop_or_idle(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    _write(logdir, 0)
    client = Client(serve(logdir))
    heard = []
    writing = threading.Event()

    def on_step(step):
        heard.append(step["step"])
        if len(heard) == 1:
            writing.set()
        return len(heard) < 2

    def writer():
        writing.wait(30)
        _write(logdir, 7)

    thread = threading.Thread(target=writer)
    thread.start()
    assert client.follow("train", on_step, written=True) == 2  # the second said stop
    thread.join()
    assert heard == [0, 7]
    assert client.follow("train", on_step, idle=2) == 0  # nothing new: back after idle


def test_follow_steps_async_yields_the_new_steps_of_a_tag(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    _write(logdir, 0)
    client = Client(serve(logdir))

    async def follow() -> list[int]:
        got = []
        async for step in client.follow_steps_async("train", tag="default", written=True):
            got.append(step["step"])  # the first: step 0, there before; the stream open since
            if len(got) == 1:
                await asyncio.to_thread(_write, logdir, 2, "other")  # not this tag
                await asyncio.to_thread(_write, logdir, 3)
            if len(got) == 2:
                break
        return got

    assert asyncio.run(asyncio.wait_for(follow(), 60)) == [0, 3]
