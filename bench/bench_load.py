"""Load on 127.0.0.1: many concurrent neighbour and tensor requests while a t-SNE job runs.

Starts a real ``projector serve`` on a generated LOGDIR (a TSV tensor and metadata behind a
``projector_config.pbtxt``, which TensorBoard reads too), starts a t-SNE job, then sends rounds
of concurrent requests (tensor downloads, neighbours of a point, neighbours of a vector, job
status) and reports p50/p99 latency per kind, the error count, the t-SNE progress made during
the load, and the server's resident memory before, after each round and at the end (once
the job is cancelled): a leak would show as growth from round to round.

References measured in the same run: the same tensor-only load against TensorBoard's projector
plugin (``/data/plugin/projector/tensor``) on the same LOGDIR, and scikit-learn's brute-force
``kneighbors`` for one query in-process (the compute floor under our HTTP neighbour latency).
Routes that do not exist yet (neighbours, projections) are left out of the mix and said so.

    python bench/bench_load.py [--n 20000] [--d 128] [--requests 600] [--rounds 3]
                               [--concurrency 32] [--no-reference]

The client runs on the same machine as the server(s): on a 2-core machine their figures
include that competition. Exits 1 if any request failed or memory grew across rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
from harness import machine_info

REPO = Path(__file__).resolve().parent.parent
RUN, EMBEDDING = ".", "vectors"
K = 20
MEMORY_GROWTH_LIMIT_MIB = 64  # RSS growth allowed from the first round to the last


# -- setup ------------------------------------------------------------------------------------




def make_logdir(root: Path, n: int, d: int) -> np.ndarray:
    """Clustered vectors as a TSV + metadata + config, the layout PyTorch's writer produces."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(20, d)).astype(np.float32) * 4
    labels = rng.integers(0, 20, n)
    data = (centres[labels] + rng.normal(size=(n, d))).astype(np.float32)
    root.mkdir(parents=True)
    np.savetxt(root / "tensors.tsv", data, fmt="%.6g", delimiter="\t")
    (root / "metadata.tsv").write_text("".join(f"cluster {c}\n" for c in labels))
    (root / "projector_config.pbtxt").write_text(
        f'embeddings {{ tensor_name: "{EMBEDDING}" tensor_path: "tensors.tsv" '
        'metadata_path: "metadata.tsv" }\n')
    return data


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, process: subprocess.Popen, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{url}: the server exited with code {process.returncode}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{url} did not come up within {timeout:.0f} s")


def start_projector(logdir: Path, cache: Path, log: Path) -> tuple[str, subprocess.Popen]:
    port = free_port()
    with log.open("w") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "projector.server.cli", "serve", str(logdir), "--port", str(port),
             "--cache-dir", str(cache), "--log-level", "info"],
            cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(f"{url}/api/health", process)
    return url, process


def start_tensorboard(logdir: Path) -> tuple[str, subprocess.Popen] | None:
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        return None
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host",
         "127.0.0.1", "--port", str(port), "--load_fast=false"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(f"{url}/data/plugin/projector/runs", process)
    return url, process


def rss_mib(pid: int) -> tuple[float, float]:
    """(resident, peak resident) memory of a process in MiB, from /proc."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", float("nan")), values.get("VmHWM", float("nan"))


# -- load -------------------------------------------------------------------------------------


@dataclass
class Results:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    examples: list[str] = field(default_factory=list)

    def add(self, other: Results) -> None:
        for kind, values in other.latencies.items():
            self.latencies[kind].extend(values)
        for kind, count in other.errors.items():
            self.errors[kind] += count
        self.examples.extend(other.examples)

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


@dataclass(frozen=True)
class Request:
    kind: str
    method: str
    path: str
    params: dict | None = None
    body: dict | None = None
    expected_bytes: int | None = None


def check(request: Request, response: httpx.Response) -> str | None:
    """Why a response is wrong, or None."""
    if response.status_code != 200:
        return f"{request.kind}: HTTP {response.status_code} {response.text[:120]}"
    if request.expected_bytes is not None and len(response.content) != request.expected_bytes:
        return f"{request.kind}: {len(response.content)} bytes, expected {request.expected_bytes}"
    if request.kind.startswith("neighbors") and len(response.json()["neighbors"]) != K:
        return f"{request.kind}: {len(response.json()['neighbors'])} neighbours, expected {K}"
    return None


async def run_load(base: str, requests: list[Request], concurrency: int) -> Results:
    results = Results()
    queue: asyncio.Queue[Request] = asyncio.Queue()
    for request in requests:
        queue.put_nowait(request)
    # A connection per request: a kept-alive connection that sat idle while this (CPU-starved)
    # client read a big body can meet uvicorn's 5 s keep-alive timeout, and a request sent on it
    # as the server closes it fails. That race is the client's to retry, not a server error, so
    # it is kept out of the count; a loopback connect costs well under a millisecond.
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=120) as client:

        async def worker() -> None:
            while not queue.empty():
                request = queue.get_nowait()
                start = time.perf_counter()
                try:
                    response = await client.request(request.method, request.path,
                                                    params=request.params, json=request.body)
                    problem = check(request, response)
                except httpx.HTTPError as error:
                    problem = f"{request.kind}: {type(error).__name__}: {error}"
                results.latencies[request.kind].append(time.perf_counter() - start)
                if problem:
                    results.errors[request.kind] += 1
                    if len(results.examples) < 5:
                        results.examples.append(problem)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return results


def mixed_requests(count: int, n: int, d: int, job: str | None, has_neighbors: bool,
                   rng: random.Random) -> list[Request]:
    tensor = Request("tensor", "GET", "/api/tensor", {"run": RUN, "embedding": EMBEDDING},
                     expected_bytes=n * d * 4)
    kinds: list[tuple[str, float]] = [("tensor", 0.2)]
    if has_neighbors:
        kinds += [("neighbors", 0.5), ("neighbors-vector", 0.2)]
    if job:
        kinds.append(("job-status", 0.1))
    names = [name for name, _ in kinds]
    weights = [weight for _, weight in kinds]
    requests = []
    for kind in rng.choices(names, weights, k=count):
        if kind == "tensor":
            requests.append(tensor)
        elif kind == "neighbors":
            requests.append(Request(kind, "GET", "/api/neighbors", {
                "run": RUN, "embedding": EMBEDDING, "index": rng.randrange(n), "k": K,
                "metric": rng.choice(["cosine", "euclidean"])}))
        elif kind == "neighbors-vector":
            requests.append(Request(kind, "POST", "/api/neighbors", body={
                "run": RUN, "embedding": EMBEDDING, "k": K, "metric": "cosine",
                "vector": [rng.gauss(0, 1) for _ in range(d)]}))
        else:
            requests.append(Request(kind, "GET", f"/api/jobs/{job}"))
    return requests


# -- report -----------------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values) * 1000, q)) if values else float("nan")


def print_table(results: Results) -> None:
    print(f"  {'kind':<18}{'count':>7}{'errors':>8}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for kind, values in sorted(results.latencies.items()):
        print(f"  {kind:<18}{len(values):>7}{results.errors.get(kind, 0):>8}"
              f"{percentile(values, 50):>10.1f}{percentile(values, 99):>10.1f}"
              f"{max(values) * 1000:>10.1f}")
    for example in results.examples:
        print(f"  error: {example}")


def job_status(client: httpx.Client, job: str) -> dict:
    return client.get(f"/api/jobs/{job}").json()


def sklearn_single_query_ms(data: np.ndarray, repeats: int = 30) -> float:
    from sklearn.neighbors import NearestNeighbors

    index = NearestNeighbors(metric="cosine", algorithm="brute").fit(data)
    rng = np.random.default_rng(1)
    times = []
    for row in rng.integers(0, len(data), repeats):
        start = time.perf_counter()
        index.kneighbors(data[row:row + 1], K + 1)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


# -- main -------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--requests", type=int, default=600, help="requests per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--tsne-iterations", type=int, default=5000,
                        help="long enough to outlast the load; cancelled at the end")
    parser.add_argument("--no-reference", action="store_true", help="skip TensorBoard")
    args = parser.parse_args()
    rng = random.Random(0)
    work = Path(tempfile.mkdtemp(prefix="projector-load-"))
    processes: list[subprocess.Popen] = []
    try:
        print(f"machine: {machine_info()}")
        logdir = work / "logs"
        data = make_logdir(logdir, args.n, args.d)
        print(f"data: {args.n} x {args.d} float32 ({data.nbytes / 2**20:.1f} MiB), TSV, "
              f"concurrency {args.concurrency}, {args.rounds} rounds of {args.requests}")
        server_log = work / "server.log"
        url, server = start_projector(logdir, work / "cache", server_log)
        processes.append(server)
        client = httpx.Client(base_url=url, timeout=120)
        paths = client.get("/openapi.json").json()["paths"]
        has_neighbors = "/api/neighbors" in paths
        has_projections = "/api/projections" in paths
        for route, present in (("/api/neighbors", has_neighbors),
                               ("/api/projections", has_projections)):
            if not present:
                print(f"note: {route} does not exist yet; left out of the load")
        rss_start = rss_mib(server.pid)
        client.get("/api/tensor", params={"run": RUN, "embedding": EMBEDDING})  # warm-up
        if has_neighbors:
            client.get("/api/neighbors", params={"run": RUN, "embedding": EMBEDDING,
                                                 "index": 0, "k": K})
        rss_warm = rss_mib(server.pid)

        job = None
        if has_projections:
            response = client.post("/api/projections", json={
                "run": RUN, "embedding": EMBEDDING, "method": "tsne", "dims": 2,
                "params": {"n_iter": args.tsne_iterations, "seed": 0}})
            response.raise_for_status()
            job = response.json()["job"]
            deadline = time.monotonic() + 120
            while job_status(client, job)["status"] == "queued" and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(1.0)  # past the kNN graph, into the iterations
        before = job_status(client, job) if job else None
        load_start = time.monotonic()

        mixed = Results()
        rss_rounds = []
        for _ in range(args.rounds):
            requests = mixed_requests(args.requests, args.n, args.d, job, has_neighbors, rng)
            mixed.add(asyncio.run(run_load(url, requests, args.concurrency)))
            rss_rounds.append(rss_mib(server.pid)[0])
        load_seconds = time.monotonic() - load_start
        after = job_status(client, job) if job else None
        if job:
            client.delete(f"/api/jobs/{job}")
        time.sleep(0.5)
        rss_end = rss_mib(server.pid)

        print(f"\nmixed load{' while t-SNE runs' if job else ''}, {load_seconds:.1f} s:")
        print_table(mixed)
        if before and after:
            done = (after["iteration"] or 0) - (before["iteration"] or 0)
            print(f"  t-SNE kept going: iteration {before['iteration']} -> {after['iteration']}"
                  f" ({done / load_seconds:.0f} it/s during the load), status {after['status']}")
        print(f"\nserver RSS MiB: start {rss_start[0]:.0f}, after warm-up {rss_warm[0]:.0f}, "
              f"after each round {', '.join(f'{r:.0f}' for r in rss_rounds)}, "
              f"after cancel {rss_end[0]:.0f} (peak {rss_end[1]:.0f})")
        growth = rss_end[0] - rss_rounds[0]  # a leak would grow with every round of requests

        print("\ntensor-only load, no job running (same requests to both servers):")
        tensor_requests = [Request("tensor", "GET", "/api/tensor",
                                   {"run": RUN, "embedding": EMBEDDING},
                                   expected_bytes=args.n * args.d * 4)] * (args.requests // 3)
        ours = asyncio.run(run_load(url, tensor_requests, args.concurrency))
        ours_p50 = percentile(ours.latencies["tensor"], 50)
        print(f"  projector    p50 {ours_p50:8.1f} ms  p99 "
              f"{percentile(ours.latencies['tensor'], 99):8.1f} ms  errors {ours.error_count}")
        errors = mixed.error_count + ours.error_count
        reference = None if args.no_reference else start_tensorboard(logdir)
        if reference is not None:
            tb_url, tb = reference
            processes.append(tb)
            tb_request = Request("tensor", "GET", "/data/plugin/projector/tensor",
                                 {"run": RUN, "name": EMBEDDING, "num_rows": args.n},
                                 expected_bytes=args.n * args.d * 4)
            asyncio.run(run_load(tb_url, [tb_request], 1))  # TensorBoard parses on first use
            theirs = asyncio.run(run_load(tb_url, [tb_request] * len(tensor_requests),
                                          args.concurrency))
            tb_p50 = percentile(theirs.latencies["tensor"], 50)
            print(f"  TensorBoard  p50 {tb_p50:8.1f} ms  p99 "
                  f"{percentile(theirs.latencies['tensor'], 99):8.1f} ms  errors "
                  f"{theirs.error_count}  (RSS {rss_mib(tb.pid)[0]:.0f} MiB)")
            print(f"  ratio p50 projector / TensorBoard: {ours_p50 / tb_p50:.2f}")
        elif not args.no_reference:
            print("  TensorBoard is not installed: no reference")

        if has_neighbors:
            floor = sklearn_single_query_ms(data)
            idle = asyncio.run(run_load(url, [r for r in mixed_requests(
                200, args.n, args.d, None, True, rng) if r.kind == "neighbors"][:50], 1))
            errors += idle.error_count
            idle_p50 = percentile(idle.latencies["neighbors"], 50)
            print(f"\nneighbours of a point, k={K}: projector p50 under load "
                  f"{percentile(mixed.latencies['neighbors'], 50):.1f} ms, idle one at a time "
                  f"{idle_p50:.1f} ms over HTTP; scikit-learn brute kneighbors in-process, idle: "
                  f"{floor:.1f} ms (ratio idle projector / scikit-learn {idle_p50 / floor:.2f})")

        if errors:
            problems = [line for line in server_log.read_text().splitlines()
                        if not line.startswith("INFO:") and "parsing" not in line]
            print("\nserver log, all but INFO lines (last 20):", *problems[-20:], sep="\n  ")
        memory_ok = growth <= MEMORY_GROWTH_LIMIT_MIB
        print(f"\nerrors: {errors}; RSS after the last round and the job's end minus after the "
              f"first round: {growth:+.0f} MiB (limit {MEMORY_GROWTH_LIMIT_MIB}): "
              f"{'bounded' if memory_ok else 'GROWING'}")
        client.close()
        return 0 if errors == 0 and memory_ok else 1
    finally:
        for process in processes:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
