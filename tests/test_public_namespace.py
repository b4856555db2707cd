"""``projector`` is the one namespace users import from: every name it exports imports, says
what it is (its docstring is its API reference page), and ``import projector`` stays light."""

from __future__ import annotations

import inspect
import subprocess
import sys
from importlib.metadata import version

import pytest

import projector


@pytest.mark.parametrize("name", sorted(set(projector.__all__) - {"__version__"}))
def test_every_exported_name_imports_and_has_a_docstring(name: str):
    exported = getattr(projector, name)
    assert inspect.getdoc(exported), f"projector.{name} has no docstring"
    assert name in dir(projector)


def test_the_version_is_the_installed_distributions():
    assert projector.__version__ == version("embedding-projector")
    assert projector.__version__ == projector.SOURCE_VERSION  # the one place pyproject reads


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="ProjectorClient"):
        projector.ProjectorClient  # noqa: B018  (the README once named it)


def test_importing_projector_loads_no_web_server_and_no_numpy():
    """The ``projector`` command imports this package before its parser: a name is imported
    when first used, so ``projector --help`` waits for no web framework."""
    script = ("import sys, projector; heavy = {'numpy', 'fastapi', 'uvicorn', 'projector_core'} "
              "& set(sys.modules); assert not heavy, heavy")
    subprocess.run([sys.executable, "-c", script], check=True)
