"""``python -m tests.lint_imports``: the import contracts of ``.importlinter``, over this checkout.

lint-imports finds a package's modules by walking the folder its import name resolves to, and
kplane's folders are not nested like its import names (``kplane.core`` is ``core/``: setup.py's
``FOLDERS``). So it is run on a tree of links laid out as kplane installs, ``kplane/`` with
``core/`` and ``plugins/`` linked into it, found first (it is the working directory, which
lint-imports puts first on the path); the example packages, on ``PYTHONPATH``
(``examples/widgets``, ``sample_controller/src``) are found there too, installed or not.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = [ROOT / "examples" / "widgets", ROOT / "sample_controller" / "src"]


def folders() -> dict[str, str]:
    """setup.py's ``FOLDERS``: import name -> folder (read, not run: running it would build)."""
    for node in ast.parse((ROOT / "setup.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FOLDERS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise LookupError("setup.py defines no FOLDERS")


def link_tree(into: Path) -> Path:
    """``into/kplane``: kplane/'s own files, and each mapped folder under its import name."""
    package = into / "kplane"
    package.mkdir()
    for entry in (ROOT / "kplane").iterdir():
        if entry.suffix == ".py":
            (package / entry.name).symlink_to(entry)
    for name, folder in folders().items():
        (into / Path(*name.split("."))).symlink_to(ROOT / folder, target_is_directory=True)
    return into


# lint-imports' console script, through this interpreter: the script need not sit beside it
# (import-linter may come into a venv through a .pth file), and ``-c`` puts the working
# directory first on the path as the script does.
LINT_IMPORTS = [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"]


def main() -> int:
    """Run the contracts; quiet when they are kept, their report when one is broken."""
    with tempfile.TemporaryDirectory(prefix="kplane-lint-") as scratch:
        path = [str(link_tree(Path(scratch))), *map(str, EXAMPLES)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        done = subprocess.run([*LINT_IMPORTS, "--no-cache", "--no-logo", str(ROOT / ".importlinter")], cwd=scratch, env=env,
                              capture_output=True, text=True)
    if done.returncode != 0:
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
