"""Storage backends of other distributions: pip-install one declaring a ``kplane.storage`` entry
point, and ``--storage`` with its scheme is served by it.

The distribution is written here: ``journal://PATH`` keeps the state in SQLite at PATH through
kplane's own installed ``sqlite`` backend and notes each open beside it, so the test sees that
the server went through it. It is installed into a virtual environment of the module's own
(``tests/isolated.py``), as the plugin tests install theirs.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.distributions import pyproject, write
from tests.isolated import Venv
from tests.servers import serving

DISTRIBUTION = "kplane-journal-storage"
PYPROJECT = pyproject(DISTRIBUTION, "0.1.0", {"kplane.storage": {"journal": "kplane_journal:BACKEND",
                                                            "wrecked": "kplane_wrecked:BACKEND"}},
                     py_modules=["kplane_journal", "kplane_wrecked"], dependencies=["kplane"])
WRECKED = '''"""wrecked://: a backend whose module cannot be imported."""

raise ImportError("kplane_wrecked needs a library that is not installed")
'''
MODULE = '''\
"""journal://PATH: SQLite at PATH, each open noted in PATH.opened."""

import importlib.metadata
from pathlib import Path

from kplane.api import Backend, StorageURLError, storage


async def _open(url: str) -> storage.Storage:
    path = url.removeprefix("journal://")
    if not path:
        raise StorageURLError(f"storage URL {url!r} names no journal")
    with Path(path + ".opened").open("a") as notes:
        notes.write(url + "\\n")
    sqlite = next(iter(importlib.metadata.entry_points(group="kplane.storage", name="sqlite")))
    return await sqlite.load().open(f"sqlite://{path}")


BACKEND = Backend("journal:///path/to/state.db", _open)
'''


@pytest.fixture(scope="module")
def journal_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venv]:
    base = tmp_path_factory.mktemp("journal")
    source = write(base / "source", {"pyproject.toml": PYPROJECT, "kplane_journal.py": MODULE, "kplane_wrecked.py": WRECKED})
    venv = Venv.create(base / "venv")
    venv.pip("install", str(source))
    try:
        yield venv
    finally:
        venv.pip("uninstall", "-y", DISTRIBUTION)


def serve(venv: Venv, data_dir: Path, url: str) -> subprocess.CompletedProcess[str]:
    return venv.run("-m", "kplane.core.cli", "serve", "--port", "0", "--data-dir", str(data_dir), "--storage", url,
                    timeout=30)


async def test_a_backend_declared_by_an_installed_distribution_serves_its_scheme(journal_venv: Venv, tmp_path: Path) -> None:
    state = tmp_path / "journal.db"
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}, "data": {"k": "v"}}
    with serving(tmp_path / "data", "--storage", f"journal://{state}", python=journal_venv.python) as served:
        async with aiohttp.ClientSession(base_url=served.url) as session:
            async with session.post("/api/v1/namespaces/default/configmaps", json=configmap) as reply:
                assert reply.status == 201
            async with session.get("/api/v1/namespaces/default/configmaps/kept") as reply:
                assert reply.status == 200 and (await reply.json())["data"] == {"k": "v"}
    assert (tmp_path / "journal.db.opened").read_text() == f"journal://{state}\n"
    assert state.stat().st_size > 0


def test_the_installed_backends_are_the_supported_urls(journal_venv: Venv, tmp_path: Path) -> None:
    """Listed without importing the other distributions' backends: a broken one changes nothing."""
    done = serve(journal_venv, tmp_path, "mysql://x")
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == (
        "kplane: unsupported storage URL 'mysql://x' (supported: sqlite:///path/to/state.db, "
        "etcd://host:port[,host:port...][/prefix], etcds://host:port[,...][/prefix][?ca=file&cert=file&key=file], "
        "journal://... or wrecked://...)")


def test_a_backend_that_cannot_be_imported_is_named_when_asked_for(journal_venv: Venv, tmp_path: Path) -> None:
    done = serve(journal_venv, tmp_path, "wrecked://x")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == ("kplane: storage backend 'wrecked' (kplane_wrecked:BACKEND) cannot be loaded: "
                                   "ImportError('kplane_wrecked needs a library that is not installed')")


def test_a_backend_refuses_a_url_it_cannot_use_in_its_own_words(journal_venv: Venv, tmp_path: Path) -> None:
    done = serve(journal_venv, tmp_path, "journal://")
    assert (done.returncode, done.stderr.strip()) == (1, "kplane: storage URL 'journal://' names no journal"), done.stderr
