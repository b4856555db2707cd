"""The embedding pairs worth comparing that a log directory already holds.

Two kinds are offered (any other pair with the same rows can still be asked for):
consecutive steps of one tag in a run (what training changed), and the same tensor name in
two runs (two models or two seeds over the same points). Only pairs with the same number of
rows are offered, since a comparison pairs rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from projector_core.data.model import Run
from projector_core.data.steps import timelines


@dataclass(frozen=True)
class Side:
    run: str
    embedding: str


@dataclass(frozen=True)
class Pair:
    kind: str  # "steps" or "runs"
    a: Side
    b: Side
    rows: int


def step_pairs(runs: list[Run]) -> list[Pair]:
    """Each tag's consecutive steps with equal row counts."""
    pairs = []
    for run in runs:
        for timeline in timelines(run):
            for first, second in pairwise(timeline.steps):
                if first.rows is not None and first.rows == second.rows:
                    pairs.append(Pair("steps", Side(run.name, first.embedding),
                                      Side(run.name, second.embedding), first.rows))
    return pairs


def run_pairs(runs: list[Run]) -> list[Pair]:
    """The same tensor name in two runs: each run paired with the next one whose tensor of
    that name has as many rows."""
    seen: dict[tuple[str, int], list[str]] = {}
    for run in runs:
        for embedding in run.embeddings:
            if embedding.shape is not None:
                seen.setdefault((embedding.name, embedding.shape[0]), []).append(run.name)
    return [Pair("runs", Side(run_a, name), Side(run_b, name), rows)
            for (name, rows), holders in seen.items() for run_a, run_b in pairwise(holders)]


def comparable_pairs(runs: list[Run]) -> list[Pair]:
    return step_pairs(runs) + run_pairs(runs)
