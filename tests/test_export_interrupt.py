"""Ctrl+C during ``projector export --projection tsne``: exit 130 as ``serve`` and ``render``
do, the running t-SNE stopped before Python exits, and the folder left as it was (absent, or
the earlier export whole), so the next export is not refused."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from projector_core.jobs.engine import JobManager
from tests.cli_server import PROJECTOR

HANG = 120  # seconds: only catches an export that never gets going or never stops


def _export(tmp_path: Path, out: Path, projection: str) -> subprocess.Popen:
    return subprocess.Popen([*PROJECTOR, "export", str(tmp_path / "v.npy"), str(out),
                             "--projection", projection, "--neighbors", "5",
                             "--cache-dir", str(tmp_path / "cache")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)


def _interrupt_once_the_tsne_runs(process: subprocess.Popen) -> tuple[int, str]:
    """SIGINT once the progress line shows the t-SNE past 0 %: (exit status, stderr)."""
    seen = b""
    deadline = time.monotonic() + HANG
    assert process.stderr is not None
    while not any(float(done) > 0 for done in re.findall(rb"tsne: +([\d.]+)%", seen)):
        chunk = process.stderr.read1(4096)
        assert chunk and time.monotonic() < deadline, seen.decode(errors="replace")
        seen += chunk
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=HANG)
    return process.returncode, (seen + rest).decode(errors="replace")


@pytest.mark.slow
def test_ctrl_c_during_a_tsne_export_exits_130_and_leaves_the_folder_as_it_was(tmp_path: Path):
    # 4,000 points: the t-SNE runs for many seconds, long past the first progress line.
    np.save(tmp_path / "v.npy", np.random.default_rng(0).normal(size=(4000, 16)).astype("f4"))
    out = tmp_path / "site"

    status, err = _interrupt_once_the_tsne_runs(_export(tmp_path, out, "tsne"))
    assert status == 130, err
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert "interrupted; " in err and "terminate called" not in err and "Traceback" not in err

    earlier = _export(tmp_path, out, "pca")  # the next export is not refused
    assert earlier.wait(HANG) == 0, earlier.communicate()[1]
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert json.loads((out / "static.json").read_text())["embeddings"]

    status, err = _interrupt_once_the_tsne_runs(_export(tmp_path, out, "tsne"))
    assert status == 130, err
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # the earlier export, whole and untouched
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_shutdown_with_wait_returns_once_the_work_has_left():
    """The cause of the abort: a daemon worker still inside a kernel's native call (usearch,
    torch: pybind11) as Python finalizes is ended while taking the GIL back, and the process
    aborts. ``shutdown(wait=True)`` returns only after the work has stopped at its step."""
    jobs = JobManager(workers=1)
    running, left = threading.Event(), threading.Event()

    def work(ctx) -> None:
        try:
            running.set()
            while True:
                ctx.step(None, 0.5)
                np.linalg.eigh(np.eye(64))  # native work between steps
        finally:
            left.set()

    job = jobs.submit(work)
    assert running.wait(HANG)
    jobs.shutdown(wait=True)
    assert left.is_set() and job.status.value == "cancelled"
