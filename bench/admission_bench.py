"""What the cluster's admission extensions add to a write, measured in one run on one server.

Policies: creates/s of ConfigMaps (16 concurrent keep-alive clients) with no policy, with one
ValidatingAdmissionPolicy bound to ConfigMaps, and with 100 (each two validations, one of them
reading a variable), every one matching every create. The issue's target: 100 policies make a
create no more than 3x slower than none.

    python bench/admission_bench.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from common import kplane, rate

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
POLICIES = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
BINDINGS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"


def policy(i: int) -> tuple[dict[str, Any], dict[str, Any]]:
    name = f"p{i:03d}"
    return ({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
             "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                              "operations": ["CREATE"], "resources": ["configmaps"]}]},
                      "variables": [{"name": "keys", "expression": "has(object.data) ? object.data.size() : 0"}],
                      "validations": [{"expression": f"!has(object.data) || !has(object.data.deny{i})",
                                       "message": f"{name} says no"},
                                      {"expression": "variables.keys < 100 && object.metadata.name.size() < 64"}]}},
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
             "metadata": {"name": name}, "spec": {"policyName": name, "validationActions": ["Deny"]}})


async def install(url: str, first: int, last: int) -> None:
    """Policies ``first``..``last``-1, then until the last one refuses its probe."""
    async with aiohttp.ClientSession(base_url=url) as session:
        for i in range(first, last):
            for path, body in zip((POLICIES, BINDINGS), policy(i)):
                async with session.post(path, json=body) as reply:
                    assert reply.status == 201, await reply.text()
        probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe"}, "data": {f"deny{last - 1}": "x"}}
        deadline = time.monotonic() + 30
        while True:
            async with session.post(CONFIGMAPS + "?dryRun=All", json=probe) as reply:
                if reply.status >= 400:
                    return
            assert time.monotonic() < deadline, "the policies never took effect"
            await asyncio.sleep(0.05)


async def creates(url: str, seconds: float, label: str) -> float:
    async def create(session: aiohttp.ClientSession, worker: int, i: int) -> int:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{label}-{worker}-{i}"}, "data": {"a": "b"}}
        async with session.post(CONFIGMAPS, json=body) as reply:
            return reply.status
    return (await rate(url, seconds, 16, create)).per_second


async def policies(url: str, seconds: float) -> None:
    rows = [("no policy", await creates(url, seconds, "none"))]
    await install(url, 0, 1)
    rows.append(("1 policy", await creates(url, seconds, "one")))
    await install(url, 1, 100)
    rows.append(("100 policies", await creates(url, seconds, "hundred")))
    print(f"{'ConfigMap creates':<24}{'per second':>12}{'slowdown':>10}")
    for label, per_second in rows:
        print(f"{label:<24}{per_second:>12.0f}{rows[0][1] / per_second:>9.2f}x")
    verdict = "within" if rows[0][1] / rows[2][1] <= 3 else "OVER"
    print(f"100 policies: {rows[0][1] / rows[2][1]:.2f}x slower than none ({verdict} the 3x target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp) / "data") as (_, url):
        print("== ValidatingAdmissionPolicy")
        asyncio.run(policies(url, args.seconds))


if __name__ == "__main__":
    main()
