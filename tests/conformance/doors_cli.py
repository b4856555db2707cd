"""The CLI door: ``projector export`` and ``projector render`` as subprocesses, on a cache
directory of their own (numba's cache is the session's, inherited)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conformance.answers import Refused, png_pixels
from tests.conformance.dataset import Blobs
from tests.conformance.site import site_answer

PROJECTOR = [sys.executable, "-m", "projector.server.cli"]
WAIT = 900


class Cli:
    def __init__(self, blobs: Blobs, work: Path) -> None:
        self.blobs = blobs
        self.work = work
        self.cache = work / "cache"
        self._runs = 0

    def _run(self, command: str, *args: str) -> str:
        """stdout of ``projector COMMAND ARGS``; :class:`Refused` with the error it printed."""
        done = subprocess.run([*PROJECTOR, command, *args, "--cache-dir", str(self.cache)],
                              capture_output=True, text=True, timeout=WAIT, check=False)
        if done.returncode != 0:
            raise Refused(done.stderr.strip().removeprefix(f"projector {command}: "))
        return done.stdout

    def _folder(self, name: str) -> Path:
        self._runs += 1
        return self.work / f"{self._runs}-{name}"

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        out = self._folder("load")
        self._run("export", str(self.blobs.npy), str(out), "--metadata", str(self.blobs.tsv))
        answer = site_answer(out, ".", self.blobs.npy.stem)
        return {"rows": answer["n"], "metadata": answer["metadata"]}

    def export(self, request: dict[str, Any]) -> dict[str, Any]:
        out = self._folder("site")
        self._run("export", str(self.blobs.logdir), str(out), "--run", request["run"],
                  "--embedding", request["embedding"], "--projection", *request["projection"],
                  "--neighbors", str(request["neighbors"]))
        return site_answer(out, request["run"], request["embedding"])

    def render(self, request: dict[str, Any]) -> Any:
        picture = self._folder("picture.png")
        self._run("render", str(self.blobs.logdir), "-o", str(picture), "--run", request["run"],
                  "--embedding", request["embedding"], "--projection", request["projection"],
                  "--width", str(request["width"]))
        return png_pixels(picture.read_bytes())
