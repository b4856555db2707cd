"""The speed gate: a quick subset of bench/, each figure a ratio to a reference measured in the
same run, compared with its baseline in ``speed_baseline.json``.

A figure fails when it is more than ``TOLERANCE`` (2x) worse than its baseline: a noisy
machine does not fail it, a 3x slowdown does, however far the figure is from its goal. Every
figure is ours / reference, lower is better. ``scripts/test.sh`` runs it (so CI does); the full
benches keep their own commands. The baseline changes only in a commit that says why
(``--write-baseline`` prints the new file; review it, then commit it).

    python bench/speed_gate.py [--only NAME ...] [--list] [--write-baseline]

Gated figures (a few minutes in all on two cores):

- ``pca_vs_sklearn``: our PCA (10 components) of 200k x 256 / scikit-learn's PCA, same data;
- ``knn_vs_numpy_scan``: one exact euclidean 100-NN query over 500k x 256 / the bare numpy
  product ``data @ q`` (the memory-bandwidth floor);
- ``tsne_api_vs_opentsne``: a t-SNE of 5k x 50 blobs (300 iterations) asked of ``projector
  serve`` over HTTP / ``openTSNE.TSNE.fit`` in this process, same threads;
- ``umap_sampled_vs_umap_learn``: our sampled UMAP of 40k x 50 blobs (a 15k sample fitted with
  the projector's defaults, the rest placed) / umap-learn fitted on all 40k;
- ``busy_pca_over_idle``: a requested PCA (60k x 768) on a server preparing a 300k x 768
  default view / the same request on the idle server;
- ``frontend_first_picture_whole_over_tiles``: seconds to the first picture of 300k points
  in headless Chromium by the page's default path (the whole set) / by its other path (tiles),
  each a fresh profile on the same warm server.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # frontend_user imports bench.* as a package

BASELINE = HERE / "speed_baseline.json"
TOLERANCE = 2.0


@dataclass(frozen=True)
class Figure:
    ratio: float
    measured: str  # what the ratio is made of, for a person


def pca_vs_sklearn() -> Figure:
    from bench_pca import make_data
    from harness import timed_together
    from sklearn.decomposition import PCA

    from projector_core.kernels.pca import pca

    data = make_data(200_000, 256)
    got = timed_together({"ours": lambda: pca(data, 10),
                          "sklearn": lambda: PCA(10, random_state=0).fit_transform(data)}, 3)
    return Figure(got["ours"] / got["sklearn"],
                  f"ours {got['ours']:.2f} s, scikit-learn {got['sklearn']:.2f} s")


def knn_vs_numpy_scan() -> Figure:
    from bench_knn import make_data
    from harness import timed_together

    from projector_core.kernels.knn import ExactIndex

    data = make_data(500_000, 256)
    index = ExactIndex(data)
    query = data[12345].copy()
    got = timed_together({"ours": lambda: index.query(query, 100, "euclidean"),
                          "scan": lambda: data @ query}, 7)
    return Figure(got["ours"] / got["scan"],
                  f"ours {got['ours'] * 1e3:.1f} ms, numpy scan {got['scan'] * 1e3:.1f} ms")


def tsne_api_vs_opentsne() -> Figure:
    import numpy as np
    from bench_tsne import api_vs_opentsne
    from sklearn.datasets import make_blobs

    data = make_blobs(5_000, 50, centers=30, cluster_std=2.0, random_state=0)[0]
    ref_runs, our_runs = api_vs_opentsne(data.astype(np.float32), 300, 2)
    ours = statistics.median(r["seconds"] for r in our_runs)
    ref = statistics.median(r["seconds"] for r in ref_runs)
    return Figure(ours / ref, f"through the API {ours:.2f} s, openTSNE {ref:.2f} s")


def umap_sampled_vs_umap_learn() -> Figure:
    import numpy as np
    import umap as umap_learn
    from sklearn.datasets import make_blobs

    from projector_core.kernels.sampling import sampled_umap

    data = make_blobs(40_000, 50, centers=30, cluster_std=2.0, random_state=0)[0]
    data = data.astype(np.float32)
    umap_learn.UMAP(random_state=0, n_epochs=2).fit(data[:5_000])  # numba compiles, untimed
    sampled_umap(data[:2_000], 500, 2, 15, 0.1, 2, 0)
    started = time.perf_counter()
    umap_learn.UMAP(random_state=0).fit(data)
    reference = time.perf_counter() - started
    started = time.perf_counter()
    sampled_umap(data, 15_000, 2, 15, 0.1, None, 0)
    ours = time.perf_counter() - started
    return Figure(ours / reference, f"ours {ours:.1f} s, umap-learn full fit {reference:.1f} s")


def busy_pca_over_idle() -> Figure:
    from busy_default_view import busy_over_idle

    with tempfile.TemporaryDirectory() as tmp:
        idle, busy = busy_over_idle(Path(tmp), 300_000, 60_000, 2_000, 768, ("pca",), 2)["pca"]
    return Figure(busy / idle, f"busy {busy:.2f} s, idle {idle:.2f} s")


def frontend_first_picture_whole_over_tiles() -> Figure:
    from playwright.sync_api import sync_playwright

    from bench.bench_frontend import ARGS, CHROMIUM, VIEWPORT
    from bench.frontend_scale import write_scale_logdir
    from bench.frontend_user import HIDE_OVERLAYS, ServeProcess, first_picture
    from bench.serving import free_port

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        write_scale_logdir(Path(tmp) / "logdir", 300_000)
        server = ServeProcess(Path(tmp) / "logdir", Path(tmp) / "cache", free_port())
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            server.wait_loaded()
            probe = browser.new_context(viewport=VIEWPORT)  # where the plot is, no data shown
            page = probe.new_page()
            page.route("**/api/runs", lambda route: route.fulfill(json=[]))
            page.goto(server.url + "/")
            box = page.locator('[data-testid="plot"]').bounding_box()
            probe.close()
            times: dict[str, list[float]] = {"": [], "?tiles=always": []}
            for _ in range(3):  # the first round warms the server's caches: not counted
                for query, seen in times.items():
                    context = browser.new_context(viewport=VIEWPORT)
                    page = context.new_page()
                    page.add_init_script(HIDE_OVERLAYS)
                    seconds, _ = first_picture(page, server.url + "/" + query, box, 120)
                    context.close()
                    if seconds is None:
                        raise SystemExit(f"no first picture at /{query}")
                    seen.append(seconds)
        finally:
            browser.close()
            server.stop()
    whole, tiles = (statistics.median(t[1:]) for t in times.values())
    return Figure(whole / tiles, f"whole set {whole:.2f} s, tiles {tiles:.2f} s")


FIGURES: dict[str, Callable[[], Figure]] = {f.__name__: f for f in (
    pca_vs_sklearn, knn_vs_numpy_scan, tsne_api_vs_opentsne, umap_sampled_vs_umap_learn,
    busy_pca_over_idle, frontend_first_picture_whole_over_tiles)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(FIGURES), default=list(FIGURES))
    parser.add_argument("--list", action="store_true", help="the gated figures and baselines")
    parser.add_argument("--write-baseline", action="store_true",
                        help="print a baseline file of this run's ratios (goals kept)")
    args = parser.parse_args()
    baseline = json.loads(BASELINE.read_text())
    if args.list:
        for name, entry in baseline.items():
            print(f"{name}: baseline {entry['baseline']}x, goal <= {entry['goal']}x")
        return 0
    print(f"speed gate: load average {os.getloadavg()[0]:.1f}, a figure fails above "
          f"{TOLERANCE:g}x its baseline", flush=True)
    failed, measured = [], {}
    for name in args.only:
        started = time.perf_counter()
        figure = FIGURES[name]()
        entry = baseline[name]
        limit = TOLERANCE * entry["baseline"]
        ok = figure.ratio <= limit
        measured[name] = round(figure.ratio, 3)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {figure.ratio:.2f}x ({figure.measured}); "
              f"baseline {entry['baseline']:.2f}x, fails above {limit:.2f}x; goal <= "
              f"{entry['goal']}x ({'met' if figure.ratio <= entry['goal'] else 'not met'}); "
              f"{time.perf_counter() - started:.0f} s, load average {os.getloadavg()[0]:.1f}",
              flush=True)
        if not ok:
            failed.append(name)
    if args.write_baseline:
        print(json.dumps({name: {**baseline[name], "baseline": measured.get(
            name, baseline[name]["baseline"])} for name in baseline}, indent=2))
    if failed:
        print(f"speed gate failed: {', '.join(failed)} more than {TOLERANCE:g}x slower than "
              "the baseline, against the reference measured beside it")
        return 1
    print(f"speed gate passed: {len(args.only)} figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
