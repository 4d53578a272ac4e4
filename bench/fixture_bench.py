"""How long the ``kplane`` pytest fixture takes to give a test its server (median of 20).

Each round starts what the fixture starts (``kplane.core.pytest_plugin.ServerThread``: an APIServer with
SQLite in a fresh temp folder, on a free port, in a thread with its own event loop) and stops it.
The baseline, measured in the same run, is a bare aiohttp server started the same way.

    python bench/fixture_bench.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import threading
import time
from pathlib import Path

from aiohttp import web

import common  # noqa: F401  (puts the repository on sys.path)
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.config import ServerConfig
from kplane.core.pytest_plugin import ServerThread


def kplane_round(controllers: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        began = time.perf_counter()
        thread = ServerThread(ServerConfig(data_dir=Path(tmp), port=0, tls=False, run_controllers=controllers,
                                           authorization=AuthorizationOptions(modes=("AlwaysAllow",)), leader_election=None))
        thread.start()
        took = time.perf_counter() - began
        thread.stop()
    return took


def aiohttp_round() -> float:
    ready, stop = threading.Event(), threading.Event()

    async def serve() -> None:
        runner = web.AppRunner(web.Application())
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.01)
        await runner.cleanup()

    began = time.perf_counter()
    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    ready.wait()
    took = time.perf_counter() - began
    stop.set()
    thread.join()
    return took


def main(rounds: int) -> None:
    kplane_round(False)  # the first start in a process pays the imports; the fixture's later ones do not
    bare = statistics.median(aiohttp_round() for _ in range(rounds))
    plain = statistics.median(kplane_round(False) for _ in range(rounds))
    full = statistics.median(kplane_round(True) for _ in range(rounds))
    print(f"fixture start-up, median of {rounds}")
    print(f"{'server':<44}{'ms':>8}{'vs bare':>10}")
    print(f"{'bare aiohttp in a thread':<44}{bare * 1000:>8.1f}{1:>10.1f}")
    print(f"{'kplane (API only, the default)':<44}{plain * 1000:>8.1f}{plain / bare:>10.1f}")
    print(f"{'kplane with controllers and simulated nodes':<44}{full * 1000:>8.1f}{full / bare:>10.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    main(parser.parse_args().rounds)
