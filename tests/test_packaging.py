"""kplane installs one top-level package, ``kplane``: its wheel holds nothing else (no ``core`` or
``plugins`` to clash with another distribution's), and it imports from anywhere."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["pyproject.toml", "setup.py", "README.md", "kplane", "core", "plugins"]


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kplane's wheel, built from a copy of the sources (so that no build/ lands in the checkout)."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(ROOT / name, source / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(out), str(source)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    [found] = out.glob("kplane-*.whl")
    return found


def test_the_wheel_holds_only_kplane(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    tops = {name.split("/")[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"kplane"}
    assert "kplane/api.py" in names and "kplane/core/hookspecs.py" in names
    assert "kplane/plugins/core/__init__.py" in names


def test_the_wheel_imports_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:  # a pure-Python wheel installs by unpacking
        archive.extractall(site)
    code = (f"import sys; sys.path.insert(0, {str(site)!r}); import kplane, kplane.api; "
            f"assert kplane.api.__file__.startswith({str(site)!r}), kplane.api.__file__")
    imported = run_python(code, tmp_path)
    assert imported.returncode == 0, imported.stderr


def test_the_installed_kplane_imports_outside_the_checkout(tmp_path: Path) -> None:
    code = ("import importlib.util, kplane, kplane.api; "
            "assert importlib.util.find_spec('core') is None and importlib.util.find_spec('plugins') is None")
    imported = run_python(code, tmp_path)
    assert imported.returncode == 0, imported.stderr
