"""The connection to a Dask cluster and what its workers hold: the only module importing Dask.

Each chunked embedding's shards are read by the workers (never by the server) and kept in
their memory with their norms, one Dask future per shard, so a query only ships the query
vectors and gets back top-k lists. A worker that dies loses its shards; Dask re-reads them
on the remaining workers from the lineage (the task that read them), and queued tasks are
retried there. Every wait has a timeout: a cluster that went away is a
:class:`ClusterUnavailable` (a 503), never a hang.
"""

from __future__ import annotations

import logging
import pickle
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from distributed import Client, Future, LocalCluster, as_completed, wait
from distributed.client import FutureCancelledError
from distributed.comm.core import CommClosedError
from distributed.scheduler import KilledWorker

from projector_core.distributed.errors import ClusterUnavailable
from projector_core.distributed.shard_tasks import add_parts, hold, sum_over
from projector_core.formats.chunked import ChunkedVectors
from projector_core.storage.recent import Recent
from projector_core.storage.tensor_cache import default_cache_dir

log = logging.getLogger(__name__)

LOCAL_PREFIX = "local:"
DEFAULT_TIMEOUT = 120.0  # seconds any one wait on the cluster may take
_RETRIES = 2  # a task lost with its worker is tried again this often elsewhere
_HELD_EMBEDDINGS = 2  # embeddings whose shards stay in worker memory
_CLUSTER_ERRORS = (OSError, TimeoutError, CommClosedError, KilledWorker, FutureCancelledError,
                   pickle.PicklingError)


class Cluster:
    """A ``dask.distributed`` client, for ``tcp://host:port`` or ``local:N`` worker processes."""

    def __init__(self, address: str, timeout: float = DEFAULT_TIMEOUT,
                 store_dir: Path | None = None) -> None:
        self.address = address
        self.timeout = timeout
        # Where the workers write results and tiles: storage they and the server share.
        self.store_dir = Path(store_dir) if store_dir else default_cache_dir() / "cluster"
        self._local: LocalCluster | None = None
        self._held: Recent[str, list[Future[Any]]] = Recent(
            _HELD_EMBEDDINGS, on_drop=lambda futures: self.client.cancel(futures))
        try:
            if address.startswith(LOCAL_PREFIX):
                workers = int(address[len(LOCAL_PREFIX):])
                if workers < 1:
                    raise ValueError
                # One thread per worker process: BLAS in each task, no oversubscription.
                self._local = LocalCluster(n_workers=workers, threads_per_worker=1,
                                           processes=True, host="127.0.0.1",
                                           dashboard_address=None)
                self.client = Client(self._local, set_as_default=False)
            else:
                self.client = Client(address, timeout=min(timeout, 30.0), set_as_default=False)
        except ValueError:
            raise ValueError(f"--dask takes tcp://HOST:PORT or local:N (N >= 1), not "
                             f"{address!r}") from None
        except _CLUSTER_ERRORS as error:
            raise ClusterUnavailable(f"cannot reach the Dask scheduler at {address}: {error}") \
                from None

    @property
    def scheduler_address(self) -> str:
        address: str = self.client.scheduler.address
        return address

    def workers(self) -> list[str]:
        self.check()
        return sorted(self.client.scheduler_info(n_workers=-1)["workers"])

    def check(self) -> None:
        """Raise :class:`ClusterUnavailable` at once when the scheduler is gone."""
        if self.client.status != "running":
            raise ClusterUnavailable(f"the Dask cluster at {self.address} is not connected "
                                     f"({self.client.status}); the projector keeps serving "
                                     "what needs no cluster")

    def close(self) -> None:
        self.client.close()
        if self._local is not None:
            self._local.close()

    # -- shards held by the workers ------------------------------------------------------------
    def held(self, vectors: ChunkedVectors) -> list[Future[Any]]:
        """One future per shard, its rows in a worker's memory (read there on first use)."""
        self.check()
        shards = vectors.shards()
        name = f"{vectors.fingerprint}-{len(shards)}"
        return self._held.get_or_compute(name, lambda: [
            self.client.submit(hold, shard, key=f"shard-{name}-{i}", retries=_RETRIES)
            for i, shard in enumerate(shards)])

    # -- running tasks -------------------------------------------------------------------------
    def map(self, function: Callable[..., Any], held: list[Future[Any]], *args: Any) -> list[Any]:
        """``function(shard, *args)`` on every held shard, where it lies; results in order."""
        futures = self._submit(function, held, args)
        return self._gather(futures)

    def map_by_worker(self, function: Callable[..., Any], held: list[Future[Any]],
                      *args: Any) -> list[Any]:
        """``function([shards one worker holds], *args)`` once per worker, on that worker.

        One task per worker instead of one per shard: the scheduler's per-task cost is paid
        twice per query, not once per shard. A shard that moved meanwhile is fetched or
        re-read, so the answer stays right, only slower.
        """
        self.check()
        try:
            if not all(future.done() for future in held):  # first use: the shards are read
                with self.client.as_current():
                    wait(held, timeout=self.timeout)
            who = self.client.who_has(held)
            groups: dict[str, list[Future[Any]]] = {}
            for future in held:
                holders = who.get(future.key) or [""]
                groups.setdefault(holders[0], []).append(future)
            futures = [self.client.submit(function, group, *args, retries=_RETRIES, pure=False,
                                          **({"workers": [worker], "allow_other_workers": True}
                                             if worker else {}))
                       for worker, group in groups.items()]
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None
        return self._gather(futures)

    def map_each(self, function: Callable[..., Any], held: list[Future[Any]],
                 per_shard: list[Any]) -> list[Any]:
        """``function(shard, argument)`` with each shard's own argument; results in order."""
        self.check()
        try:
            futures = [self.client.submit(function, future, argument, retries=_RETRIES, pure=False)
                       for future, argument in zip(held, per_shard, strict=True)]
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None
        return self._gather(futures)

    def submit(self, function: Callable[..., Any], *args: Any) -> Future[Any]:
        """One task, its result left on the worker (pass the future to later tasks)."""
        self.check()
        try:
            return self.client.submit(function, *args, retries=_RETRIES, pure=False)
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None

    def run(self, function: Callable[..., Any], arguments: list[tuple[Any, ...]]) -> list[Any]:
        """``function(*args)`` once per argument tuple, anywhere; results in order."""
        self.check()
        try:
            futures = [self.client.submit(function, *args, retries=_RETRIES, pure=False)
                       for args in arguments]
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None
        return self._gather(futures)

    def everywhere(self, function: Callable[..., Any], *args: Any) -> None:
        """``function(*args)`` on every worker (dropping what a worker keeps for a store)."""
        try:
            self.client.run(function, *args)
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None

    def submit_each(self, function: Callable[..., Any], held: list[Future[Any]],
                    per_shard: list[Any]) -> list[Future[Any]]:
        """``function(shard, argument)`` per shard, results left on the workers."""
        return [self.submit(function, future, argument)
                for future, argument in zip(held, per_shard, strict=True)]

    def result(self, future: Future[Any], timeout_factor: float = 1.0) -> Any:
        """A task's result here, waiting at most ``timeout_factor`` x the timeout."""
        try:
            return future.result(timeout=self.timeout * timeout_factor)
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None

    def each_unordered(self, function: Callable[..., Any], tasks: list[tuple[Any, ...]], *,
                       timeout_factor: float = 1.0) -> Iterator[tuple[int, Any]]:
        """``function(*task)`` per task (a held shard among its arguments draws it to the
        worker holding it), yielding (task number, result) as each finishes; a long job
        (placing every point on a t-SNE map) may wait ``timeout_factor`` x the timeout."""
        self.check()
        try:
            futures = [self.client.submit(function, *task, retries=_RETRIES, pure=False)
                       for task in tasks]
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None
        position = {future.key: i for i, future in enumerate(futures)}
        timeout = self.timeout * timeout_factor
        try:
            with self.client.as_current():
                finished = as_completed(futures, timeout=timeout)
            for future in finished:
                yield position[future.key], future.result(timeout=timeout)
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None
        finally:
            self.client.cancel(futures)

    def reduce(self, function: Callable[..., tuple[Any, ...]], held: list[Future[Any]],
               *args: Any) -> tuple[Any, ...]:
        """Sum of ``function(shard, *args)`` over the shards: each worker adds up its own
        shards, so one partial sum per worker (not per shard) crosses the network."""
        return add_parts(*self.map_by_worker(sum_over, held, function, *args))

    def _submit(self, function: Callable[..., Any], held: list[Future[Any]],
                args: tuple[Any, ...]) -> list[Future[Any]]:
        self.check()
        try:
            return [self.client.submit(function, future, *args, retries=_RETRIES, pure=False)
                    for future in held]
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None

    def _gather(self, futures: list[Future[Any]]) -> list[Any]:
        deadline = time.monotonic() + self.timeout
        try:
            return [future.result(timeout=max(0.01, deadline - time.monotonic()))
                    for future in futures]
        except _CLUSTER_ERRORS as error:
            raise self._unavailable(error) from None
        finally:
            self.client.cancel(futures)

    def _unavailable(self, error: BaseException) -> ClusterUnavailable:
        if isinstance(error, TimeoutError):
            why = f"did not answer within {self.timeout:g} s"
        elif isinstance(error, KilledWorker):
            why = f"lost the workers running a task ({error})"
        else:
            why = f"failed: {type(error).__name__}: {error}"
        log.warning("Dask cluster %s %s", self.address, why)
        return ClusterUnavailable(f"the Dask cluster at {self.address} {why}")
