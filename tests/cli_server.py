"""``projector serve`` started the way a user starts it: a subprocess on 127.0.0.1, in the
user's environment (so with the background warm-up on), output kept in files to read after."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

PROJECTOR = [sys.executable, "-m", "projector.server.cli"]
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class CliServer:
    url: str
    process: subprocess.Popen
    stdout: Path
    stderr: Path

    def get(self, route: str, **params) -> httpx.Response:
        return httpx.get(f"{self.url}{route}", params=params, timeout=120)

    def output(self) -> str:
        return self.stdout.read_text() + self.stderr.read_text()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def cli_server(args: list[str], tmp_path: Path, timeout: float = 180,
               own_numba_cache: bool = False) -> Iterator[CliServer]:
    """Serve ``args`` until the block ends; up once every listed embedding is ready.

    The server compiles numba's kernels into the session's cache (``NUMBA_CACHE_DIR``, from
    tests/conftest.py), or with ``own_numba_cache`` into its own ``--cache-dir``, as on a
    user's machine."""
    port = _free_port()
    stdout, stderr = tmp_path / "serve.out", tmp_path / "serve.err"
    dropped = {"PROJECTOR_NO_WARM_UP", *(["NUMBA_CACHE_DIR"] if own_numba_cache else [])}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    with stdout.open("w") as out, stderr.open("w") as err:
        process = subprocess.Popen(
            [*PROJECTOR, "serve", *args, "--port", str(port), "--cache-dir",
             str(tmp_path / "cache")], stdout=out, stderr=err, env=env, cwd=tmp_path)
    server = CliServer(f"http://127.0.0.1:{port}", process, stdout, stderr)
    try:
        deadline = time.monotonic() + timeout
        while not _ready(server):
            assert process.poll() is None, server.output()
            assert time.monotonic() < deadline, f"not served in {timeout} s: {server.output()}"
            time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _ready(server: CliServer) -> bool:
    try:
        runs = httpx.get(f"{server.url}/api/runs", timeout=10).json()
    except httpx.TransportError:
        return False
    return all(e["status"] == "ready" for run in runs for e in run["embeddings"])
