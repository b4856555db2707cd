"""``projector serve --annotations`` and ``projector annotations export|import`` run as a user
runs them: subprocesses on the test's store (``PROJECTOR_ANNOTATIONS``, conftest.py)."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pyarrow.parquet as pq
import pytest

from tests.cli_server import PROJECTOR, cli_server

IRIS = {"run": "iris", "embedding": "iris"}


def projector(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([*PROJECTOR, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_labels_go_back_to_training_and_come_back_from_a_file(sample_logdir, tmp_path):
    column = tmp_path / "fixed.tsv"
    column.write_text("".join("cat\n" if i < 50 else "dog\n" for i in range(150)))
    done = projector("annotations", "import", str(sample_logdir), str(column), "--run", "iris",
                     "--embedding", "iris", "--column", "fixed", "--user", "ann", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "150 rows changed" in done.stdout
    # One embedding has labels: it is the one exported without --run/--embedding.
    tsv = projector("annotations", "export", str(sample_logdir), cwd=tmp_path)
    assert tsv.returncode == 0, tsv.stderr
    lines = (tmp_path / "iris-iris-annotations.tsv").read_text().splitlines()
    assert lines[0] == "species\tsepal_length\tsepal_width\tpetal_length\tpetal_width\tfixed"
    assert lines[1].endswith("\tcat") and lines[-1].endswith("\tdog") and len(lines) == 151
    parquet = projector("annotations", "export", str(sample_logdir), "--format", "parquet",
                        "-o", "out.parquet", cwd=tmp_path)
    assert parquet.returncode == 0, parquet.stderr
    assert pq.read_table(tmp_path / "out.parquet").column("fixed").to_pylist()[49:51] == [
        "cat", "dog"]
    drawn = projector("render", str(sample_logdir), "--run", "iris", "--embedding", "iris",
                      "--color-by", "fixed", "--width", "200", "-o", "fixed.png", cwd=tmp_path)
    assert drawn.returncode == 0, drawn.stderr  # an annotation column colours a picture
    short = tmp_path / "short.tsv"
    short.write_text("x\n")
    refused = projector("annotations", "import", str(sample_logdir), str(short), "--run", "iris",
                        "--embedding", "iris", "--column", "other", cwd=tmp_path)
    assert refused.returncode == 2 and "short.tsv" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.slow
def test_serve_says_where_labels_are_kept_or_why_not_and_serves_either_way(
        sample_logdir, tmp_path):
    for name in ("kept", "damaged", "off"):
        (tmp_path / name).mkdir()
    with cli_server([str(sample_logdir), "--no-warm-up"], tmp_path / "kept") as server:
        assert "annotations: kept in" in server.output()
        done = httpx.post(f"{server.url}/api/annotations", json={
            **IRIS, "column": "fixed", "value": "x", "rows": [0]}, timeout=60)
        assert done.status_code == 200, done.text
    damaged = tmp_path / "damaged.sqlite"
    damaged.write_bytes(b"garbage" * 1000)
    with cli_server([str(sample_logdir), "--no-warm-up", "--annotations", str(damaged)],
                    tmp_path / "damaged") as server:
        said = server.stderr.read_text()
        assert f"warning: annotation store {damaged}" in said and "read-only" in said
        assert server.get("/api/metadata", **IRIS).status_code == 200
        refused = httpx.post(f"{server.url}/api/annotations", json={
            **IRIS, "column": "fixed", "value": "x", "rows": [0]}, timeout=60)
        assert refused.status_code == 409
    with cli_server([str(sample_logdir), "--no-warm-up", "--annotations", "off"],
                    tmp_path / "off") as server:
        assert "annotations are off (--annotations off)" in server.stdout.read_text()


def test_the_help_names_the_option(tmp_path):
    helped = subprocess.run([sys.executable, "-m", "projector.server.cli", "serve", "--help"],
                            capture_output=True, text=True, timeout=60)
    assert "--annotations PATH|off" in helped.stdout
