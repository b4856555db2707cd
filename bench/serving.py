"""What the start-up benches share: a server started as a user starts it, timed from the
process start to the moment a route answers."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(command: list[str], log: Path) -> subprocess.Popen:
    """The server as a user runs it: with Python's bytecode cache (pip writes it at install).
    A shell with PYTHONDONTWRITEBYTECODE set, as in some CI images, would otherwise compile
    every module of a source checkout from source on each start: 0.14 s of CPU here."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with log.open("w") as handle:
        return subprocess.Popen(command, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT,
                                env=env)


def projector_command(logdir: Path | None, port: int, cache: Path, *extra: str) -> list[str]:
    where = [str(logdir)] if logdir is not None else []
    return [sys.executable, "-m", "projector.server.cli", "serve", *where, "--port", str(port),
            "--cache-dir", str(cache), *extra]


def tensorboard_command(logdir: Path, port: int) -> list[str]:
    return [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host",
            "127.0.0.1", "--port", str(port), "--load_fast=false"]


def until(process: subprocess.Popen, started: float, answered: Callable[[], bool],
          timeout: float = 600, every: float = 0.01) -> float:
    """Seconds from ``started`` until ``answered()`` is true; the process must stay up."""
    deadline = started + timeout
    while time.perf_counter() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with code {process.returncode}")
        try:
            if answered():
                return time.perf_counter() - started
        except (httpx.TransportError, http.client.HTTPException, OSError):
            pass  # not listening yet, or the connection dropped
        time.sleep(every)
    raise SystemExit(f"no answer within {timeout:.0f} s")


def cpu_seconds(pid: int) -> float:
    """CPU seconds the process has used (user + system, Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_quiet(process: subprocess.Popen, timeout: float = 1800, window: float = 1.0,
               share: float = 0.05) -> float:
    """Seconds until the server's process used under ``share`` of a core for ``window``
    seconds: its background work (warm-up, default view) is done."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if process.poll() is not None:
            raise SystemExit(f"the server exited with code {process.returncode}")
        before = cpu_seconds(process.pid)
        time.sleep(window)
        if cpu_seconds(process.pid) - before < share * window:
            return time.perf_counter() - started
    raise SystemExit(f"the server was not quiet within {timeout:.0f} s")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def served_bytes(url: str, params: dict, expected: int) -> Callable[[], bool]:
    """True once ``url`` answers 200 with the whole tensor. Read by the standard library's
    http.client into one buffer: httpx spends most of a second of Python on 150 MB (measured:
    0.9 s against 0.25 s, and curl 0.15 s), which would hide the servers' own time."""
    parts = urllib.parse.urlsplit(url)
    target = f"{parts.path}?{urllib.parse.urlencode(params)}"

    def answered() -> bool:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)
        try:
            connection.request("GET", target)
            response = connection.getresponse()
            return response.status == 200 and len(response.read()) == expected
        finally:
            connection.close()

    return answered
