"""Where the annotation store lives: never in a LOGDIR (which stays read-only to us).

One store serves every LOGDIR (its rows are keyed by the LOGDIR's resolved path), so labels
made on a LOGDIR are found again whichever server, notebook or script opens it next. The
``--annotations`` option (or ``$PROJECTOR_ANNOTATIONS``) names another file, or ``off`` for a
server that writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

OFF = "off"
ENVIRONMENT = "PROJECTOR_ANNOTATIONS"
FILE_NAME = "annotations.sqlite"


def default_store_path() -> Path:
    """The store under the user's data directory (kept, unlike the cache directory)."""
    return Path(platformdirs.user_data_dir("projector")) / FILE_NAME


def store_path(option: str | Path | None = None) -> Path | None:
    """The store file ``option`` names (else ``$PROJECTOR_ANNOTATIONS``, else the default);
    None for ``off``."""
    chosen = option if option is not None else os.environ.get(ENVIRONMENT) or None
    if chosen is None:
        return default_store_path()
    if str(chosen).strip().lower() == OFF:
        return None
    return Path(chosen).expanduser().resolve()
