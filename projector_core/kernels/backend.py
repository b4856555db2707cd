"""The one place that chooses the array namespace the kernels run on.

Kernels are written once against the Python array API standard (``xp.matmul``,
``xp.linalg.eigh``, ``xp.where``...). ``array-api-compat`` supplies that namespace for
numpy, torch and cupy alike; the :class:`Backend` adds the three things the standard
lacks: moving host arrays to the device in bounded chunks, bringing results back to
numpy, and a partial top-k.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

Array = Any
"""A numpy, torch or cupy array, depending on the backend."""

# Host -> device copies move this many bytes at a time, so a read-only memmap of
# several GB never needs a second full copy in host memory.
_TRANSFER_BYTES = 256 * 2**20
# Rows up to this long are selected by numpy's introselect on a CPU, beyond by torch.topk
# (a top-20 of 750 columns: 1.2 ms against 2.0 ms per 256 rows; of 131,072: torch 3x faster).
_TOPK_COLUMNS = 2048


class DeviceUnavailableError(ValueError):
    """The requested compute device is unknown or not usable on this machine."""


@dataclass(frozen=True)
class Backend:
    """An array namespace bound to a device."""

    name: str  # "numpy", "torch" or "cupy"
    device: str  # "cpu", "cuda", "cuda:1", ...
    xp: ModuleType  # array-API namespace (array_api_compat wrapper)

    @property
    def is_numpy(self) -> bool:
        return self.name == "numpy"

    def asarray(self, host: np.ndarray, dtype: Any = None) -> Array:
        """A device array holding ``host`` (no copy for numpy when the dtype already fits)."""
        host_dtype = np.dtype(dtype) if dtype is not None else host.dtype
        if self.is_numpy:
            return np.asarray(host, dtype=host_dtype)
        if self.name == "cupy":
            import cupy

            with cupy.cuda.Device(_device_ordinal(self.device)):
                return cupy.asarray(np.ascontiguousarray(host, dtype=host_dtype))
        import torch

        out = torch.empty(host.shape, dtype=_torch_dtype(host_dtype), device=self.device)
        if host.ndim == 0 or host.shape[0] == 0:
            out.copy_(torch.from_numpy(np.array(host, dtype=host_dtype)))
            return out
        row_bytes = max(1, host[:1].nbytes)
        step = max(1, _TRANSFER_BYTES // row_bytes)
        for start in range(0, host.shape[0], step):
            # np.array copies, so read-only memmaps become writable host buffers torch accepts.
            chunk = np.array(host[start : start + step], dtype=host_dtype)
            out[start : start + step].copy_(torch.from_numpy(chunk))
        return out

    def shared(self, host: np.ndarray) -> Array:
        """``host`` itself where the device is the host (numpy; torch on the CPU shares the
        buffer, read-only by contract), else a device copy: for data read, never written."""
        if self.is_numpy:
            return host
        if self.name == "torch" and self.device == "cpu" and host.flags.c_contiguous:
            import torch

            with warnings.catch_warnings():  # a read-only map: torch warns, we never write
                warnings.simplefilter("ignore", UserWarning)
                return torch.from_numpy(host)
        return self.asarray(host)

    @contextlib.contextmanager
    def worker_pool(self, workers: int, name: str) -> Iterator[ThreadPoolExecutor]:
        """Threads for independent blocks of work. With torch on the CPU each thread runs its
        operations on one core: on small blocks that beats all cores on every operation
        (~30 % on the cell scan, 2 cores), which pays a fork-join per operation."""
        if self.name != "torch" or self.device != "cpu":
            with ThreadPoolExecutor(workers, thread_name_prefix=name) as pool:
                yield pool
            return
        import torch

        before = torch.get_num_threads()  # the setting is per thread, its report global
        try:
            with ThreadPoolExecutor(workers, thread_name_prefix=name,
                                    initializer=torch.set_num_threads, initargs=(1,)) as pool:
                yield pool
        finally:
            torch.set_num_threads(before)

    def to_numpy(self, array: Array) -> np.ndarray:
        """Bring a device array back to host memory."""
        if self.is_numpy:
            return np.asarray(array)
        if self.name == "cupy":
            return np.asarray(array.get())
        return np.asarray(array.detach().cpu().numpy())

    def smallest_columns(self, scores: Array) -> np.ndarray:
        """Host int64 [R]: the column of each row's smallest value (on a CPU by numpy, whose
        vectorised argmin is ~6x torch's on a 536 x 977 block)."""
        if self.is_numpy or self.device == "cpu":
            host = scores if self.is_numpy else scores.numpy()  # torch on the CPU: shared
            return np.asarray(np.argmin(host, axis=1).astype(np.int64, copy=False))
        return self.to_numpy(self.xp.argmin(scores, axis=1)).astype(np.int64, copy=False)

    def smallest_k(self, scores: Array, k: int) -> tuple[Array, Array]:
        """The ``k`` smallest values of each row of a 2-D array and their columns, unordered."""
        n = scores.shape[1]
        if k >= n:
            columns = self.xp.broadcast_to(self.xp.arange(n, device=scores.device)[None, :], scores.shape)
            return scores, columns
        if self.name == "torch" and (self.device != "cpu" or n > _TOPK_COLUMNS):
            values, columns = scores.topk(k, dim=1, largest=False, sorted=False)
            return values, columns
        if self.name == "torch":  # numpy shares the buffer and selects short rows ~2x faster
            import torch

            values, columns = get_backend("cpu").smallest_k(scores.numpy(), k)
            return torch.from_numpy(values), torch.from_numpy(columns)
        module = np if self.is_numpy else _cupy()
        columns = module.argpartition(scores, k - 1, axis=1)[:, :k]
        return module.take_along_axis(scores, columns, axis=1), columns


def _cupy() -> ModuleType:
    import cupy

    module: ModuleType = cupy
    return module


def _torch_dtype(dtype: np.dtype) -> Any:
    import torch

    return {
        np.dtype(np.float32): torch.float32,
        np.dtype(np.float64): torch.float64,
        np.dtype(np.float16): torch.float16,
        np.dtype(np.int64): torch.int64,
        np.dtype(np.int32): torch.int32,
        np.dtype(np.bool_): torch.bool,
    }[np.dtype(dtype)]


def _device_ordinal(device: str) -> int:
    _, _, ordinal = device.partition(":")
    return int(ordinal) if ordinal else 0


@functools.cache
def get_backend(device: str = "cpu") -> Backend:
    """The backend for a device name.

    ``"cpu"`` (or ``"numpy"``) is numpy; ``"torch"`` is torch on the CPU (the same
    code path a GPU takes, testable anywhere); ``"cuda"`` / ``"cuda:N"`` is cupy when
    installed, else torch on that GPU. Anything else, or a GPU that is not there,
    raises :class:`DeviceUnavailableError` naming what is missing.
    """
    name = device.strip().lower()
    if name in ("cpu", "numpy"):
        import array_api_compat.numpy as xp

        return Backend("numpy", "cpu", xp)
    if name in ("torch", "torch:cpu"):
        return _torch_backend("cpu")
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        try:
            return _cupy_backend(name)
        except ImportError:
            pass
        return _torch_backend(name)
    raise DeviceUnavailableError(f"unknown device {device!r}: use cpu, torch or cuda[:N]")


def _cupy_backend(device: str) -> Backend:
    import array_api_compat.cupy as xp
    import cupy

    ordinal = _device_ordinal(device)
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as error:
        raise DeviceUnavailableError(f"device {device!r} is not available: {error}") from error
    if ordinal >= count:
        raise DeviceUnavailableError(f"device {device!r} is not available: cupy sees {count} CUDA device(s)")
    return Backend("cupy", f"cuda:{ordinal}", xp)


def _torch_backend(device: str) -> Backend:
    try:
        import array_api_compat.torch as xp
        import torch
    except ImportError as error:
        raise DeviceUnavailableError(
            f"device {device!r} needs torch (or cupy for cuda), which is not installed"
        ) from error
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise DeviceUnavailableError(
                f"device {device!r} is not available: torch {torch.__version__} sees no CUDA GPU"
            )
        ordinal = _device_ordinal(device)
        if ordinal >= torch.cuda.device_count():
            raise DeviceUnavailableError(
                f"device {device!r} is not available: torch sees {torch.cuda.device_count()} CUDA device(s)"
            )
        device = f"cuda:{ordinal}"
    return Backend("torch", device, xp)
