"""The CLI door: ``projector export``, ``render`` and ``annotations`` as subprocesses, on a
cache directory and an annotation store of their own (numba's cache is the session's,
inherited)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conformance.answers import Refused, column_answer, png_pixels, typed_table
from tests.conformance.dataset import Blobs, N
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
        """stdout of ``projector COMMAND ARGS`` (COMMAND may be two words: ``annotations
        export``); :class:`Refused` with the error it printed."""
        done = subprocess.run([*PROJECTOR, *command.split(), *args, "--cache-dir", str(self.cache)],
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

    def annotate(self, request: dict[str, Any]) -> dict[str, Any]:
        """Each edit as a file holding the value on its rows, imported; the column read back
        from the export (an import sets every row: one edit per column)."""
        names = ["--run", request["run"], "--embedding", request["embedding"],
                 "--annotations", str(self.work / "annotations.sqlite")]
        changed = []
        for edit in request["edits"]:
            rows = set(edit["rows"])
            labels = self._folder("labels.csv")  # a header line (a one-column TSV has none)
            cells = [edit["value"] if i in rows else '""' for i in range(N)]  # "": none set
            labels.write_text("\n".join([request["column"], *cells]) + "\n")
            said = self._run("annotations import", str(self.blobs.logdir), str(labels),
                             "--column", request["column"], *names)
            changed.append(int(said.split(": ")[1].split(" rows changed")[0].replace(",", "")))
        table = self._run("annotations export", str(self.blobs.logdir), "-o", "-", *names)
        return column_answer(changed, typed_table(table)[request["column"]])
