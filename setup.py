"""Maps the repository's folders onto installed import names; pyproject.toml holds the rest.

The web layer (``server/``), the page (``frontend/``) and the samples (``sample_data/``) keep
their top-level folders in the repository but install under the one ``projector`` namespace,
so a user's own ``server.py`` or ``frontend.py`` can never shadow ours. Packages are found,
not listed: a new module is in the wheel without anyone remembering to add it.
"""

from setuptools import find_packages, setup

NAMESPACED = {"projector.server": "server", "projector.frontend": "frontend",
              "projector.sample_data": "sample_data"}

packages = find_packages(include=["projector", "projector_core", "projector_core.*"])
for name, folder in NAMESPACED.items():
    packages += [name, *(f"{name}.{sub}" for sub in find_packages(folder))]

setup(
    packages=packages,
    package_dir=NAMESPACED,
    package_data={
        "projector": ["*.js", "py.typed"],
        "projector_core": ["py.typed"],
        "projector.server": ["templates/*"],
        "projector.frontend": ["*.html", "css/*", "img/*", "js/**/*.js"],
        "projector.sample_data": ["README.md", "*/*", "*/*/*/*"],
    },
)
