"""A LOGDIR that changes while the server runs: new runs and steps appear without a restart."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import numpy as np

from tests.builders import vectors, write_tsv


def _shapes(url: str) -> dict[tuple[str, str], list[int] | None]:
    runs = httpx.get(f"{url}/api/runs").json()
    return {(r["name"], e["name"]): e["shape"] for r in runs for e in r["embeddings"]}


def _wait_for(url: str, key: tuple[str, str], timeout: float = 15) -> list[int] | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shapes = _shapes(url)
        if shapes.get(key) is not None:  # listed, and read (listed as loading first)
            return shapes[key]
        time.sleep(0.2)
    raise AssertionError(f"{key} did not appear within {timeout} s")


def test_new_runs_and_rewritten_configs_appear(tmp_path: Path, serve):
    import tensorboardX

    logdir = tmp_path / "logs"
    writer = tensorboardX.SummaryWriter(str(logdir / "exp1"))
    writer.add_embedding(vectors(10, 4), global_step=0)
    writer.flush()
    url = serve(logdir, refresh_seconds=0.3)
    assert _shapes(url) == {("exp1", "default:00000"): [10, 4]}

    writer.add_embedding(vectors(12, 4), global_step=1)  # a new step rewrites the config
    writer.close()
    assert _wait_for(url, ("exp1", "default:00001")) == [12, 4]

    second = tensorboardX.SummaryWriter(str(logdir / "exp2"))
    second.add_embedding(vectors(5, 2), global_step=7)
    second.close()
    assert _wait_for(url, ("exp2", "default:00007")) == [5, 2]


def test_a_file_being_written_is_never_served_half_written(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    (logdir / "seed").mkdir(parents=True)
    np.save(logdir / "seed" / "t.npy", vectors(3, 2))
    (logdir / "seed" / "projector_config.pbtxt").write_text(
        'embeddings { tensor_name: "t" tensor_path: "t.npy" }')
    url = serve(logdir, refresh_seconds=0.2)

    run = logdir / "growing"
    run.mkdir()
    (run / "projector_config.pbtxt").write_text(
        'embeddings { tensor_name: "g" tensor_path: "g.tsv" }')
    matrix = vectors(40, 3)
    rows = ["\t".join(repr(float(v)) for v in row) + "\n" for row in matrix]
    with (run / "g.tsv").open("w") as handle:
        for start in range(0, 40, 4):  # a slow writer: 10 appends over about 2 seconds
            handle.writelines(rows[start:start + 4])
            handle.flush()
            shape = _shapes(url).get(("growing", "g"))
            assert shape in (None, [40, 3]), f"served a half-written tensor: {shape}"
            time.sleep(0.2)
    assert _wait_for(url, ("growing", "g")) == [40, 3]
    write_tsv(run / "unused.tsv", matrix)  # unrelated files do not disturb the run
    assert _shapes(url)[("growing", "g")] == [40, 3]
