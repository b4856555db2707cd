"""What the commands print while they work: progress lines on stderr (``serve``'s bytes read
while loading, ``export``'s and ``render``'s stages), sized for a terminal or for a log, and
what discovery found under LOGDIR, skipped entries with their reasons."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from projector_core.data.model import Embedding, Run

LOG_SECONDS = 2.0  # progress lines apart where stderr is not a terminal (one per update there)


def size_text(n: float) -> str:
    """Bytes for a person: ``512 B``, ``48 KiB``, ``3.4 MiB``, ``1.2 GiB`` (never ``0 MiB``)."""
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" or n >= 10 else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


class ProgressLine:
    """One self-overwriting progress line on stderr where it is a terminal, throttled to a few
    updates a second; elsewhere (CI logs, a pipe) one line per update, a few seconds apart."""

    def __init__(self) -> None:
        self._last = 0.0
        self._shown = False
        self._terminal = sys.stderr.isatty()

    def __call__(self, what: str, done: int, total: int) -> None:
        now = time.monotonic()
        finished = total and done >= total
        if now - self._last < (0.2 if self._terminal else LOG_SECONDS) and not finished:
            return
        self._last = now
        if total:
            line = f"{what}: {100 * done / total:5.1f}% ({size_text(done)} / {size_text(total)})"
        else:
            line = f"{what}: {size_text(done)}"
        if not self._terminal:
            sys.stderr.write(line + "\n")
        else:
            sys.stderr.write("\r" + line.ljust(78)[:120] + ("\n" if finished else ""))
        sys.stderr.flush()


class StageLine:
    """The stage and how far it is on stderr: one self-overwriting line a few times a second
    where stderr is a terminal; elsewhere (CI logs, a pipe) one line per update, a few
    seconds apart, each stage's first and last always said."""

    def __init__(self) -> None:
        self._last = 0.0
        self._stage = ""
        self._terminal = sys.stderr.isatty()

    def __call__(self, stage: str, fraction: float | None) -> None:
        now = time.monotonic()
        wait = 0.2 if self._terminal else LOG_SECONDS
        if stage == self._stage and now - self._last < wait and fraction != 1.0:
            return
        self._last, self._stage = now, stage
        done = "" if fraction is None else f" {100 * fraction:5.1f}%"
        if self._terminal:
            sys.stderr.write("\r" + f"{stage}:{done}".ljust(78)[:120])
        else:
            sys.stderr.write(f"{stage}:{done}\n")
        sys.stderr.flush()

    def end(self) -> None:
        if self._terminal:
            sys.stderr.write("\r" + " " * 78 + "\r")
            sys.stderr.flush()


def describe(runs: list[Run]) -> str:
    """What discovery found, including why anything was skipped."""
    lines = []
    for run in runs:
        lines.append(f"run {run.name}  ({(run.config or '').strip('()')})")  # "(plain arrays)" once
        if run.error:
            lines.append(f"  skipped: {run.error}")
        lines.extend(f"  warning: {warning}" for warning in run.warnings)
        lines.extend(describe_embedding(embedding) for embedding in run.embeddings)
    return "\n".join(lines)


def describe_embedding(embedding: Embedding) -> str:
    shape = "x".join(map(str, embedding.shape)) if embedding.shape else "?"
    files = ", ".join(f"{k}={v}" for k, v in embedding.sources.items() if k != "config")
    lines = [f"  {embedding.name}  {shape}  {files}"
             + ("  (loading in the background)" if embedding.loading is not None else "")]
    if embedding.error:
        lines.append(f"    error: {embedding.error}")
    lines.extend(f"    warning: {w}" for w in embedding.warnings)
    return "\n".join(lines)
