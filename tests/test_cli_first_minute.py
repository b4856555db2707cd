"""A new user's first minute with ``projector``, each case run as the user runs it: the CLI
in a subprocess, its exit code and what it says."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from projector_core.formats.chunked_writer import write_zarr
from tests.builders import write_tsv
from tests.test_cli import PROJECTOR, _run_until_served

# Python with an optional package made unimportable (as where it is not installed), then the CLI.
WITHOUT = ("import sys; sys.modules[{name!r}] = None; "
           "from projector.server.cli import main; sys.exit(main(sys.argv[1:]))")


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PROJECTOR, *args], capture_output=True, text=True, timeout=timeout)


def test_a_busy_port_is_said_before_the_logdir_is_read(tmp_path):
    logdir = tmp_path / "logs"
    write_tsv(logdir / "run" / "t.tsv", np.ones((4, 3), np.float32))
    (logdir / "run" / "projector_config.pbtxt").write_text(
        'embeddings { tensor_name: "t" tensor_path: "t.tsv" }')
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = run_cli("serve", str(logdir), "--port", str(port), "--cache-dir",
                         str(tmp_path / "cache"))
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "run run" not in result.stdout and "parsing" not in result.stderr  # never loaded
    assert not (tmp_path / "cache" / "tensors").exists()


def unservable_input(kind: str, folder: Path) -> tuple[Path, list[str]]:
    """A single input (and its options) that cannot be served."""
    if kind == "flat-zarr":  # a 1-D array, as a user may save by mistake
        import zarr

        zarr.create_array(store=str(folder / "flat.zarr"), shape=(10,), dtype="<f4")[:] = np.arange(10)
        return folder / "flat.zarr", []
    pq.write_table(pa.table({"a": [[1.0, 2.0], [3.0, 4.0]], "b": [[1.0, 2.0], [3.0, 4.0]],
                             "name": ["x", "y"]}), folder / "two.parquet")
    return folder / "two.parquet", (["--vector-column", "nope"] if kind == "no-such-column" else [])


@pytest.mark.parametrize(("kind", "message"), [
    ("two-list-columns", "choose the column of vectors with --vector-column (list columns: a, b)"),
    ("no-such-column", "field 'nope': has no column 'nope'"),
    ("flat-zarr", "an embedding is 2-D (N, D)"),
])
def test_a_single_input_that_cannot_be_served_exits_2(tmp_path, kind, message):
    target, extra = unservable_input(kind, tmp_path)
    result = run_cli("serve", str(target), *extra, "--port", "0", "--no-warm-up",
                     "--cache-dir", str(tmp_path / "cache"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "projector: nothing to serve:" in result.stderr and message in result.stderr
    assert "Projector serving" not in result.stdout and "Traceback" not in result.stderr


def test_a_logdir_with_broken_runs_serves_the_good_ones(tmp_path):
    logdir = tmp_path / "logs"
    write_tsv(logdir / "good" / "t.tsv", np.ones((4, 3), np.float32))
    (logdir / "good" / "projector_config.pbtxt").write_text(
        'embeddings { tensor_name: "t" tensor_path: "t.tsv" }')
    (logdir / "no-tensor" / "projector_config.pbtxt").parent.mkdir(parents=True)
    (logdir / "no-tensor" / "projector_config.pbtxt").write_text(
        'embeddings { tensor_name: "t" tensor_path: "missing.tsv" }')
    (logdir / "bad-config").mkdir()
    (logdir / "bad-config" / "projector_config.pbtxt").write_text("embeddings {")
    runs, stdout, _ = _run_until_served([str(logdir), "--no-warm-up"], tmp_path)
    assert "'name': 'good'" in runs
    assert "skipped: bad-config/projector_config.pbtxt line 1" in stdout
    assert "missing.tsv" in stdout


def test_metadata_for_a_multi_array_npz_is_an_error(tmp_path):
    np.savez(tmp_path / "multi.npz", a=np.ones((3, 2), np.float32), b=np.ones((3, 2), np.float32))
    (tmp_path / "meta.tsv").write_text("label\tkind\nx\ta\ny\tb\nz\tc\n")
    result = run_cli("serve", str(tmp_path / "multi.npz"), "--metadata", str(tmp_path / "meta.tsv"),
                     "--port", "0", "--no-warm-up", "--cache-dir", str(tmp_path / "cache"))
    assert result.returncode == 2
    assert "holds 2 arrays (multi/a, multi/b); --metadata describes a single array" in result.stderr


def test_metadata_replacing_a_tables_columns_is_said(tmp_path):
    pq.write_table(pa.table({"v": [[1.0, 2.0], [3.0, 4.0]], "name": ["x", "y"]}),
                   tmp_path / "one.parquet")
    (tmp_path / "meta.tsv").write_text("label\tkind\nx\ta\ny\tb\n")
    runs, stdout, _ = _run_until_served([str(tmp_path / "one.parquet"), "--metadata",
                                         str(tmp_path / "meta.tsv"), "--no-warm-up"], tmp_path)
    assert "'name': '.'" in runs
    assert "is shown instead of the metadata columns of" in stdout and "(name)" in stdout


def test_an_unwritable_cache_directory_is_a_warning_at_start(tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    port = _free_port()
    process = subprocess.Popen([*PROJECTOR, "serve", "--port", str(port), "--no-warm-up",
                                "--cache-dir", str(tmp_path / "a-file" / "cache")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_health(process, port)
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=20)
    assert "warning: cannot write the cache directory" in stderr
    assert "a-file/cache" in stderr and "--cache-dir" in stderr


def test_projector_mcp_without_the_sdk_is_an_install_hint(tmp_path):
    result = subprocess.run([sys.executable, "-c", WITHOUT.format(name="mcp"), "mcp", str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "projector: `projector mcp` needs the MCP SDK: pip install 'embedding-projector[agents]'")


def test_writing_zarr_without_zarr_is_an_install_hint(tmp_path):
    script = ("import sys; sys.modules['zarr'] = None; import numpy as np\n"
              "from projector_core.formats.writer import add_embedding\n"
              "add_embedding(sys.argv[1], np.ones((3, 2), np.float32), format='zarr')")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "logs")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "ImportError: writing zarr needs the zarr package: pip install 'embedding-projector[zarr]'"
        " (Python 3.11 or later)")
    assert not (tmp_path / "logs").exists()  # nothing half-written


def test_a_zarr_input_is_served_without_dask(tmp_path):
    write_zarr(tmp_path / "vectors.zarr", np.ones((5, 3), np.float32))
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-c", WITHOUT.format(name="dask"), "serve",
                                str(tmp_path / "vectors.zarr"), "--port", str(port),
                                "--no-warm-up", "--cache-dir", str(tmp_path / "cache")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = _wait_health(process, port)
        tensor = httpx.get(f"{url}/api/tensor", params={"run": ".", "embedding": "vectors"})
    finally:
        process.terminate()
        process.communicate(timeout=20)
    assert tensor.status_code == 200 and len(tensor.content) == 5 * 3 * 4


def test_docs_need_no_internet(tmp_path):
    port = _free_port()
    process = subprocess.Popen([*PROJECTOR, "serve", "--port", str(port), "--no-warm-up",
                                "--cache-dir", str(tmp_path / "cache")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = _wait_health(process, port)
        page = httpx.get(f"{url}/docs").text
        assets = [httpx.get(f"{url}/docs/assets/{name}") for name in
                  ("swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png")]
        outside = httpx.get(f"{url}/docs/assets/..%2F..%2F__init__.py")
    finally:
        process.terminate()
        process.communicate(timeout=20)
    assert "https://" not in page  # every script, style and icon comes from this server
    assert '"/docs/assets/swagger-ui-bundle.js"' in page and "/openapi.json" in page
    assert [a.status_code for a in assets] == [200, 200, 200]
    assert [a.headers["content-type"].split(";")[0] for a in assets] == [
        "text/javascript", "text/css", "image/png"]
    assert "SwaggerUIBundle" in assets[0].text
    assert outside.status_code == 404


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("projector 0.")


def test_progress_lines_never_say_zero_of_zero_mib(tmp_path):
    logdir = tmp_path / "logs"
    write_tsv(logdir / "run" / "t.tsv", np.ones((4, 3), np.float32))
    (logdir / "run" / "projector_config.pbtxt").write_text(
        'embeddings { tensor_name: "t" tensor_path: "t.tsv" }')
    _, _, stderr = _run_until_served([str(logdir), "--no-warm-up"], tmp_path)
    size = (logdir / "run" / "t.tsv").stat().st_size
    assert f"100.0% ({size} B / {size} B)" in stderr
    assert "0 / 0 MiB" not in stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_health(process: subprocess.Popen, port: int) -> str:
    import time

    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            if httpx.get(f"{url}/api/health").status_code == 200:
                return url
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("server did not come up")
