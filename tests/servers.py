"""Starting a real `kplane serve` process for tests that drive it as a user would."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    port: int
    kubeconfig: Path


def wait_ready(url: str, process: subprocess.Popen[str], limit: float = 15.0) -> float:
    """Seconds until ``/readyz`` answered 200; fails if the process exits or the limit passes."""
    began = time.monotonic()
    while time.monotonic() - began < limit:
        assert process.poll() is None, process.communicate()
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"{url}/readyz", timeout=1) as reply:
                if reply.status == 200:
                    return time.monotonic() - began
        time.sleep(0.02)
    raise AssertionError(f"{url} was not ready within {limit}s")


def start(data_dir: Path, *args: str, port: int | None = None, python: str | Path = sys.executable) -> subprocess.Popen[str]:
    port = port or free_port()
    return subprocess.Popen([str(python), "-m", "kplane.core.cli", "serve", "--port", str(port), "--data-dir", str(data_dir), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@contextlib.contextmanager
def serving(data_dir: Path, *args: str, python: str | Path = sys.executable) -> Iterator[Served]:
    """A ready `kplane serve` on a free loopback port, terminated afterwards; ``python`` runs it
    (another virtual environment's, to serve plugins installed there)."""
    port = free_port()
    process = start(data_dir, *args, port=port, python=python)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, process)
        yield Served(process, url, port, data_dir / "kubeconfig")
    finally:
        process.terminate()
        process.communicate(timeout=10)
