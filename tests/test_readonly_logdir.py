"""LOGDIR is read-only to us: with its permissions removed everything still works, and not one
byte, timestamp or directory entry in it changes.

Tests may run as root, which ignores permission bits, so the guarantee is checked directly: a
snapshot of every entry (bytes, size, mtime, mode) before and after, and the caches found in
the cache folder outside LOGDIR.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from projector.server.app import SAMPLE_DATA
from sklearn.decomposition import PCA

from tests.builders import write_standalone_logdir, write_torch_logdir

Snapshot = dict[str, tuple]


def snapshot(root: Path) -> Snapshot:
    """Every entry under ``root``: kind, mode, size, mtime, and a hash of each file's bytes."""
    entries: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            digest = (hashlib.sha256(path.read_bytes()).hexdigest()
                      if stat.S_ISREG(info.st_mode) else None)
            entries[str(path.relative_to(root))] = (stat.S_IFMT(info.st_mode),
                                                    stat.S_IMODE(info.st_mode), info.st_size,
                                                    info.st_mtime_ns, digest)
    return entries


def set_writable(root: Path, writable: bool) -> None:
    for folder, dirs, files in os.walk(root):
        for name in files:
            os.chmod(Path(folder) / name, 0o644 if writable else 0o444)
        os.chmod(folder, 0o755 if writable else 0o555)
        del dirs  # os.walk still descends: only the folders' own modes changed


@pytest.fixture(scope="module")
def readonly_logdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Sample data (.bytes, .npy, TSV, sprite, bookmarks) + a PyTorch logdir, made read-only."""
    logdir = tmp_path_factory.mktemp("readonly") / "logs"
    shutil.copytree(SAMPLE_DATA, logdir / "sample",
                    ignore=shutil.ignore_patterns("*.py", "*.md", "__pycache__"))
    write_torch_logdir(logdir / "torch")
    write_standalone_logdir(logdir / "standalone")
    set_writable(logdir, False)
    yield logdir
    set_writable(logdir, True)


def exercise_every_route(url: str) -> int:
    """Fetch everything every embedding offers; return how many embeddings were read."""
    count = 0
    with httpx.Client(base_url=url, timeout=60) as client:
        for run in client.get("/api/runs").json():
            assert run["error"] is None, run
            for embedding in run["embeddings"]:
                assert embedding["error"] is None, embedding
                params = {"run": run["name"], "embedding": embedding["name"]}
                tensor = client.get("/api/tensor", params=params)
                assert tensor.status_code == 200
                n, d = embedding["shape"]
                assert len(tensor.content) == n * d * 4
                assert client.get("/api/metadata", params=params).status_code == 200
                assert client.get("/api/bookmarks", params=params).status_code == 200
                sprite = client.get("/api/sprite", params=params)
                assert sprite.status_code == (200 if embedding["sprite"] else 404)
                count += 1
        run_a_projection(client)
    return count


def run_a_projection(client: httpx.Client) -> None:
    """A PCA job, whose result cache must also land outside."""
    body = {"run": "sample/iris", "embedding": "iris", "method": "pca", "dims": 2, "params": {}}
    response = client.post("/api/projections", params={"wait": "true"}, json=body)
    assert response.status_code == 200, response.text
    ours = np.array(response.json()["coordinates"])[:, :2]  # the first two components
    tensor = client.get("/api/tensor", params={"run": "sample/iris", "embedding": "iris"})
    reference = PCA(2).fit_transform(np.frombuffer(tensor.content, "<f4").reshape(150, -1))
    np.testing.assert_allclose(ours * np.sign((ours * reference).sum(axis=0)), reference,
                               atol=1e-4)


def test_readonly_logdir_serves_everything_and_is_left_untouched(tmp_path, serve,
                                                                  readonly_logdir):
    before = snapshot(readonly_logdir)
    cache = tmp_path / "cache"
    url = serve(readonly_logdir, cache_dir=cache, refresh_seconds=0.1)
    assert exercise_every_route(url) == 6 + 2 + 2  # sample: digits, iris, words, 3 training steps
    time.sleep(0.5)  # a few live re-scans happen meanwhile
    assert exercise_every_route(url) == 10
    assert snapshot(readonly_logdir) == before
    cached = [p for p in cache.rglob("*") if p.is_file()]
    assert cached, "parsed tensors are cached outside LOGDIR"
    assert not any(p.resolve().is_relative_to(readonly_logdir.resolve()) for p in cached)


def test_default_cache_lands_outside_logdir(tmp_path, serve, readonly_logdir, monkeypatch):
    """No cache_dir given: $PROJECTOR_CACHE_DIR (else the user's cache folder), not LOGDIR."""
    cache = tmp_path / "user-cache"
    monkeypatch.setenv("PROJECTOR_CACHE_DIR", str(cache))
    before = snapshot(readonly_logdir)
    url = serve(readonly_logdir, cache_dir=None)
    assert exercise_every_route(url) == 10
    assert snapshot(readonly_logdir) == before
    assert any(p.is_file() for p in cache.rglob("*"))


def test_everything_works_without_any_writable_cache(tmp_path, serve, readonly_logdir):
    """The cache folder cannot be created (a file stands in its way): we serve regardless."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    before = snapshot(readonly_logdir)
    url = serve(readonly_logdir, cache_dir=blocker / "cache")
    assert exercise_every_route(url) == 10
    assert snapshot(readonly_logdir) == before
    assert blocker.read_text() == ""
