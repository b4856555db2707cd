"""TSV tensor load: ours (first parse, then the cached second start) against numpy.loadtxt and
TensorBoard's own projector plugin reading the same logdir, all in this process.

    python bench/bench_tsv_load.py [--rows 100000] [--dims 768]

TensorBoard is a benchmark-only dependency (pip install tensorboard).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from harness import machine_info

from projector_core.catalog import Catalog


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _write_logdir(root: Path, rows: int, dims: int) -> np.ndarray:
    matrix = np.random.default_rng(0).normal(size=(rows, dims)).astype(np.float32)
    np.savetxt(root / "tensors.tsv", matrix, delimiter="\t", fmt="%.7g")
    (root / "projector_config.pbtxt").write_text(
        'embeddings { tensor_name: "big" tensor_path: "tensors.tsv" }\n')
    return matrix


def _tensorboard_plugin_load(logdir: Path) -> np.ndarray | None:
    try:
        from tensorboard.backend.event_processing import plugin_event_multiplexer
        from tensorboard.plugins import base_plugin
        from tensorboard.plugins.projector.projector_plugin import ProjectorPlugin
        from werkzeug.test import Client
    except ImportError:
        return None
    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(str(logdir))
    context = base_plugin.TBContext(logdir=str(logdir), multiplexer=multiplexer)
    plugin = ProjectorPlugin(context)
    app = plugin.get_plugin_apps()["/tensor"]
    response = Client(app).get("/tensor?run=.&name=big")
    if response.status_code != 200:
        raise RuntimeError(response.get_data(as_text=True))
    return np.frombuffer(response.get_data(), dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=768)
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    with tempfile.TemporaryDirectory() as tmp:
        logdir, cache = Path(tmp) / "logs", Path(tmp) / "cache"
        logdir.mkdir()
        matrix = _write_logdir(logdir, args.rows, args.dims)
        size_mb = (logdir / "tensors.tsv").stat().st_size / 1e6
        print(f"TSV {args.rows} x {args.dims}, {size_mb:.0f} MB")

        def ours() -> np.ndarray:
            catalog = Catalog(logdir, cache_dir=cache)
            catalog.refresh()
            return np.asarray(catalog.embedding(".", "big").vectors())

        t_first, loaded = _timed(ours)
        t_cached, cached = _timed(ours)
        assert np.array_equal(loaded, cached)
        np.testing.assert_allclose(loaded, matrix, rtol=1e-6)
        t_loadtxt, _ = _timed(lambda: np.loadtxt(logdir / "tensors.tsv", dtype=np.float32,
                                                 delimiter="\t"))
        t_tensorboard, tb = _timed(lambda: _tensorboard_plugin_load(logdir))

    rows = [("numpy.loadtxt", t_loadtxt)]
    if tb is not None:
        rows.append(("TensorBoard projector plugin", t_tensorboard))
    print(f"{'':32} {'seconds':>9} {'ours first':>11} {'ours cached':>12}")
    print(f"{'ours, first load (parse+cache)':32} {t_first:9.3f}")
    print(f"{'ours, second load (cached)':32} {t_cached:9.3f}")
    for name, seconds in rows:
        print(f"{name:32} {seconds:9.3f} {seconds / t_first:10.2f}x {seconds / t_cached:11.0f}x")
    print("(ratios: reference time / ours; above 1 means ours is faster)")


if __name__ == "__main__":
    main()
