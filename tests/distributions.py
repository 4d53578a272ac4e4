"""Distributions a test writes to pip-install: the plugins and storage backends of other projects.

A test gives the entry points and the source files; :func:`pyproject` writes the setuptools
``pyproject.toml`` every such distribution has, :func:`write` puts the tree on disk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def pyproject(
    name: str,
    version: str,
    entry_points: Mapping[str, Mapping[str, str]],
    *,
    packages: Sequence[str] = (),
    py_modules: Sequence[str] = (),
    dependencies: Sequence[str] = (),
) -> str:
    """The ``pyproject.toml`` of distribution ``name``: ``entry_points`` maps a group (``kplane.plugins``)
    to its entry points (name -> ``module[:attribute]``); ``packages`` and ``py_modules`` are its code."""
    lines = ["[build-system]", 'requires = ["setuptools>=68"]', 'build-backend = "setuptools.build_meta"', "",
             "[project]", f'name = "{name}"', f'version = "{version}"']
    if dependencies:
        lines.append(f"dependencies = {_toml_list(dependencies)}")
    for group, points in entry_points.items():
        lines += ["", f'[project.entry-points."{group}"]', *(f'{point} = "{target}"' for point, target in points.items())]
    lines += ["", "[tool.setuptools]"]
    if packages:
        lines.append(f"packages = {_toml_list(packages)}")
    if py_modules:
        lines.append(f"py-modules = {_toml_list(py_modules)}")
    return "\n".join(lines) + "\n"


def _toml_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def write(root: Path, files: Mapping[str, str]) -> Path:
    """Write ``files`` (path under ``root`` -> text) and return ``root``, the folder to install."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root
