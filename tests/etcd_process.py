"""A real etcd for tests: free loopback ports, a temporary data dir, stop/kill/start for restarts.

The ports and the data dir outlive ``stop()`` and ``kill()``, so ``start()`` brings the same member
back with its data, as an operator restarting etcd would. The methods block (etcd takes up to a
second to start): async tests call them through ``asyncio.to_thread`` so their loop keeps running.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ETCD = shutil.which("etcd")


@functools.cache
def _no_fsync_flag() -> list[str]:
    """``--unsafe-no-fsync`` (etcd >= 3.5) when this etcd knows it: tests need no durability."""
    assert ETCD is not None
    usage = subprocess.run([ETCD, "--help"], capture_output=True, text=True).stdout
    return ["--unsafe-no-fsync"] if "--unsafe-no-fsync" in usage else []


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PortTaken(RuntimeError):
    """The etcd started could not listen where it was told: another process has the port."""


class EtcdProcess:
    """One single-member etcd cluster listening on 127.0.0.1."""

    def __init__(self, parent: str | None = None) -> None:
        """``parent``: where the data dir goes; by default tmpfs when there is one (fsync there is
        free, which keeps the suite fast on etcd 3.4); benchmarks pass a real disk."""
        if ETCD is None:
            raise RuntimeError("etcd is not on PATH")
        if parent is None and os.access("/dev/shm", os.W_OK):
            parent = "/dev/shm"
        self.directory = Path(tempfile.mkdtemp(prefix="kplane-etcd-", dir=parent))
        self.client_port, self.peer_port = free_port(), free_port()
        self.endpoint = f"http://127.0.0.1:{self.client_port}"
        self._process: subprocess.Popen[bytes] | None = None
        self._started_once = False

    def start(self, timeout: float = 20.0) -> None:
        """Launch etcd (again) and wait until it serves requests. Ports another process took
        meanwhile (the suite's other worker picks free ports too) are picked again, on a
        first start only: a restart keeps its member's addresses."""
        for attempt in range(3):
            try:
                return self._start(timeout)
            except PortTaken:
                if attempt == 2 or (self.directory / "data").exists() and self._started_once:
                    raise
                self.client_port, self.peer_port = free_port(), free_port()
                self.endpoint = f"http://127.0.0.1:{self.client_port}"
                shutil.rmtree(self.directory / "data", ignore_errors=True)

    def _start(self, timeout: float) -> None:
        assert self._process is None, "etcd is already running"
        peer = f"http://127.0.0.1:{self.peer_port}"
        command = [
            str(ETCD),
            "--name", "kplane-test",
            "--data-dir", str(self.directory / "data"),
            "--listen-client-urls", self.endpoint,
            "--advertise-client-urls", self.endpoint,
            "--listen-peer-urls", peer,
            "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"kplane-test={peer}",
            "--logger", "zap",
            "--log-level", "error",
            *_no_fsync_flag(),
        ]
        with open(self.directory / "etcd.log", "ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        self._wait_healthy(timeout)
        # a health answer may come from another etcd on the port ours could not take: ours exits
        for _ in range(10):
            time.sleep(0.03)
            if self._process.poll() is not None:
                self._process = None
                raise PortTaken(self.endpoint)
        self._started_once = True

    def stop(self) -> None:
        """Graceful shutdown (SIGTERM)."""
        self._end(signal.SIGTERM)

    def kill(self) -> None:
        """Crash it (SIGKILL)."""
        self._end(signal.SIGKILL)

    def pause(self) -> None:
        """Freeze it (SIGSTOP): connections are accepted but nothing answers."""
        assert self._process is not None, "etcd is not running"
        self._process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Thaw it after ``pause`` (SIGCONT)."""
        assert self._process is not None, "etcd is not running"
        self._process.send_signal(signal.SIGCONT)

    def cleanup(self) -> None:
        """Kill it if running and remove its data dir."""
        if self._process is not None:
            self.kill()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _end(self, sig: signal.Signals) -> None:
        assert self._process is not None, "etcd is not running"
        self._process.send_signal(sig)
        self._process.wait(timeout=20)
        self._process = None

    def _wait_healthy(self, timeout: float) -> None:
        assert self._process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                log = (self.directory / "etcd.log").read_text(errors="replace")
                self._process = None
                if "address already in use" in log[-2000:]:
                    raise PortTaken(self.endpoint)
                raise RuntimeError(f"etcd exited during startup:\n{log[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.endpoint}/health", timeout=1) as response:
                    if b'"true"' in response.read():
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"etcd did not become healthy within {timeout}s")


_shared: list[EtcdProcess] = []


def shared() -> EtcdProcess:
    """The test session's etcd, started on first use: storages on it each take their own key
    prefix, and tests that depend on revision numbers count from the revision current when they
    start. Never stop it; a test that needs a restart starts an etcd of its own."""
    if not _shared:
        process = EtcdProcess()
        process.start()
        _shared.append(process)
    return _shared[0]


def stop_shared() -> None:
    while _shared:
        _shared.pop().cleanup()
