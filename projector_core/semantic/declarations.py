"""``projector serve --model``: which model made which embedding, said on the command line.

``--model MODEL`` when the LOGDIR holds one embedding, or the steps of one tag
(``TAG:STEP`` names, ``data/steps.py``); ``--model RUN/EMBEDDING=MODEL``, repeatable, names
one embedding (or a tag: all its steps) when it holds several. A bare ``--model`` over
several is refused with their names, as is a name the LOGDIR does not hold. RUN is ``.`` for
the LOGDIR itself; run and embedding names may hold ``/`` and ``=``: the split is the one that
names a known embedding.
"""

from __future__ import annotations

from pathlib import Path

from projector_core.data.steps import split_name
from projector_core.kernels.text_encoder import resolve_model

Key = tuple[str, str]  # (run, embedding name or tag)


def declared_models(flags: list[str], names: list[Key]) -> dict[Key, str]:
    """(run, embedding or tag) -> model for each flag, over the LOGDIR's (run, embedding)
    ``names``; ValueError saying which flag and what the LOGDIR holds."""
    targets = _targets(names)
    declared: dict[Key, str] = {}
    for flag in flags:
        named = _named(flag, targets)
        if named is not None:
            key, model = named
        elif len(targets) == 1:
            key, model = next(iter(targets)), flag
        else:
            raise ValueError(_refusal(flag, targets))
        if not model.strip():
            raise ValueError(f"--model {flag}: names no model")
        declared[key] = model
    return declared


def found_models(flags: list[str], names: list[Key]) -> dict[Key, str]:
    """:func:`declared_models`, each model found now (a folder or an installed package):
    a door starting with a model it cannot load says so at once, in the same sentence."""
    declared = declared_models(flags, names)
    for model in set(declared.values()):
        resolve_model(model)
    return declared


def _targets(names: list[Key]) -> dict[Key, list[str]]:
    """What a bare --model may mean: each (run, tag) with its embeddings."""
    targets: dict[Key, list[str]] = {}
    for run, name in names:
        tag, step = split_name(name)
        targets.setdefault((run, tag if step is not None else name), []).append(name)
    return targets


def _named(flag: str, targets: dict[Key, list[str]]) -> tuple[Key, str] | None:
    """(key, model) when ``flag`` is RUN/EMBEDDING=MODEL over a known embedding or tag."""
    known = {f"{run}/{name}": (run, name) for (run, tag), members in targets.items()
             for name in (tag, *members)}
    cut = flag.find("=")
    while cut > 0:
        if flag[:cut] in known:
            run, name = known[flag[:cut]]
            return (run, name), flag[cut + 1:]
        cut = flag.find("=", cut + 1)
    if "=" in flag and "/" in flag.partition("=")[0] and not Path(flag).expanduser().is_dir():
        raise ValueError(_refusal(flag, targets, unknown=True))
    return None


def _refusal(flag: str, targets: dict[Key, list[str]], unknown: bool = False) -> str:
    shown = ", ".join(f"{run}/{name}" for run, name in targets)
    if not targets:
        return f"--model {flag}: the LOGDIR holds no embedding yet to declare it for"
    if unknown:
        return (f"--model {flag}: the LOGDIR holds no such embedding; it holds {shown} "
                "(RUN/EMBEDDING=MODEL, RUN '.' for the LOGDIR itself)")
    return (f"--model {flag}: the LOGDIR holds {len(targets)} embeddings, so say which: "
            f"--model RUN/EMBEDDING=MODEL for each of {shown}")
