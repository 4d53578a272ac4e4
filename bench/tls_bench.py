"""What HTTPS costs: one kplane server over plain HTTP (``--http``), one over HTTPS as ``kplane
serve`` runs by default, measured side by side in one run with the same aiohttp client.

* GET of one Deployment (req/s), 16 concurrent keep-alive clients: TLS on established connections;
* GET with a new connection per request (req/s), 16 at a time: the handshake every time;
* create of Deployments (req/s), 16 concurrent keep-alive clients.

The HTTPS client verifies the server and presents the admin's client certificate, from the
kubeconfig the server wrote.

    python bench/tls_bench.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import ssl
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from common import DEPLOYMENTS, deployment, kplane, print_comparison

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kplane.core.client.kubeconfig import load_kubeconfig  # noqa: E402

CONCURRENCY = 16


async def rate(url: str, context: ssl.SSLContext | None, seconds: float, keep_alive: bool, make) -> float:
    """Requests per second that CONCURRENCY clients complete in ``seconds``."""
    done = 0
    deadline = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(limit=CONCURRENCY, ssl=context if context is not None else True,
                                     force_close=not keep_alive)
    async with aiohttp.ClientSession(base_url=url, connector=connector) as session:
        async def worker() -> None:
            nonlocal done
            while time.monotonic() < deadline:
                async with make(session) as reply:
                    assert reply.status in (200, 201), await reply.text()
                    await reply.read()
                done += 1

        began = time.monotonic()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return done / (time.monotonic() - began)


async def measure(url: str, context: ssl.SSLContext | None, seconds: float) -> dict[str, float]:
    connector = aiohttp.TCPConnector(ssl=context) if context is not None else None
    async with aiohttp.ClientSession(base_url=url, connector=connector) as session:
        async with session.post(DEPLOYMENTS, json=deployment("web")) as reply:
            assert reply.status == 201, await reply.text()
    names = itertools.count()
    return {
        "GET req/s (keep-alive)": await rate(url, context, seconds, True, lambda s: s.get(f"{DEPLOYMENTS}/web")),
        "GET req/s (new connection)": await rate(url, context, seconds, False, lambda s: s.get(f"{DEPLOYMENTS}/web")),
        "create req/s": await rate(url, context, seconds, True,
                                   lambda s: s.post(DEPLOYMENTS, json=deployment(f"d{next(names)}"))),
    }


async def main(seconds: float) -> None:
    results = {}
    for label, secure in (("https", True), ("http", False)):
        with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp), "--no-controllers", secure=secure) as (_, url):
            context = load_kubeconfig(Path(tmp) / "kubeconfig").ssl if secure else None
            results[label] = await measure(url, context, seconds)
    print_comparison(f"kplane over HTTPS (TLS 1.3, ECDSA P-256, client certificate) and plain HTTP, {CONCURRENCY} clients",
                     ("https", "http"), results["https"], results["http"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    asyncio.run(main(parser.parse_args().seconds))
