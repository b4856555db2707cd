"""What changed between two listings of the catalog, told as events on the one stream.

Three kinds, each ``added``, ``changed`` or ``removed``, each carrying the state after:

- ``run``: ``{run, error, warnings, embeddings}`` (the names, in the listing's order);
- ``embedding``: ``{run, embedding, status, shape, error}``;
- ``step``, for embeddings named ``TAG:STEP`` (a training run's steps, ``steps.py``):
  ``{run, tag, step, embedding, rows, dims, state, error, written}``: what a page following
  the run needs; ``state`` is ``loading``, ``ready`` or ``error``, ``written`` when its files
  were last written (seconds since the epoch).

An embedding is ``changed`` only when what these say of it changed (a reload of the same
files tells nothing new), and while its tensor loads, as its ``progress`` moves.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from projector_core.data.loading import Loading
from projector_core.data.model import Embedding, Run
from projector_core.data.steps import split_name
from projector_core.events import ADDED, CHANGED, REMOVED, EventHub

Written = Callable[[str, str], float | None]  # (run, embedding) -> when its files were written


def publish_changes(hub: EventHub, old: Mapping[str, Run], new: Mapping[str, Run],
                    written: Written) -> None:
    """Publish what differs from ``old`` to ``new`` on ``hub``: runs added first, removed last."""
    for name, run in new.items():
        before = old.get(name)
        if before is None:
            _publish(hub, "run", ADDED, _run_data(run))
        elif before is not run and _run_data(before) != _run_data(run):
            _publish(hub, "run", CHANGED, _run_data(run))
        kept = {e.name: e for e in before.embeddings} if before is not None else {}
        for embedding in run.embeddings:
            was = kept.pop(embedding.name, None)
            if was is embedding:
                continue
            action = ADDED if was is None else CHANGED
            data = _embedding_data(embedding)
            if was is None or _embedding_data(was) != data:
                _publish(hub, "embedding", action, data)
            step = _step_data(embedding, written)
            if step is not None and (was is None or _step_data(was, written) != step):
                _publish(hub, "step", action, step)
        for embedding in kept.values():
            _removed(hub, embedding, written)
    for name, run in old.items():
        if name not in new:
            for embedding in run.embeddings:
                _removed(hub, embedding, written)
            _publish(hub, "run", REMOVED, {"run": name})


def publish_progress(hub: EventHub, run: str, name: str, loading: Loading) -> None:
    """An embedding whose tensor is loading got further: its ``progress`` (0..1), so that a
    page waiting for it shows how far without asking."""
    _publish(hub, "embedding", CHANGED, {
        "run": run, "embedding": name, "status": "loading",
        "shape": list(loading.shape) if loading.shape else None, "error": None,
        "progress": loading.fraction})


def _removed(hub: EventHub, embedding: Embedding, written: Written) -> None:
    _publish(hub, "embedding", REMOVED, {"run": embedding.run, "embedding": embedding.name})
    step = _step_data(embedding, written)
    if step is not None:
        _publish(hub, "step", REMOVED, {k: step[k] for k in ("run", "tag", "step", "embedding")})


def _publish(hub: EventHub, kind: str, action: str, data: dict[str, Any]) -> None:
    thing = [data["run"], data["embedding"]] if "embedding" in data else [data["run"]]
    hub.publish(kind, action, data, key=json.dumps([kind, *thing]))


def _run_data(run: Run) -> dict[str, Any]:
    return {"run": run.name, "error": run.error, "warnings": list(run.warnings),
            "embeddings": [e.name for e in run.embeddings]}


def _embedding_data(embedding: Embedding) -> dict[str, Any]:
    shape = embedding.shape
    return {"run": embedding.run, "embedding": embedding.name, "status": embedding.status,
            "shape": list(shape) if shape else None, "error": embedding.error}


def _step_data(embedding: Embedding, written: Written) -> dict[str, Any] | None:
    tag, step = split_name(embedding.name)
    if step is None:
        return None
    shape = embedding.shape
    return {"run": embedding.run, "tag": tag, "step": step, "embedding": embedding.name,
            "rows": shape[0] if shape else None, "dims": shape[1] if shape else None,
            "state": embedding.status, "error": embedding.error,
            "written": written(embedding.run, embedding.name)}
