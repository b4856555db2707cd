"""Maps the repository's folders onto installed import names; pyproject.toml holds the rest.

The web layer (``server/``), the page (``frontend/``) and the samples (``sample_data/``) keep
their top-level folders in the repository but install under the one ``projector`` namespace,
so a user's own ``server.py`` or ``frontend.py`` can never shadow ours. Packages are found,
not listed: a new module is in the wheel without anyone remembering to add it. Folders that
hold only data (the page's scripts and styles, templates, samples) are found as namespace
packages, which is how setuptools wants data folders declared.
"""

from setuptools import find_namespace_packages, find_packages, setup

NAMESPACED = {"projector.server": "server", "projector.frontend": "frontend",
              "projector.sample_data": "sample_data"}
NOT_SHIPPED = ["tests", "tests.*", "*__pycache__*"]
DATA_FILES = {"projector.frontend": ["*.html", "*.css", "*.svg", "*.js"],
              "projector.server": ["*.html"], "projector.sample_data": ["*"]}

packages = find_packages(include=["projector", "projector.client", "projector_core", "projector_core.*"])
package_data = {"projector": ["*.js", "py.typed"], "projector_core": ["py.typed"]}
for name, folder in NAMESPACED.items():
    found = [name, *(f"{name}.{sub}" for sub in find_namespace_packages(folder, exclude=NOT_SHIPPED))]
    packages += found
    package_data.update({package: DATA_FILES[name] for package in found})

setup(packages=packages, package_dir=NAMESPACED, package_data=package_data)
