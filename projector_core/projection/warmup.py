"""The compute libraries, loaded and compiled in the background once the server is up.

Importing openTSNE and scikit-learn takes about 1 s, umap-learn 2 s (without pynndescent:
``kernels/umap_learn.py``), and numba then compiles what a UMAP job runs (the fuzzy graph's
two kernels, then the epoch kernel: about 5 s of one core on an empty numba cache). The
server starts without any of them (``projections.py`` imports them on first use); this thread
imports them once the server is listening and runs a tiny UMAP, in the order a job needs them,
so the first real job finds everything ready; then it ends (nothing else is compiled: UMAP's
neighbours come from our own indexes, never NN-descent). A job asked meanwhile shows its PCA
preview at once and waits only for what is still compiling.

The compiling itself runs first in a child process, at low priority, into numba's disk cache;
this process then only imports and loads what the child compiled. Compiling in the server's
own process held up a job asked at once: its first frame came after 5-7 s instead of 0.5 s
(the two threads took turns at the interpreter and at module imports). numba's compiled code is also
kept on disk, under the project's cache directory (never LOGDIR): umap-learn caches few of its
kernels itself, so the others are marked for caching as it is imported (``umap_learn.py``),
and a later server loads them instead.

The warm-up is a guess, so it is background work (``jobs/priority.py``): before each of its
steps it gives way to requested jobs (never while holding the import lock, which a requested
UMAP takes too), and the compiling child process is stopped while one runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from projector_core.jobs.engine import JobManager
from projector_core.jobs.priority import RequestedWork, yield_point
from projector_core.kernels.umap_learn import import_lock, umap_module

log = logging.getLogger("projector")

NUMBA_CACHE_SUBDIR = "numba"
PR_SET_PDEATHSIG = 1  # linux/prctl.h
POLL_CHILD = 0.1  # seconds between looks at the compiling child and at requested work
START_DELAY_SECONDS = 0.5  # uvicorn binds and answers the page's first requests first
_started = threading.Event()
ready = threading.Event()  # set once the warm-up has finished (or failed)


def use_numba_cache(cache_dir: Path | None) -> None:
    """Point numba's on-disk cache into our cache directory (numba reads this on import)."""
    if cache_dir is None or "NUMBA_CACHE_DIR" in os.environ or "numba" in sys.modules:
        return
    os.environ["NUMBA_CACHE_DIR"] = str(Path(cache_dir) / NUMBA_CACHE_SUBDIR)


def start_warm_up(after: Callable[[], object] | None = None,
                  delay: float = START_DELAY_SECONDS, jobs: JobManager | None = None) -> None:
    """Start the warm-up thread, once per process; it first waits ``delay`` and ``after()``
    (the tensors loading in the background come first: on two cores they share the CPU).
    It gives way to ``jobs``' requested jobs."""
    if _started.is_set():
        return
    _started.set()
    threading.Thread(target=_warm_up, args=(after, delay, jobs), name="warm-up",
                     daemon=True).start()


def _warm_up(after: Callable[[], object] | None, delay: float, jobs: JobManager | None) -> None:
    time.sleep(delay)
    if after is not None:
        after()
    started = time.perf_counter()
    try:
        with jobs.background() if jobs is not None else contextlib.nullcontext():
            yield_point()
            _compile_in_child(None if jobs is None else jobs.requested)
            yield_point()
            with import_lock:  # a job's thread may be importing them too
                import projector_core.kernels.tsne  # noqa: F401  (openTSNE, scikit-learn)
            yield_point()
            with import_lock:
                umap_module()
            yield_point()
            _tiny_umap()
    except Exception:  # the first projection then pays for it; nothing else is affected
        log.exception("warming up the compute libraries failed")
    finally:
        ready.set()
    log.info("compute libraries ready in %.1f s", time.perf_counter() - started)


CHILD_PRIORITY = 10  # os.nice increment: the server's own work (a job asked now) comes first
CHILD_TIMEOUT = 600.0  # seconds the child may compute (time it spends stopped not counted)


def _compile_in_child(requested: RequestedWork | None) -> None:
    """Run :func:`_tiny_umap` in a child process that fills numba's disk cache (the cache
    directory is in the environment it inherits, ``use_numba_cache``). The child is stopped
    (SIGSTOP) while ``requested`` work runs and continued after: niced, it would still take
    a share of a core from the request. It dies with this thread (``_die_with_parent``)."""
    with tempfile.TemporaryFile("w+") as errors:
        child = subprocess.Popen([sys.executable, "-m", "projector_core.projection.warmup"],
                                 stdout=subprocess.DEVNULL, stderr=errors)
        computing, stopped = 0.0, False
        while child.poll() is None and computing < CHILD_TIMEOUT:
            busy = requested is not None and requested.busy()
            if busy != stopped:
                with contextlib.suppress(ProcessLookupError):  # it may have just ended
                    child.send_signal(signal.SIGSTOP if busy else signal.SIGCONT)
                stopped = busy
            if requested is not None and busy:
                requested.hold(POLL_CHILD)
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(POLL_CHILD)
                computing += POLL_CHILD
        if child.poll() is None:
            child.kill()
        if child.wait() != 0:  # this process then compiles for itself
            errors.seek(0)
            log.warning("compiling the projection kernels in a child process failed: %s",
                        errors.read().strip().splitlines()[-1:] or child.returncode)


def _die_with_parent() -> None:
    """Linux: the child is killed when the thread that started it ends (the server stopped),
    even while it is stopped; elsewhere it ends on its own, as before."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _tiny_umap() -> None:
    """Compile what a UMAP job runs: numba compiles per argument type, not size, so a few
    points compile the real job's code (both neighbour paths give it the same types)."""
    from projector_core.kernels.umap import umap

    data = np.random.default_rng(0).normal(size=(64, 8)).astype(np.float32)
    umap(data, n_neighbors=5, n_epochs=2)


if __name__ == "__main__":  # the child of _compile_in_child
    _die_with_parent()
    os.nice(CHILD_PRIORITY)
    _tiny_umap()
