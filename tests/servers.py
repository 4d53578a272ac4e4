"""The suite's servers: in-process configurations and real `kplane serve` processes.

They serve plain HTTP on loopback, which is quicker, unless a test asks for ``secure=True``: then
they serve as ``kplane serve`` does by default (the pytest plugin's :class:`Protection` switch).
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kplane.core.config import ServerConfig
from kplane.core.pytest_plugin import protection


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_config(*, secure: bool = False, **fields: Any) -> ServerConfig:
    """A ServerConfig of ``fields``, plain HTTP unless ``secure``."""
    return ServerConfig(**{**protection(secure).server_config(), **fields})


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    port: int
    kubeconfig: Path
    #: The server's stderr so far: read as it comes, so that a chatty server never blocks on a full pipe.
    logs: list[str] = field(default_factory=list)

    def stop(self) -> str:
        """Terminate the server; its whole stderr."""
        self.process.terminate()
        self.process.wait(timeout=10)
        return "".join(self.logs)


def _drain(stream: Any, into: list[str] | None) -> None:
    """Read ``stream`` to its end, keeping the lines in ``into`` (None: dropping them)."""
    for line in stream:
        if into is not None:
            into.append(line)


def probe_context() -> ssl.SSLContext:
    """Readiness only, as the kubelet's HTTPS probes: the server's certificate is not checked."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def wait_ready(url: str, process: subprocess.Popen[str], limit: float = 30.0) -> float:
    """Seconds until ``/readyz`` answered 200; fails if the process exits or the limit passes."""
    began = time.monotonic()
    context = probe_context() if url.startswith("https://") else None
    while time.monotonic() - began < limit:
        assert process.poll() is None, process.communicate()
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"{url}/readyz", timeout=1, context=context) as reply:
                if reply.status == 200:
                    return time.monotonic() - began
        time.sleep(0.02)
    raise AssertionError(f"{url} was not ready within {limit}s")


def start(data_dir: Path, *args: str, port: int | None = None, python: str | Path = sys.executable,
          secure: bool = False, system_pods: bool = False) -> subprocess.Popen[str]:
    """`kplane serve` on ``port``, plain HTTP unless ``secure``, without the system pods unless asked."""
    port = port or free_port()
    pods = () if system_pods else ("--no-system-pods",)
    return subprocess.Popen([str(python), "-m", "kplane.core.cli", "serve", "--port", str(port), "--data-dir", str(data_dir),
                             *protection(secure).serve_flags(), *pods, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@contextlib.contextmanager
def serving(data_dir: Path, *args: str, python: str | Path = sys.executable, secure: bool = False,
            system_pods: bool = False) -> Iterator[Served]:
    """A ready `kplane serve` on a free loopback port, terminated afterwards; ``python`` runs it
    (another virtual environment's, to serve plugins installed there)."""
    port = free_port()
    process = start(data_dir, *args, port=port, python=python, secure=secure, system_pods=system_pods)
    url = f"{'https' if secure else 'http'}://127.0.0.1:{port}"
    served = Served(process, url, port, data_dir / "kubeconfig")
    readers = [threading.Thread(target=_drain, args=(process.stdout, None), daemon=True),
               threading.Thread(target=_drain, args=(process.stderr, served.logs), daemon=True)]
    for reader in readers:
        reader.start()
    try:
        try:
            wait_ready(url, process)
        except AssertionError as err:
            raise AssertionError(f"{err}; its stderr: {''.join(served.logs)}") from None
        yield served
    finally:
        process.terminate()
        process.wait(timeout=10)
        for reader in readers:
            reader.join(timeout=5)
