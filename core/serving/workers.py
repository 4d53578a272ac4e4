"""``kplane serve --workers N``: N server processes sharing one port, supervised by the first.

Python serves with one core per process; several processes serve with several. The parent does
what must happen once and must not race (the data dir, kplane's CA, the serving and admin
certificates and the front proxy's CA in ``DATA_DIR/pki``, the port when ``--port 0``), then starts N workers: each is a
whole ``kplane serve`` (its own storage client, watch cache, admission informers, controllers
standing for the Lease), binding the same address and port with ``SO_REUSEPORT``, so that the
kernel spreads new connections among them. Each worker also listens on a private loopback port
of its own for its in-process clients, whose tokens only it knows (see :class:`APIServer`).

The workers share one storage: an etcd, or the SQLite database, which each worker opens
``shared`` (:class:`~kplane.core.storage.sqlite.SQLiteStorage`: the writers take turns, and each
worker reads every write back from the log for its watch cache). A third party's backend is
refused, as nothing says it takes writes from several processes.

A worker that exits stops the whole server (exit 1): the workers are identical, so what killed
one is likely to kill the next, and a process manager above (systemd, a kubelet) restarting the
whole is better placed to back off than a loop here. SIGTERM and SIGINT stop every worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import signal
import socket
import sys
from pathlib import Path

from kplane.core.config import ServerConfig
from kplane.core.serving.datadir import StartupError, prepare_data_dir
from kplane.core.serving.frontproxy import resolve_front_proxy
from kplane.core.serving.tls import check_serving, loopback_certificate, prepare_secure_serving

log = logging.getLogger(__name__)
_draining: set[asyncio.Task[None]] = set()  # the tasks reading workers' later output (kept: the loop holds tasks weakly)

WORKER_FLAG = "--serve-as-worker"  # hidden: INDEX of a worker the parent started
READY = "kplane worker ready"  # the line a worker prints on stdout once it serves
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
STOP_GRACE = 20.0  # seconds a worker has to stop after SIGTERM before it is killed


def check_storage(storage_url: str) -> None:
    """Several workers need a storage several processes write: kplane's SQLite or etcd."""
    if storage_url and not storage_url.startswith(("sqlite://", "etcd://", "etcds://")):
        raise ValueError("--workers above 1 needs the storage to take writes from several processes: "
                         "SQLite (the default) or etcd")


def prepare_once(config: ServerConfig) -> None:
    """What the workers would otherwise race to make: the data dir and, for HTTPS, the files in
    DATA_DIR/pki (each worker then reads them; blocking)."""
    check_serving(config)
    prepare_data_dir(config.data_dir)
    if config.tls:
        prepare_secure_serving(config, loopback_certificate())
        resolve_front_proxy(config)


def reserve_port(address: str, port: int) -> socket.socket:
    """A socket bound (never listening) to the workers' address and port with SO_REUSEPORT: it
    fixes the port ``--port 0`` picks and keeps it while the workers (re)bind it."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    reservation = socket.socket(family, socket.SOCK_STREAM)
    reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    reservation.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        reservation.bind((address or "0.0.0.0", port))
    except OSError as err:
        reservation.close()
        raise StartupError(f"cannot listen on {address}:{port}: {err.strerror}") from None
    return reservation


async def supervise(argv: list[str], workers: int, address: str, port: int, kubeconfig: Path) -> int:
    """Run ``workers`` processes of ``kplane serve ARGV`` on one port until a signal (0) or
    until one of them exits (1, the others stopped)."""
    reservation = reserve_port(address, port)
    port = reservation.getsockname()[1]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    processes: list[asyncio.subprocess.Process] = []
    ready: list[asyncio.Task[str]] = []
    exits: list[asyncio.Task[int]] = []
    stopped = asyncio.create_task(stop.wait())
    try:
        for index in range(workers):
            processes.append(await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kplane.core.cli", *argv, "--port", str(port), WORKER_FLAG, str(index),
                stdout=asyncio.subprocess.PIPE, stdin=asyncio.subprocess.DEVNULL, preexec_fn=_die_with_parent))
        ready = [asyncio.create_task(_ready(process)) for process in processes]
        exits = [asyncio.create_task(process.wait()) for process in processes]
        starting = set(ready)
        while starting and not stopped.done() and not any(task.done() for task in exits):
            done, _ = await asyncio.wait([stopped, *exits, *starting], return_when=asyncio.FIRST_COMPLETED)
            starting -= done
        if all(task.done() and task.result() for task in ready) and not stop.is_set():
            url = ready[0].result()
            print(f"kplane is serving on {url} ({workers} workers: {', '.join(str(p.pid) for p in processes)})",
                  flush=True)
            print(f"  export KUBECONFIG={kubeconfig.resolve()}", flush=True)
            await asyncio.wait([stopped, *exits], return_when=asyncio.FIRST_COMPLETED)
        if stop.is_set():
            return 0
        gone = [process for process in processes if process.returncode is not None]
        log.error("worker %s exited (%s): stopping the server", gone[0].pid if gone else "?",
                  gone[0].returncode if gone else "?")
        return 1
    finally:
        for task in (*ready, stopped, *exits):
            task.cancel()
        await _stop_all(processes)
        reservation.close()


def _die_with_parent() -> None:
    """In the worker, before it runs: SIGTERM when the parent dies, even by SIGKILL (Linux's
    PR_SET_PDEATHSIG), so that no worker serves on unsupervised."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


async def _ready(process: asyncio.subprocess.Process) -> str:
    """The URL a worker prints once it serves ("" if it exits first); its later output is drained."""
    assert process.stdout is not None
    url = ""
    async for raw in process.stdout:
        line = raw.decode(errors="replace").rstrip("\n")
        if line.startswith(READY):
            url = line.removeprefix(READY).strip()
            break
    _draining.add(drain := asyncio.get_running_loop().create_task(_drain(process.stdout)))
    drain.add_done_callback(_draining.discard)
    return url


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.read(65536):
        pass


async def _stop_all(processes: list[asyncio.subprocess.Process]) -> None:
    """SIGTERM to every worker still running, SIGKILL to those not gone within STOP_GRACE."""
    for process in processes:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
    for process in processes:
        try:
            await asyncio.wait_for(process.wait(), STOP_GRACE)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()

