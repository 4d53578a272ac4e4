"""What authentication and RBAC cost per request, measured side by side in one run.

Two kplane servers with the same ``--token-auth-file``: one with ``--authorization-mode RBAC``,
one with ``AlwaysAllow``. On both, the token user ``bench`` is granted get and create of
ConfigMaps in ``default`` by a Role and a RoleBinding. Three lines are driven by the same aiohttp
client (16 keep-alive connections), for a GET of one ConfigMap and for creates of ConfigMaps:

* no credentials on AlwaysAllow (``system:anonymous``): the baseline;
* the token on AlwaysAllow: authentication is paid, the decision is free;
* the token on RBAC: authentication and a decision walking the user's bindings.

Each line shows req/s, p50 and p99 latency, the server's CPU time per request, and its rate and
CPU as ratios of the baseline's (CPU per request is what a busy machine disturbs least). Then the
same again with ``--bindings`` RoleBindings and as many ClusterRoleBindings for other users on
both servers: RBAC looks the requester's bindings up in an index, so its ratio should not move.

The lines take turns, ``--rounds`` times, and each figure is the median of its rounds, so that
a busy machine weighs on every line alike.

    python bench/auth_bench.py [--seconds 2] [--rounds 3] [--bindings 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from common import MakeRequest, cpu_seconds, kplane, post_all, rate

CONCURRENCY = 16
NAMESPACE = "default"
CONFIGMAPS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
ADMIN = {"Authorization": "Bearer admin-token"}
BENCH = {"Authorization": "Bearer bench-token"}
TOKENS = "admin-token,admin,1,system:masters\nbench-token,bench,2\n"
ROLE = "configmap-writer"
NAMES = itertools.count()  # of the ConfigMaps created, unique through the run


@dataclass(frozen=True)
class Line:
    label: str
    url: str
    pid: int  # the server's, whose CPU is counted
    headers: Mapping[str, str] | None


@dataclass(frozen=True)
class Figures:
    """A line's median figures over the rounds."""

    per_second: float
    p50_ms: float
    p99_ms: float
    cpu_us: float  # server CPU per request: what the machine's other load disturbs least


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"greeting": "hello"}}


def binding(kind: str, name: str, role_kind: str, role: str, user: str) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": NAMESPACE} if kind == "RoleBinding" else {})}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}


async def allowed(url: str, user: str, verb: str, resource: str, namespace: str = "") -> bool:
    """What the server's authorizer says of ``user`` (a SubjectAccessReview, as the admin)."""
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": user, "resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}}}
    async with aiohttp.ClientSession(base_url=url, headers=ADMIN) as session:
        async with session.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json=review) as reply:
            assert reply.status == 201, await reply.text()
            return bool((await reply.json())["status"].get("allowed"))


async def until_allowed(url: str, user: str, verb: str, resource: str, namespace: str = "") -> None:
    """Until the policy cache has caught up with the bindings just written (10 s at most)."""
    deadline = time.monotonic() + 10
    while not await allowed(url, user, verb, resource, namespace):
        assert time.monotonic() < deadline, f"{user} is still not allowed to {verb} {resource}"
        await asyncio.sleep(0.05)


def role(kind: str) -> dict[str, Any]:
    """Get and create ConfigMaps, as a Role in ``default`` or a ClusterRole."""
    metadata = {"name": ROLE, **({"namespace": NAMESPACE} if kind == "Role" else {})}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": metadata,
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "create"]}]}


async def grant(url: str) -> None:
    """The Role and RoleBinding of ``bench``, and the ConfigMap its GETs read."""
    await post_all(url, f"{RBAC}/namespaces/{NAMESPACE}/roles", [role("Role")], headers=ADMIN)
    await post_all(url, f"{RBAC}/namespaces/{NAMESPACE}/rolebindings",
                   [binding("RoleBinding", "bench", "Role", ROLE, "bench")], headers=ADMIN)
    await post_all(url, CONFIGMAPS, [configmap("one")], headers=ADMIN)
    await until_allowed(url, "bench", "get", "configmaps", NAMESPACE)


async def bind_others(url: str, count: int) -> None:
    """``count`` RoleBindings and ``count`` ClusterRoleBindings (of a ClusterRole as ``bench``'s
    Role), each for a user of its own."""
    await post_all(url, f"{RBAC}/namespaces/{NAMESPACE}/rolebindings",
                   [binding("RoleBinding", f"other-{i}", "Role", ROLE, f"other-{i}") for i in range(count)],
                   headers=ADMIN)
    await post_all(url, f"{RBAC}/clusterroles", [role("ClusterRole")], headers=ADMIN)
    await post_all(url, f"{RBAC}/clusterrolebindings",
                   [binding("ClusterRoleBinding", f"other-{i}", "ClusterRole", ROLE, f"cluster-other-{i}")
                    for i in range(count)], headers=ADMIN)
    await until_allowed(url, f"other-{count - 1}", "create", "configmaps", NAMESPACE)
    await until_allowed(url, f"cluster-other-{count - 1}", "create", "configmaps", "kube-system")


def requests() -> dict[str, MakeRequest]:
    async def get(session: aiohttp.ClientSession, worker: int, i: int) -> int:
        async with session.get(f"{CONFIGMAPS}/one") as reply:
            await reply.read()
            return reply.status

    async def create(session: aiohttp.ClientSession, worker: int, i: int) -> int:
        async with session.post(CONFIGMAPS, json=configmap(f"c-{next(NAMES)}")) as reply:
            await reply.read()
            return reply.status

    return {"GET one ConfigMap": get, "create a ConfigMap": create}


async def measure(lines: list[Line], seconds: float, rounds: int) -> dict[str, dict[str, Figures]]:
    """By request, by line: the median of ``rounds`` turns (the lines' order rotates each round)."""
    runs: dict[str, dict[str, list[Figures]]] = {}
    for turn in range(rounds):
        for what, make in requests().items():
            for line in lines[turn % len(lines):] + lines[:turn % len(lines)]:
                cpu = cpu_seconds(line.pid)
                found = await rate(line.url, seconds, CONCURRENCY, make, line.headers)
                cpu_us = (cpu_seconds(line.pid) - cpu) / found.requests * 1e6
                runs.setdefault(what, {}).setdefault(line.label, []).append(
                    Figures(found.per_second, found.p50_ms, found.p99_ms, cpu_us))
    return {what: {label: Figures(*(statistics.median(getattr(f, name) for f in found) for name in Figures.__annotations__))
                   for label, found in by_line.items()} for what, by_line in runs.items()}


def show(title: str, lines: list[Line], results: dict[str, dict[str, Figures]]) -> None:
    """A table per request: each line's figures, its rate and CPU as ratios of the first line's."""
    width = max(len(line.label) for line in lines) + 2
    print(title)
    for what, by_line in results.items():
        base = by_line[lines[0].label]
        print(f"  {what:<{width}}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'CPU us':>9}{'req/s ratio':>13}{'CPU ratio':>11}")
        for line in lines:
            found = by_line[line.label]
            print(f"  {line.label:<{width}}{found.per_second:>8.0f}{found.p50_ms:>9.1f}{found.p99_ms:>9.1f}"
                  f"{found.cpu_us:>9.0f}{found.per_second / base.per_second:>13.2f}{found.cpu_us / base.cpu_us:>11.2f}")


def rbac_over_allow(results: dict[str, dict[str, Figures]], what: str) -> str:
    rbac, allow = results[what]["token, RBAC"], results[what]["token, AlwaysAllow"]
    return f"req/s {rbac.per_second / allow.per_second:.2f}, CPU {rbac.cpu_us / allow.cpu_us:.2f}"


async def main(seconds: float, rounds: int, bindings: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tokens = Path(tmp) / "tokens.csv"
        tokens.write_text(TOKENS)
        flags = ("--no-controllers", "--token-auth-file", str(tokens))
        with kplane(Path(tmp) / "rbac", *flags, "--authorization-mode", "RBAC") as (rbac, rbac_url), \
                kplane(Path(tmp) / "allow", *flags, "--authorization-mode", "AlwaysAllow") as (allow, allow_url):
            await asyncio.gather(grant(rbac_url), grant(allow_url))
            lines = [Line("anonymous, AlwaysAllow", allow_url, allow.pid, None),
                     Line("token, AlwaysAllow", allow_url, allow.pid, BENCH), Line("token, RBAC", rbac_url, rbac.pid, BENCH)]
            print(f"load: the aiohttp client, {CONCURRENCY} keep-alive connections, {seconds:g} s a line, "
                  f"median of {rounds} rounds; {os.cpu_count()} cores")
            plain = await measure(lines, seconds, rounds)
            show("bench's RoleBinding and the bootstrap policy only", lines, plain)
            await asyncio.gather(bind_others(rbac_url, bindings), bind_others(allow_url, bindings))
            crowded = await measure(lines, seconds, rounds)
            show(f"with {bindings} RoleBindings and {bindings} ClusterRoleBindings for other users", lines, crowded)
    print("RBAC over AlwaysAllow, the same token:")
    for what in plain:
        print(f"  {what}: {rbac_over_allow(plain, what)}; with the bindings {rbac_over_allow(crowded, what)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bindings", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(main(args.seconds, args.rounds, args.bindings))
