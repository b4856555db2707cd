"""A training run watched while it writes: each step the writers add arrives on the event stream
as ``loading``, then ``ready``; a step still being written is never shown broken or partial;
one whose files stop short becomes an error naming the file."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from projector_core.data.catalog import Catalog
from projector_core.data.completeness import Completeness
from projector_core.formats.writer import add_embedding
from tests.builders import vectors, write_pbtxt_run
from tests.event_stream import EventStream, Message


def _step(run: str, step: int, state: str):
    return lambda m: (m.event == "step" and m.data["run"] == run and m.data["step"] == step
                      and m.data["state"] == state)


def _states(stream: EventStream, run: str, embedding: str) -> list[str]:
    return [m.data["state"] for m in stream.of("step", run=run, embedding=embedding)
            if m.data["action"] != "removed"]


def _tensor(url: str, run: str, embedding: str, dims: int) -> np.ndarray:
    response = httpx.get(f"{url}/api/tensor", params={"run": run, "embedding": embedding})
    assert response.status_code == 200, response.text
    return np.frombuffer(response.content, "<f4").reshape(-1, dims)


@pytest.mark.slow
def test_pytorch_and_tensorboardx_steps_arrive_as_loading_then_ready(tmp_path: Path, serve):
    pytest.importorskip("tensorboard")  # PyTorch's SummaryWriter needs it
    import tensorboardX
    from torch.utils.tensorboard import SummaryWriter

    logdir = tmp_path / "logs"
    logdir.mkdir()
    url = serve(logdir)
    writers = {"torch": SummaryWriter(str(logdir / "torch")),
               "tbx": tensorboardX.SummaryWriter(str(logdir / "tbx"))}
    written: dict[tuple[str, int], np.ndarray] = {}
    with EventStream(url) as stream:
        for step in range(3):
            for run, writer in writers.items():
                matrix = vectors(20 + step, 6, step)
                labels = [f"p{i}" for i in range(len(matrix))] if step != 1 else None
                writer.add_embedding(matrix, metadata=labels, global_step=step * 10)
                writer.flush()
                written[run, step * 10] = matrix
            for run in writers:
                ready = stream.wait_for(_step(run, step * 10, "ready")).data
                assert (ready["tag"], ready["rows"], ready["dims"]) == ("default", 20 + step, 6)
                assert ready["written"] is not None and ready["error"] is None
        for (run, step), matrix in written.items():
            name = f"default:{step:05d}"
            assert _states(stream, run, name) == ["loading", "ready"], (run, step)
            np.testing.assert_array_equal(_tensor(url, run, name, 6), matrix.astype("<f4"))
        runs = {m.data["run"] for m in stream.of("run", action="added")}
        assert runs == {"torch", "tbx"}
        entry = stream.wait_for(lambda m: m.event == "embedding" and m.data["status"] == "ready")
        assert entry.data["entry"]["shape"] == entry.data["shape"]  # as /api/runs lists it
    for writer in writers.values():
        writer.close()


@pytest.mark.slow
def test_a_step_written_slowly_is_never_shown_broken_or_partial(tmp_path: Path, serve):
    """Config first, then the tensors in pieces over about 5 s: a TSV beside its metadata (as
    PyTorch lays a step out) and a ``.bytes`` file growing to its ``tensor_shape``."""
    logdir = tmp_path / "logs"
    logdir.mkdir()
    url = serve(logdir)
    text, raw = vectors(400, 8, 1), vectors(300, 4, 2)
    rows = ["\t".join(map(str, row)) + "\n" for row in text.tolist()]
    with EventStream(url) as stream:
        write_pbtxt_run(logdir / "slow", (
            'embeddings { tensor_name: "text:00001" tensor_path: "t.tsv" metadata_path: "m.tsv" }\n'
            'embeddings { tensor_name: "raw:00001" tensor_path: "r.bytes" tensor_shape: [300, 4] }\n'),
            {"m.tsv": "".join(f"p{i}\n" for i in range(400))})
        pieces = 10
        with (logdir / "slow" / "t.tsv").open("wb") as tsv, \
                (logdir / "slow" / "r.bytes").open("wb") as binary:
            for piece in range(pieces):
                tsv.write("".join(rows[piece * 40:(piece + 1) * 40]).encode())
                last = piece == pieces - 1
                tsv.write(b"" if last else rows[(piece + 1) * 40][:5].encode())  # a row cut short
                tsv.flush()
                binary.write(raw.tobytes()[piece * 480:(piece + 1) * 480])
                binary.flush()
                time.sleep(0.5)
                if not last:
                    tsv.seek(-5, 2)  # the cut row is written whole with the next piece
                    tsv.truncate()
        for name, matrix in (("text:00001", text), ("raw:00001", raw)):
            stream.wait_for(lambda m, name=name: m.event == "step" and m.data["embedding"] == name
                            and m.data["state"] == "ready")
            steps = stream.of("step", run="slow", embedding=name)
            assert [m.data["state"] for m in steps] == ["loading", "ready"], name
            assert steps[-1].data["rows"] == len(matrix)
            np.testing.assert_array_equal(_tensor(url, "slow", name, matrix.shape[1]), matrix)
        shown = [m.data["status"] for m in stream.of("embedding", run="slow")]
        assert "error" not in shown and shown[-1] == "ready"


def test_a_step_whose_files_stop_short_becomes_an_error_naming_the_file(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    logdir.mkdir()
    catalog = Catalog(logdir, cache_dir=tmp_path / "cache",
                      completeness=Completeness(quiet=1.5))
    catalog.refresh()
    url = serve(catalog=catalog)
    with EventStream(url) as stream:
        write_pbtxt_run(logdir / "cut", 'embeddings { tensor_name: "raw:00003" tensor_path: '
                                        '"r.bytes" tensor_shape: [300, 4] }',
                        {"r.bytes": vectors(300, 4).tobytes()[:1000]})
        failed = stream.wait_for(_step("cut", 3, "error"))
        assert "r.bytes" in failed.data["error"] and "tensor_shape [300, 4]" in failed.data["error"]
        assert _states(stream, "cut", "raw:00003") == ["loading", "error"]
        listed = httpx.get(f"{url}/api/runs").json()[0]["embeddings"][0]
        assert listed["status"] == "error" and "r.bytes" in listed["error"]

        (logdir / "cut" / "r.bytes").write_bytes(vectors(300, 4).tobytes())  # written at last
        stream.wait_for(_step("cut", 3, "ready"))


def test_removed_steps_and_runs_are_told(tmp_path: Path, serve):
    logdir = tmp_path / "logs"
    for step in (0, 1):
        add_embedding(logdir / "run", vectors(10, 3, step), global_step=step)
    url = serve(logdir)
    with EventStream(url) as stream:
        config = logdir / "run" / "projector_config.pbtxt"
        kept = config.read_text().split("embeddings {")
        config.write_text("embeddings {".join(kept[:2]))  # step 1 taken out of the config
        removed = stream.wait_for(lambda m: m.event == "step" and m.data["action"] == "removed")
        assert (removed.data["step"], removed.data["embedding"]) == (1, "default:00001")
        shutil.rmtree(logdir / "run")
        stream.wait_for(lambda m: m.event == "run" and m.data["action"] == "removed")
        gone = stream.of("step", action="removed")
        assert [m.data["step"] for m in gone] == [1, 0]


def test_a_polled_logdir_tells_the_same_events(tmp_path: Path, serve):
    """Polling, the fallback where the file system tells nothing (network mounts)."""
    logdir = tmp_path / "logs"
    logdir.mkdir()
    url = serve(logdir, watch="poll", refresh_seconds=0.2)
    with EventStream(url) as stream:
        add_embedding(logdir / "run", vectors(30, 5), metadata=[str(i) for i in range(30)],
                      tag="enc", global_step=7)
        ready: Message = stream.wait_for(_step("run", 7, "ready"))
        assert (ready.data["tag"], ready.data["rows"], ready.data["dims"]) == ("enc", 30, 5)
        assert _states(stream, "run", "enc:00007") == ["loading", "ready"]
