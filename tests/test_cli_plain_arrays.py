"""``export``, ``render`` and ``mcp`` take a plain array with ``--metadata`` as ``serve`` does
(one argument group, one catalog), and a port out of range is argparse's error (issue 33,
item 4). Each run as the user runs it: the CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mcp import ClientSession

from tests.builders import vectors
from tests.test_cli_first_minute import run_cli
from tests.test_mcp import _payload, _session

N = 60


@pytest.fixture
def plain(tmp_path: Path) -> tuple[Path, Path]:
    array = tmp_path / "points.npy"
    np.save(array, vectors(N, 5))
    meta = tmp_path / "meta.tsv"
    meta.write_text("group\tsize\n" + "".join(f"g{i % 3}\t{i}\n" for i in range(N)))
    return array, meta


def test_render_colours_by_a_column_of_the_metadata_file(plain, tmp_path):
    array, meta = plain
    picture = tmp_path / "p.png"
    base = ["render", str(array), "-o", str(picture), "--width", "300", "--color-by", "group",
            "--cache-dir", str(tmp_path / "cache")]
    without = run_cli(*base)
    assert without.returncode == 2 and "group" in without.stderr and not picture.exists()
    done = run_cli(*base, "--metadata", str(meta))
    assert done.returncode == 0, done.stderr
    assert picture.read_bytes().startswith(b"\x89PNG")


def test_export_writes_the_metadata_file_beside_the_array(plain, tmp_path):
    array, meta = plain
    out = tmp_path / "site"
    done = run_cli("export", str(array), str(out), "--metadata", str(meta),
                   "--cache-dir", str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    written = "".join(p.read_text(errors="replace") for p in out.rglob("*.tsv"))
    assert "group\tsize" in written and "g2\t59" in written


def test_mcp_serves_the_array_with_its_metadata(plain, tmp_path):
    array, meta = plain
    seen: dict = {}

    async def body(session: ClientSession) -> None:
        runs = _payload(await session.call_tool("list_runs", {}))
        seen["runs"] = runs

    _session(array, tmp_path / "cache", body, "--metadata", str(meta))
    assert "group" in json.dumps(seen["runs"]) and "size" in json.dumps(seen["runs"])


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_a_port_out_of_range_is_a_usage_error(port):
    done = run_cli("serve", "--port", port)
    assert done.returncode == 2
    assert "argument --port" in done.stderr and "Traceback" not in done.stderr
