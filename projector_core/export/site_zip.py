"""A written site as one zip (what ``GET /api/export/site`` answers): files already compressed
(gzipped data, PNG sprite pages) are stored as they are, the rest deflated."""

from __future__ import annotations

import zipfile
from pathlib import Path

ALREADY_COMPRESSED = (".gz", ".png")


def zip_site(folder: Path, target: Path) -> None:
    """Every file under ``folder`` into the zip ``target``, named relative to ``folder``."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                stored = path.suffix in ALREADY_COMPRESSED
                archive.write(path, path.relative_to(folder).as_posix(),
                              zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED)
