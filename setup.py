"""Maps the repository's folders to import names under ``kplane`` (``core/`` is ``kplane.core``,
``plugins/`` is ``kplane.plugins``), so that kplane installs no top-level ``core`` or ``plugins``
package to clash with another distribution's. Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

FOLDERS = {"kplane.core": "core", "kplane.plugins": "plugins"}

packages = ["kplane"]
for name, folder in FOLDERS.items():
    packages += [f"{name}{found[len(folder):]}" for found in find_packages(include=[folder, f"{folder}.*"])]

setup(packages=packages, package_dir={"kplane": "kplane", **FOLDERS})
