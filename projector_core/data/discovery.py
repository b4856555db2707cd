"""Which folders under LOGDIR are runs, as TensorBoard decides: every folder holding a
``projector_config.pbtxt`` (or the standalone ``projector_config.json``) at any depth is a run
named by its path relative to LOGDIR (``.`` for LOGDIR itself); a config inside
``RUN/plugins/org_tensorflow_tensorboard_projector/`` belongs to RUN; a folder holding only a
TensorFlow checkpoint is a run too."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from projector_core.formats.config import CONFIG_NAMES, PLUGIN_DIR

CHECKPOINT_STATE = "checkpoint"  # TensorFlow's text file naming the latest checkpoint


@dataclass(frozen=True)
class ConfigFile:
    run: str
    path: Path


def run_name(logdir: Path, folder: Path) -> str:
    relative = folder.relative_to(logdir).parts
    if relative[-len(PLUGIN_DIR):] == PLUGIN_DIR:
        relative = relative[: -len(PLUGIN_DIR)]
    return "/".join(relative) or "."


def find_configs(logdir: Path) -> Iterator[ConfigFile]:
    """Every config under ``logdir``, in a stable order; symlinked folders are not followed."""
    for folder, dirs, files in os.walk(logdir):
        dirs.sort()
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        configs = [name for name in CONFIG_NAMES if name in files]
        if not configs and CHECKPOINT_STATE in files:
            configs = [CHECKPOINT_STATE]  # a TF checkpoint alone is a run, as in TensorBoard
        for name in configs:
            yield ConfigFile(run_name(logdir, Path(folder)), Path(folder) / name)
