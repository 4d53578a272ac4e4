"""The state and the kubeconfig are private to their owner, whatever the umask; a server that
listens beyond loopback says that it has no authentication."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tests.servers import free_port, start, wait_ready

SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"generateName": "db-"}, "stringData": {"password": "hunter2"}}


@contextlib.contextmanager
def umask(mask: int) -> Iterator[None]:
    """For the processes started inside: they inherit it."""
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def serve_and_write(data_dir: Path, *args: str) -> str:
    """Start a server under umask 000, store a Secret, stop it; its stderr."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with umask(0):
        process = start(data_dir, "--no-controllers", *args, port=port)
    try:
        wait_ready(url, process)
        request = urllib.request.Request(f"{url}/api/v1/namespaces/default/secrets", data=json.dumps(SECRET).encode(),
                                         method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            assert reply.status == 201
        modes = _modes(data_dir)  # while running: the -wal, -shm and lock files exist now
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert process.returncode == 0, err
    assert {"state.db", "state.db-wal", "state.db-shm", "state.db.lock", "kubeconfig"} <= set(modes), modes
    _assert_private(data_dir, modes)
    return err


def _modes(data_dir: Path) -> dict[str, int]:
    return {str(p.relative_to(data_dir)): stat.S_IMODE(p.stat().st_mode) for p in data_dir.rglob("*")}


def _assert_private(data_dir: Path, modes: dict[str, int]) -> None:
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    loose = {name: oct(mode) for name, mode in modes.items()
             if mode != (0o700 if (data_dir / name).is_dir() else 0o600)}
    assert not loose, loose


def test_a_new_data_dir_is_private_under_umask_000(tmp_path: Path) -> None:
    err = serve_and_write(tmp_path / "state")
    assert "tightened" not in err and "no authentication" not in err
    _assert_private(tmp_path / "state", _modes(tmp_path / "state"))  # after the stop too


def test_a_data_dir_left_readable_is_tightened_and_logged(tmp_path: Path) -> None:
    data_dir = tmp_path / "state"
    serve_and_write(data_dir)
    data_dir.chmod(0o755)  # as an earlier kplane, or a careless operator, left it
    for path in data_dir.iterdir():
        path.chmod(0o644)
    err = serve_and_write(data_dir)
    assert f"{data_dir} was accessible to other users (mode 0755): tightened to 0700" in err


def test_a_sqlite_file_outside_the_data_dir_is_private(tmp_path: Path) -> None:
    database = tmp_path / "elsewhere" / "kplane.db"
    port = free_port()
    with umask(0):
        process = start(tmp_path / "state", "--no-controllers", "--storage", f"sqlite:///{database}", port=port)
    try:
        wait_ready(f"http://127.0.0.1:{port}", process)
        modes = _modes(database.parent)
    finally:
        process.terminate()
        process.communicate(timeout=10)
    assert stat.S_IMODE(database.parent.stat().st_mode) == 0o700
    assert modes == {"kplane.db": 0o600, "kplane.db-wal": 0o600, "kplane.db-shm": 0o600, "kplane.db.lock": 0o600}


def test_allowing_everything_beyond_loopback_warns(tmp_path: Path) -> None:
    port = free_port()
    process = start(tmp_path / "state", "--no-controllers", "--address", "0.0.0.0", "--authorization-mode",
                    "AlwaysAllow", port=port, secure=True)
    try:
        wait_ready(f"https://127.0.0.1:{port}", process)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert ("--authorization-mode AlwaysAllow: anyone who can reach 0.0.0.0 can read and change everything, "
            "Secrets included") in err


def test_loopback_addresses_do_not_warn(tmp_path: Path) -> None:
    for address in ("::1", "localhost"):
        port = free_port()
        process = start(tmp_path / address, "--no-controllers", "--address", address, port=port)
        try:
            out = process.stdout.readline() if process.stdout else ""  # printed once it serves
        finally:
            process.terminate()
            _, err = process.communicate(timeout=10)
        assert "kplane is serving on" in out, err
        assert "anyone who can reach" not in err  # only this machine can: that warning is not given
