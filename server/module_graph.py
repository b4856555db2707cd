"""The front end's ES-module graph, for `<link rel="modulepreload">` in the page.

Without a build step a browser finds each module's imports only once it has that module, so a
graph 8 deep costs 8 round trips before the first API request (1.2 s at the start of a first
visit on a loaded machine). The page lists every module the entry imports, directly or not, so
the browser fetches them side by side. Read from the files' static imports (and literal
dynamic ones) when the page is first served; no list to keep by hand.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

# `import x from './a.js'`, `export { y } from '../b.js'`, `import './c.js'`, `import('./d.js')`.
_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}/[^'"]+\.js)['"]""")
_COMMENT = re.compile(r"/\*.*?\*/|^\s*//.*?$", re.S | re.M)


def imports_of(source: str) -> list[str]:
    """Relative module specifiers a module's source imports (comments skipped)."""
    return _IMPORT.findall(_COMMENT.sub("", source))


@functools.cache
def module_graph(root: Path, entry: str) -> tuple[str, ...]:
    """Every module reachable from ``entry`` (a path under ``root``), as paths relative to
    ``root`` in breadth-first order, the entry first."""
    seen = [entry]
    queue = [entry]
    while queue:
        current = queue.pop(0)
        path = root / current
        if not path.is_file():
            continue
        for spec in imports_of(path.read_text(encoding="utf-8")):
            target = (path.parent / spec).resolve()
            if not target.is_relative_to(root.resolve()):
                continue
            relative = target.relative_to(root.resolve()).as_posix()
            if relative not in seen:
                seen.append(relative)
                queue.append(relative)
    return tuple(seen)
