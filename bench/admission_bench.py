"""What the cluster's admission extensions add to a write, measured in one run.

Webhooks (a server of their own): creates/s of ConfigMaps with no webhook, with one validating
webhook and with one mutating webhook (a JSONPatch adding a label), each alone, answered over
HTTPS on loopback by an aiohttp server in this process.

Policies: creates/s of ConfigMaps (16 concurrent keep-alive clients) with no policy (before the
policies and again after their bindings are deleted: the mean is the baseline), with one
ValidatingAdmissionPolicy bound to ConfigMaps, and with 100 (each two validations, one of them
reading a variable), every one matching every create. The issue's target: 100 policies make a
create no more than 3x slower than none.

    python bench/admission_bench.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from aiohttp import web

from common import kplane, rate
from kplane.core.pki.certificates import SubjectAltNames, issue, new_ca

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/{kind}webhookconfigurations"
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


async def uninstall(url: str, count: int) -> None:
    """Delete the ``count`` bindings (their policies then apply to nothing), until creates pass."""
    async with aiohttp.ClientSession(base_url=url) as session:
        for i in range(count):
            async with session.delete(f"{BINDINGS}/p{i:03d}") as reply:
                assert reply.status == 200, await reply.text()
        probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe"}, "data": {f"deny{count - 1}": "x"}}
        deadline = time.monotonic() + 30
        while True:
            async with session.post(CONFIGMAPS + "?dryRun=All", json=probe) as reply:
                if reply.status < 400:
                    return
            assert time.monotonic() < deadline, "the bindings never went"
            await asyncio.sleep(0.05)


async def policies(url: str, seconds: float) -> None:
    """The baseline is measured before the policies and again once their bindings are gone, and
    its mean taken: a create's cost swings with the disk's fsync latency over a run."""
    await creates(url, 1, "warm")  # a fresh server's first requests are slower: not the baseline
    before = await creates(url, seconds, "none")
    await install(url, 0, 1)
    one = await creates(url, seconds, "one")
    await install(url, 1, 100)
    hundred = await creates(url, seconds, "hundred")
    await uninstall(url, 100)
    after = await creates(url, seconds, "none-again")
    none = (before + after) / 2
    print(f"{'ConfigMap creates':<24}{'per second':>12}{'slowdown':>10}")
    for label, per_second in (("no policy (before)", before), ("no policy (after)", after), ("no policy (mean)", none),
                              ("1 policy", one), ("100 policies", hundred)):
        print(f"{label:<24}{per_second:>12.0f}{none / per_second:>9.2f}x")
    verdict = "within" if none / hundred <= 3 else "OVER"
    print(f"100 policies: {none / hundred:.2f}x slower than none ({verdict} the 3x target)")


# -- webhooks ----------------------------------------------------------------------------------

async def webhook_server(tmp: Path) -> tuple[web.AppRunner, int, str]:
    """An HTTPS server answering /validate (allowed, but not a ``probe``) and /mutate (a label
    added); its port and the caBundle of its throwaway CA."""
    ca = new_ca("bench-ca")
    pair = issue(ca, "hooks", sans=SubjectAltNames.parse(["127.0.0.1"]), server=True)
    (tmp / "hook.crt").write_bytes(pair.cert_pem())
    (tmp / "hook.key").write_bytes(pair.key_pem())
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp / "hook.crt", tmp / "hook.key")
    label = base64.b64encode(json.dumps([{"op": "add", "path": "/metadata/labels", "value": {"hooked": "yes"}}]).encode())

    async def validate(request: web.Request) -> web.Response:
        review = (await request.json())["request"]
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": {"uid": review["uid"], "allowed": review["name"] != "probe"}})

    async def mutate(request: web.Request) -> web.Response:
        review = (await request.json())["request"]
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {
            "uid": review["uid"], "allowed": True, "patchType": "JSONPatch", "patch": label.decode()}})
    app = web.Application()
    app.router.add_post("/validate", validate)
    app.router.add_post("/mutate", mutate)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, port, base64.b64encode(ca.cert_pem()).decode()


async def configure(session: aiohttp.ClientSession, kind: str, port: int, ca_bundle: str) -> None:
    """One webhook of ``kind`` (validating, mutating) on ConfigMap creates, until it takes effect."""
    path = "validate" if kind == "validating" else "mutate"
    body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": f"{kind.title()}WebhookConfiguration",
            "metadata": {"name": kind}, "webhooks": [{
                "name": f"{kind}.bench.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": f"https://127.0.0.1:{port}/{path}", "caBundle": ca_bundle},
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]}]}
    async with session.post(WEBHOOKS.format(kind=kind), json=body) as reply:
        assert reply.status == 201, await reply.text()
    probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe"}}
    deadline = time.monotonic() + 30
    while True:
        async with session.post(CONFIGMAPS + "?dryRun=All", json=probe) as reply:
            answer = await reply.json()
            if reply.status >= 400 or (answer.get("metadata") or {}).get("labels"):
                return
        assert time.monotonic() < deadline, "the webhook never took effect"
        await asyncio.sleep(0.05)


async def webhooks(url: str, seconds: float, tmp: Path) -> None:
    runner, port, ca_bundle = await webhook_server(tmp)
    try:
        await creates(url, 1, "warm")
        rows = [("no webhook", await creates(url, seconds, "bare"))]
        async with aiohttp.ClientSession(base_url=url) as session:
            await configure(session, "validating", port, ca_bundle)
            rows.append(("1 validating webhook", await creates(url, seconds, "validating")))
            async with session.delete(WEBHOOKS.format(kind="validating") + "/validating") as reply:
                assert reply.status == 200
            await configure(session, "mutating", port, ca_bundle)
            rows.append(("1 mutating webhook", await creates(url, seconds, "mutating")))
    finally:
        await runner.cleanup()
    print(f"{'ConfigMap creates':<24}{'per second':>12}{'slowdown':>10}")
    for label, per_second in rows:
        print(f"{label:<24}{per_second:>12.0f}{rows[0][1] / per_second:>9.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp) / "hooks") as (_, url):
        print("== Admission webhooks")
        asyncio.run(webhooks(url, args.seconds, Path(tmp)))
    with tempfile.TemporaryDirectory() as tmp, kplane(Path(tmp) / "data") as (_, url):
        print("== ValidatingAdmissionPolicy")
        asyncio.run(policies(url, args.seconds))


if __name__ == "__main__":
    main()
