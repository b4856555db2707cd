"""Training steps: the embeddings of one tag written at several ``global_step`` values.

PyTorch's and tensorboardX's ``add_embedding`` (and our writer) name each tensor
``TAG:STEP`` with the step zero-padded to five digits (``default:00000``, ``enc:00010``) and
store it under ``STEP/TAG/``. A run's embeddings are grouped by that name into one timeline
per tag, steps ascending; a name without the suffix is a tag of one step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from projector_core.data.model import Embedding, Run
from projector_core.formats.config import ProjectorConfig

_STEP_NAME = re.compile(r"^(?P<tag>.*):(?P<step>\d+)$")
_STEP_FOLDER = re.compile(r"^\d{5,}$")


@dataclass(frozen=True)
class Step:
    step: int
    embedding: str
    rows: int | None  # None when the tensor could not be read


@dataclass(frozen=True)
class Timeline:
    run: str
    tag: str
    steps: tuple[Step, ...]


def split_name(name: str) -> tuple[str, int | None]:
    """``("enc", 10)`` for ``"enc:00010"``; ``(name, None)`` for a name without a step."""
    match = _STEP_NAME.match(name)
    if match is None:
        return name, None
    return match["tag"], int(match["step"])


def timelines(run: Run) -> list[Timeline]:
    """The run's tags in first-seen order, each with its steps ascending."""
    tags: dict[str, list[tuple[int, Embedding]]] = {}
    for embedding in run.embeddings:
        tag, step = split_name(embedding.name)
        tags.setdefault(tag if step is not None else embedding.name, []).append(
            (step if step is not None else 0, embedding))
    return [
        Timeline(run.name, tag, tuple(
            Step(step, e.name, e.shape[0] if e.shape else None)
            for step, e in sorted(found, key=lambda pair: pair[0])))
        for tag, found in tags.items()
    ]


def step_and_before(found: list[Timeline], tag: str | None = None,
                    step: int | None = None) -> tuple[Timeline, Step, Step]:
    """A step of a run and the step before it, what "how did it change" compares: ``step`` (by
    default the newest) of ``tag`` (by default the first tag with two readable steps of the
    same points). ValueError saying what the run has when there is no such pair."""
    tags = [t for t in found if tag is None or t.tag == tag]
    if not tags:
        raise ValueError(f"no tag {tag!r}: the tags are {', '.join(t.tag for t in found)}"
                         if found else "the run has no embeddings")
    for timeline in tags:
        readable = [s for s in timeline.steps if s.rows is not None]
        later = [i for i, s in enumerate(readable) if i > 0 and (step is None or s.step == step)
                 and s.rows == readable[i - 1].rows]
        if later:
            return timeline, readable[later[-1] - 1], readable[later[-1]]
    have = "; ".join(f"{t.tag}: {', '.join(str(s.step) for s in t.steps)}" for t in tags)
    wanted = f"step {step} after another of the same points" if step is not None else \
        "two steps of the same points"
    raise ValueError(f"no {wanted} to compare (the steps: {have})")


def unlisted_steps_warning(config: ProjectorConfig, shown: str) -> str | None:
    """What to say of the writers' ``STEP/TAG/`` folders beside ``config`` (``shown`` as the
    user sees its path) that it does not list, or None.

    PyTorch's SummaryWriter holds the config in memory: a second writer on the same run (a
    resumed training) rewrites it with its own steps only, and the earlier ones stay on disk
    unseen, by TensorBoard too; the user is told where they went. A step written after the
    config is not counted: its writer lists it next (it is being written while we look)."""
    listed = {(config.folder / info.tensor_path).resolve()
              for info in config.embeddings if info.tensor_path}
    try:
        written = config.path.stat().st_mtime_ns
        steps = sorted(p for p in config.folder.iterdir()
                       if p.is_dir() and _STEP_FOLDER.match(p.name))
        unlisted = [f"{step.name}/{tag.name}" for step in steps
                    for tag in sorted(p for p in step.iterdir() if p.is_dir())
                    if (tensor := tag / "tensors.tsv").is_file()
                    and tensor.resolve() not in listed and tensor.stat().st_mtime_ns <= written]
    except OSError:  # a folder that went away while it was read: nothing to say about it
        return None
    if not unlisted:
        return None
    more = f" and {len(unlisted) - 5} more" if len(unlisted) > 5 else ""
    return (f"{shown} does not list the tensors in {', '.join(unlisted[:5])}{more}: a "
            "SummaryWriter opened again on this run rewrote the config with its own steps only "
            "(TensorBoard does not show them either); write every step with one writer")
