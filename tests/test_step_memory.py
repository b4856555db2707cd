"""Steps piling up keep the server's memory bounded: step tensors stay in the cache's files
(mapped when asked for, the newest few kept), metadata equal across steps is held once; and
which LOGDIRs are polled rather than watched."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest

from projector_core.data.catalog import KEEP_MAPPED, Catalog
from projector_core.data.watching import file_system, polls
from projector_core.formats.writer import add_embedding
from tests.builders import vectors

MAPS = Path("/proc/self/maps")


def _mapped(folder: Path) -> set[str]:
    return {line.split()[-1] for line in MAPS.read_text().splitlines()
            if line.split()[-1].startswith(str(folder))}


@pytest.mark.skipif(not MAPS.exists(), reason="reads the process's maps (Linux)")
def test_only_the_newest_step_tensors_stay_mapped_and_labels_are_held_once(tmp_path: Path):
    logdir, cache = tmp_path / "logs", tmp_path / "cache"
    labels = [f"p{i % 7}" for i in range(40)]
    steps = {step: vectors(40, 6, step) for step in range(12)}
    for step, matrix in steps.items():
        add_embedding(logdir, matrix, metadata=labels, global_step=step)
    catalog = Catalog(logdir, cache_dir=cache)
    catalog.refresh()
    run = catalog.run(".")
    assert len(run.embeddings) == 12
    for embedding in run.embeddings:  # every step read once, as a page walking them would
        assert embedding.vectors().sum() != 0
    gc.collect()
    assert 0 < len(_mapped(cache / "tensors")) <= KEEP_MAPPED
    for step, embedding in zip(steps, run.embeddings, strict=True):
        np.testing.assert_array_equal(embedding.vectors(), steps[step])  # mapped again
        assert embedding.status == "ready" and embedding.shape == (40, 6)
    assert len({id(e.metadata()) for e in run.embeddings}) == 1


def test_network_file_systems_are_polled(tmp_path: Path):
    table = tmp_path / "mountinfo"
    table.write_text(
        "22 1 0:21 / / rw,relatime - ext4 /dev/vda rw\n"
        "40 22 0:50 / /mnt/shared rw,relatime shared:7 - nfs4 server:/export rw,vers=4.2\n"
        "41 40 0:51 / /mnt/shared\\040disk/local rw - xfs /dev/vdb rw\n")
    assert file_system(Path("/mnt/shared/runs/exp1"), table) == "nfs4"
    assert file_system(Path("/mnt/shared disk/local/x"), table) == "xfs"
    assert file_system(Path("/home/me"), table) == "ext4"
    assert file_system(Path("/x"), tmp_path / "missing") is None
    assert polls(tmp_path, "poll") is True and polls(tmp_path, "notify") is False
