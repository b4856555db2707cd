"""A hostile upload to ``projector serve`` as a user runs it (issue 38): one line of 30,000,000
columns, 60 MB, under the 64 MiB upload limit, ran the server out of memory (the kernel killed
it at 24 GB). Its first block already holds more columns than the tensor budget: it is refused
naming the line, the server's memory grows by little more than the body it was sent, and the
server goes on answering."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import psutil
import pytest

from projector_core.formats.tensor_files import CHUNK_BYTES
from projector_core.formats.writer import add_embedding
from tests.cli_server import cli_server

MB = 2**20
WIDE_COLUMNS = 30_000_000
# What answering it may add to the server's resident memory: the 60 MB body as received and
# joined (twice) and the tensor's first block (CHUNK_BYTES), with room to spare; before: 24 GB.
MEMORY_BUDGET = 256 * MB
CPU_BUDGET_S = 1.0  # server CPU time for the whole answer (load on the machine leaves it be)

pytestmark = pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(),
                                reason="the peak is read from Linux's /proc (VmHWM)")


def _reset_peak(pid: int) -> None:
    """The kernel's high-water mark of resident memory, started again from now."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def _peak(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(kib) * 1024


def test_a_30_million_column_upload_is_refused_at_once_within_the_memory_budget(tmp_path):
    add_embedding(tmp_path / "logs", np.eye(4, dtype="f4"), tag="tiny")
    wide = b"0\t" * (WIDE_COLUMNS - 1) + b"0\n"
    with cli_server([str(tmp_path / "logs"), "--no-warm-up"], tmp_path) as server:
        process = psutil.Process(server.process.pid)
        idle = process.memory_info().rss
        cpu = sum(process.cpu_times()[:2])
        _reset_peak(process.pid)
        answer = httpx.post(f"{server.url}/api/uploads", params={"name": "wide.tsv"},
                            content=wide, timeout=120)
        used_cpu = sum(process.cpu_times()[:2]) - cpu
        peak = _peak(process.pid)
        assert answer.status_code == 422, answer.text
        first_block = CHUNK_BYTES // 2 + 1  # "0\t" cells: refused at the first block read
        assert answer.json()["detail"].startswith(f"wide.tsv line 1: at least {first_block:,} "
                                                  "columns")
        assert "over the budget of 65,536 columns per tensor TSV row" in answer.json()["detail"]
        print(f"server: {used_cpu:.2f} s CPU, peak {peak / MB:.0f} MB over idle {idle / MB:.0f}")
        assert used_cpu < CPU_BUDGET_S
        assert peak - idle < MEMORY_BUDGET
        assert server.get("/api/health").status_code == 200
        assert [run["name"] for run in server.get("/api/runs").json()] == ["."]
