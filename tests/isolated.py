"""A virtual environment of a test's own, for tests that pip-install a plugin package.

It sees everything kplane's ``.venv`` has (a ``.pth`` file adds that site-packages, with its own
``.pth`` files, so kplane's editable install too), but what a test installs into it lands in its
own site-packages. Other processes sharing ``.venv``, such as a second test run at the same time,
never see a half-installed plugin: an entry point whose module they cannot import would fail
every server they start.

Its ``bin`` has ``python``, and ``kplane``, ``pytest`` and ``pip`` scripts running with it, so
a command line typed as a user types it runs there once ``env()`` puts ``bin`` first on PATH.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

COMMANDS = ("kplane", "pytest", "pip")


@dataclass(frozen=True, slots=True)
class Venv:
    root: Path

    @classmethod
    def create(cls, root: Path) -> Venv:
        venv.EnvBuilder(with_pip=False, symlinks=True).create(root)
        made = cls(root)
        parent = sysconfig.get_paths()["purelib"]  # the site-packages of the python running the tests
        (made.site_packages / "_kplane_parent.pth").write_text(f"import site; site.addsitedir({parent!r})\n")
        for name in COMMANDS:  # console scripts as pip writes them (sys.path[0] is bin/, not the folder)
            [entry] = importlib.metadata.entry_points(group="console_scripts", name=name)
            script = made.bin / name
            script.write_text(f"#!{made.python}\nimport sys\nfrom {entry.module} import {entry.attr}\n"
                              f"sys.exit({entry.attr}())\n")
            script.chmod(0o755)
        return made

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    @property
    def site_packages(self) -> Path:
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        return self.root / "lib" / version / "site-packages"

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.root)
        return env

    def pip(self, *args: str) -> None:
        """``pip`` in this environment; ``install`` never downloads (no build isolation, no deps)."""
        extra = ["--no-build-isolation", "--no-deps"] if args[:1] == ("install",) else []
        subprocess.run([str(self.python), "-m", "pip", "--disable-pip-version-check", "-q", *args[:1], *extra, *args[1:]],
                       check=True)

    def run(self, *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
        """``python ARGS`` in this environment, output captured as text; not checked."""
        return subprocess.run([str(self.python), *args], capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload, no-any-return]
