"""griffe extension (mkdocs.yml): the docstrings' Sphinx roles as code in the API reference.

The code's docstrings name each other as ``:meth:`runs```, which Markdown would show as the
role's raw text; the reference shows the name as code instead.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:meth|func|attr|class|mod|data|exc):`~?\.?([^`]+)`")


class SphinxRoles(griffe.Extension):
    """Rewrite ``:role:`name``` to a code span in every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **_: Any) -> None:
        """One object's docstring, as it is loaded."""
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"`\1`", obj.docstring.value)
