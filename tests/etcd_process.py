"""A real etcd for tests: free loopback ports, a temporary data dir, stop/kill/start for restarts;
and a cluster of several such members (``EtcdCluster``) whose leader a test can kill.

The ports and the data dir outlive ``stop()`` and ``kill()``, so ``start()`` brings the same member
back with its data, as an operator restarting etcd would. The methods block (etcd takes up to a
second to start): async tests call them through ``asyncio.to_thread`` so their loop keeps running.
"""

from __future__ import annotations

import functools
import json
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

from tests.frozen import freeze

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


def _default_parent(parent: str | None) -> str | None:
    """tmpfs when there is one (fsync there is free, which keeps the suite fast on etcd 3.4)."""
    if parent is None and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    return parent


class EtcdProcess:
    """One etcd member listening on 127.0.0.1: a single-member cluster unless ``EtcdCluster``
    makes it one of several."""

    def __init__(self, parent: str | None = None, *, name: str = "kplane-test",
                 extra: tuple[str, ...] = ()) -> None:
        """``parent``: where the data dir goes; by default tmpfs when there is one; benchmarks
        pass a real disk. ``extra``: more etcd flags (e.g. a shorter election timeout)."""
        if ETCD is None:
            raise RuntimeError("etcd is not on PATH")
        self.directory = Path(tempfile.mkdtemp(prefix="kplane-etcd-", dir=_default_parent(parent)))
        self.name = name
        self.extra = extra
        self.client_port, self.peer_port = free_port(), free_port()
        self.endpoint = f"http://127.0.0.1:{self.client_port}"
        #: every member's ``name=peer URL``; a single member's own by default
        self.initial_cluster = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._started_once = False

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    @property
    def running(self) -> bool:
        return self._process is not None

    def new_ports(self) -> None:
        """Pick other ports and forget the data (a first start that lost a port race)."""
        self.client_port, self.peer_port = free_port(), free_port()
        self.endpoint = f"http://127.0.0.1:{self.client_port}"
        shutil.rmtree(self.directory / "data", ignore_errors=True)

    def status(self, timeout: float = 1.0) -> dict[str, object]:
        """etcd's maintenance status of this member (``leader``, ``raftTerm``, ``header``…)."""
        request = urllib.request.Request(f"{self.endpoint}/v3/maintenance/status", data=b"{}",
                                         method="POST")
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return dict(json.loads(response.read()))

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
                self.new_ports()

    def _start(self, timeout: float) -> None:
        self.launch()
        self.wait_started(timeout)

    def launch(self) -> None:
        """Start the process without waiting for it (members of a cluster wait for each other)."""
        assert self._process is None, "etcd is already running"
        peer = self.peer_url
        command = [
            str(ETCD),
            "--name", self.name,
            "--data-dir", str(self.directory / "data"),
            "--listen-client-urls", self.endpoint,
            "--advertise-client-urls", self.endpoint,
            "--listen-peer-urls", peer,
            "--initial-advertise-peer-urls", peer,
            "--initial-cluster", self.initial_cluster or f"{self.name}={peer}",
            "--logger", "zap",
            "--log-level", "error",
            *_no_fsync_flag(),
            *self.extra,
        ]
        with open(self.directory / "etcd.log", "ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)

    def wait_started(self, timeout: float) -> None:
        """Wait until the member launched serves requests; PortTaken if it could not listen."""
        assert self._process is not None
        self._wait_healthy(timeout)
        # a health answer may come from another etcd on the port ours could not take (ours exits,
        # in its own time): the member answering must be the one with our peer address
        if not self._answers_as_itself():
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait(timeout=20)
            self._process = None
            raise PortTaken(self.endpoint)
        self._started_once = True

    def _answers_as_itself(self) -> bool:
        """Whether the etcd answering on our client port lists a member at our peer address."""
        request = urllib.request.Request(f"{self.endpoint}/v3/cluster/member/list", data=b"{}",
                                         method="POST")
        with urllib.request.urlopen(request, timeout=5) as response:
            members = json.loads(response.read()).get("members", [])
        return any(self.peer_url in member.get("peerURLs", []) for member in members)

    def stop(self) -> None:
        """Graceful shutdown (SIGTERM)."""
        self._end(signal.SIGTERM)

    def kill(self) -> None:
        """Crash it (SIGKILL)."""
        self._end(signal.SIGKILL)

    def pause(self) -> None:
        """Freeze it (SIGSTOP): connections are accepted but nothing answers. Returns once every
        thread has stopped (the signal is delivered asynchronously; a request sent at once could
        still be answered, as a loaded machine showed)."""
        assert self._process is not None, "etcd is not running"
        freeze(self._process.pid)

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


class EtcdCluster:
    """``size`` etcd members on loopback in one cluster (static ``--initial-cluster``), each with
    its own ports and data dir. ``leader()`` asks the members' status; ``kill``/``start`` one
    member at a time. ``extra`` etcd flags go to every member."""

    def __init__(self, size: int = 3, parent: str | None = None, *, extra: tuple[str, ...] = ()) -> None:
        self.members = [EtcdProcess(parent, name=f"member-{n}", extra=extra) for n in range(size)]

    @property
    def endpoints(self) -> list[str]:
        return [member.endpoint for member in self.members]

    def storage_hosts(self) -> str:
        """``host:port,host:port,…`` for an ``etcd://`` storage URL."""
        return ",".join(f"127.0.0.1:{member.client_port}" for member in self.members)

    def start(self, timeout: float = 30.0) -> None:
        """Start every member and wait until all serve. A member that lost a port race makes the
        whole cluster pick new ports (every member's ``--initial-cluster`` names them all)."""
        for attempt in range(3):
            cluster = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
            for member in self.members:
                member.initial_cluster = cluster
                member.launch()
            try:
                for member in self.members:
                    member.wait_started(timeout)
                return
            except PortTaken:
                for member in self.members:
                    if member.running:
                        member.kill()
                    member.new_ports()
                if attempt == 2:
                    raise

    def leader(self, timeout: float = 20.0) -> EtcdProcess:
        """The member the running members agree leads (waiting through an election)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            by_id: dict[str, EtcdProcess] = {}
            leaders: set[str] = set()
            for member in self.members:
                if not member.running:
                    continue
                try:
                    status = member.status()
                except (urllib.error.URLError, OSError, ValueError):
                    continue
                by_id[str(status["header"]["member_id"])] = member  # type: ignore[index]
                leaders.add(str(status.get("leader", "0")))
            if len(leaders) == 1 and (leader := leaders.pop()) in by_id:
                return by_id[leader]
            time.sleep(0.02)
        raise RuntimeError(f"the etcd cluster elected no leader within {timeout}s")

    def kill(self, member: EtcdProcess) -> None:
        member.kill()

    def start_member(self, member: EtcdProcess, timeout: float = 20.0) -> None:
        """Bring a killed member back with its data and ports."""
        member.start(timeout)

    def cleanup(self) -> None:
        for member in self.members:
            member.cleanup()
