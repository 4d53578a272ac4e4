"""Admission webhooks: Mutating/ValidatingWebhookConfigurations called over HTTPS with
AdmissionReview v1, through a real server and real webhook servers in the test's event loop."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import ssl
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from cryptography.x509.oid import ExtendedKeyUsageOID

from kplane.core.serving.apiserver import APIServer
from tests.certs import Issued, issue, new_ca
from tests.conftest import Client
from tests.kubectl_cli import kubectl_async

GROUP = "admissionregistration.k8s.io/v1"
Answer = Callable[[dict[str, Any]], dict[str, Any] | None]


class AdmissionWebhook:
    """A webhook server: ``answers[path]`` decides each review (None: allow); every review is kept."""

    def __init__(self, ca: Issued, folder: Path) -> None:
        serving = issue(ca, "localhost", usage=ExtendedKeyUsageOID.SERVER_AUTH, hosts=["localhost", "hooks.default.svc"])
        self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.tls.load_cert_chain(*serving.write(folder, "webhook"))
        self.reviews: dict[str, list[dict[str, Any]]] = {}
        self.answers: dict[str, Answer] = {}
        self.delay: dict[str, float] = {}
        self.raw: dict[str, bytes] = {}  # answered as they are, whatever the review
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/{path}", self.review)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.tls).start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def review(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        review = await request.json()
        self.reviews.setdefault(path, []).append(review)
        await asyncio.sleep(self.delay.get(path, 0))
        if path in self.raw:
            return web.Response(body=self.raw[path], content_type="application/json")
        response = {"uid": review["request"]["uid"], "allowed": True}
        answer = self.answers.get(path)
        response |= (answer(review["request"]) if answer is not None else None) or {}
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})

    def client_config(self, ca: Issued, path: str) -> dict[str, Any]:
        return {"url": f"https://localhost:{self.port}/{path}", "caBundle": base64.b64encode(ca.pem).decode()}


@pytest.fixture
def ca() -> Issued:
    return new_ca("webhook-ca")


@pytest.fixture
async def hooks(ca: Issued, tmp_path: Path) -> AsyncIterator[AdmissionWebhook]:
    made = AdmissionWebhook(ca, tmp_path)
    await made.start()
    try:
        yield made
    finally:
        await made.stop()


def webhook(name: str, client_config: dict[str, Any], resources: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    rule = {"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": resources or ["configmaps"]}
    return {"name": name, "clientConfig": client_config, "rules": [rule], "sideEffects": "None",
            "admissionReviewVersions": ["v1"], **extra}


async def register(api: Client, kind: str, name: str, *webhooks: dict[str, Any]) -> None:
    plural = "validatingwebhookconfigurations" if kind.startswith("Validating") else "mutatingwebhookconfigurations"
    reply = await api.post(f"/apis/{GROUP}/{plural}", {"apiVersion": GROUP, "kind": kind, "metadata": {"name": name},
                                                        "webhooks": list(webhooks)})
    assert reply.status == 201, reply.body
    await asyncio.sleep(0.3)  # the informers see it


def configmap(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}, "data": {"a": "1"}}


CM = "/api/v1/namespaces/default/configmaps"


async def test_a_denial_reaches_the_client_as_the_webhook_wrote_it(api: Client, hooks: AdmissionWebhook, ca: Issued) -> None:
    def deny(request: dict[str, Any]) -> dict[str, Any] | None:
        if request["object"]["metadata"]["name"] != "bad":
            return {"warnings": ["looked at it"]}
        return {"allowed": False, "status": {"code": 422, "reason": "Invalid", "message": "bad is a bad name",
                                             "details": {"causes": [{"field": "metadata.name", "message": "bad"}]}}}
    hooks.answers["validate"] = deny
    await register(api, "ValidatingWebhookConfiguration", "names", webhook("names.example.com", hooks.client_config(ca, "validate")))
    denied = await api.post(CM, configmap("bad"))
    assert denied.status == 422
    assert denied.body["message"] == 'admission webhook "names.example.com" denied the request: bad is a bad name'
    assert denied.body["reason"] == "Invalid" and denied.body["details"]["causes"][0]["field"] == "metadata.name"
    assert (await api.get(f"{CM}/bad")).status == 404  # nothing stored
    made = await api.post(CM, configmap("good"))
    assert made.status == 201 and "looked at it" in made.headers.get("Warning", "")
    request = hooks.reviews["validate"][-1]["request"]
    assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert request["operation"] == "CREATE" and request["namespace"] == "default" and request["dryRun"] is False
    assert request["object"]["data"] == {"a": "1"} and request["oldObject"] is None
    assert request["options"]["kind"] == "CreateOptions" and request["userInfo"]["username"]
    # a webhook on everything is never asked about admission configurations
    everything = webhook("all.example.com", hooks.client_config(ca, "none"), ["*"])
    everything["rules"][0] |= {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"]}
    hooks.answers["none"] = lambda _: {"allowed": False}
    await register(api, "ValidatingWebhookConfiguration", "all", everything)
    assert (await api.delete(f"/apis/{GROUP}/validatingwebhookconfigurations/names")).status == 200
    assert "none" not in hooks.reviews or all(r["request"]["resource"]["group"] != "admissionregistration.k8s.io"
                                              for r in hooks.reviews["none"])
    refused = await api.post(CM, configmap("any"))
    assert refused.status == 400
    assert refused.body["message"] == 'admission webhook "all.example.com" denied the request without explanation'


def _label_patch(key: str, value: str) -> Answer:
    def patch(request: dict[str, Any]) -> dict[str, Any] | None:
        labels = request["object"]["metadata"].get("labels") or {}
        if labels.get(key) == value:
            return None
        ops = [{"op": "add", "path": "/metadata/labels", "value": {**labels, key: value}}]
        return {"patchType": "JSONPatch", "patch": base64.b64encode(json.dumps(ops).encode()).decode()}
    return patch


async def test_mutating_webhooks_patch_in_order_and_are_reinvoked_if_needed(api: Client, hooks: AdmissionWebhook,
                                                                            ca: Issued) -> None:
    hooks.answers["first"] = _label_patch("first", "yes")
    hooks.answers["second"] = _label_patch("second", "yes")
    await register(api, "MutatingWebhookConfiguration", "a-first",
                   webhook("first.example.com", hooks.client_config(ca, "first"), reinvocationPolicy="IfNeeded"))
    await register(api, "MutatingWebhookConfiguration", "b-second", webhook("second.example.com", hooks.client_config(ca, "second")))
    made = await api.post(CM, configmap("cm"))
    assert made.status == 201, made.body
    assert made.body["metadata"]["labels"] == {"first": "yes", "second": "yes"}
    # the second saw the first's label; the first was asked again after the second's change
    assert hooks.reviews["second"][0]["request"]["object"]["metadata"]["labels"] == {"first": "yes"}
    assert len(hooks.reviews["first"]) == 2 and len(hooks.reviews["second"]) == 1
    stored = await api.get(f"{CM}/cm")
    assert stored.body["metadata"]["labels"] == {"first": "yes", "second": "yes"}


async def test_match_policy_equivalent_converts_and_exact_does_not(api: Client, hooks: AdmissionWebhook, ca: Issued) -> None:
    equivalent = webhook("v2.example.com", hooks.client_config(ca, "v2"), ["horizontalpodautoscalers"])
    equivalent["rules"][0] |= {"apiGroups": ["autoscaling"], "apiVersions": ["v2"]}
    exact = {**equivalent, "name": "exact.example.com", "clientConfig": hooks.client_config(ca, "exact"), "matchPolicy": "Exact"}
    await register(api, "ValidatingWebhookConfiguration", "hpas", equivalent, exact)
    hpa = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3,
                    "targetCPUUtilizationPercentage": 50}}
    made = await api.post("/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers", hpa)
    assert made.status == 201, made.body
    request = hooks.reviews["v2"][0]["request"]
    assert request["kind"] == {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}
    assert request["requestKind"]["version"] == "v1" and request["object"]["apiVersion"] == "autoscaling/v2"
    assert request["object"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 50
    assert "exact" not in hooks.reviews


async def test_selectors_and_match_conditions_choose_the_requests(api: Client, hooks: AdmissionWebhook, ca: Issued) -> None:
    hooks.answers["deny"] = lambda _: {"allowed": False, "status": {"message": "no"}}
    await register(api, "ValidatingWebhookConfiguration", "picky", webhook(
        "picky.example.com", hooks.client_config(ca, "deny"),
        objectSelector={"matchLabels": {"checked": "yes"}},
        namespaceSelector={"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["default"]}]},
        matchConditions=[{"name": "not-exempt", "expression": "object.metadata.name != 'exempt'"},
                         {"name": "creates", "expression": "request.operation == 'CREATE'"}]))
    assert (await api.post(CM, configmap("unlabelled"))).status == 201
    assert (await api.post(CM, configmap("exempt", checked="yes"))).status == 201
    assert (await api.post(CM, configmap("checked", checked="yes"))).status == 400
    assert (await api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})).status == 201
    assert (await api.post("/api/v1/namespaces/other/configmaps", configmap("checked", checked="yes"))).status == 201
    assert len(hooks.reviews["deny"]) == 1


async def test_failure_policy_timeouts_and_an_unreachable_webhook(api: Client, hooks: AdmissionWebhook, ca: Issued) -> None:
    gone = {"url": "https://127.0.0.1:1/gone", "caBundle": base64.b64encode(ca.pem).decode()}
    await register(api, "ValidatingWebhookConfiguration", "gone", webhook("gone.example.com", gone))
    failed = await api.post(CM, configmap("a"))
    assert failed.status == 500
    assert failed.body["message"].startswith('Internal error occurred: failed calling webhook "gone.example.com": '
                                             'failed to call webhook: Post "https://127.0.0.1:1/gone?timeout=10s": dial tcp')
    assert (await api.delete(f"/apis/{GROUP}/validatingwebhookconfigurations/gone")).status == 200
    await register(api, "ValidatingWebhookConfiguration", "ignored", webhook("ignored.example.com", gone, failurePolicy="Ignore"))
    assert (await api.post(CM, configmap("b"))).status == 201
    assert (await api.delete(f"/apis/{GROUP}/validatingwebhookconfigurations/ignored")).status == 200
    hooks.delay["slow"] = 3
    await register(api, "ValidatingWebhookConfiguration", "slow",
                   webhook("slow.example.com", hooks.client_config(ca, "slow"), timeoutSeconds=1))
    slow = asyncio.create_task(api.post(CM, configmap("c")))
    await asyncio.sleep(0.2)
    assert (await api.get(CM)).status == 200  # others are served while the webhook is waited for
    assert not slow.done()
    timed_out = await slow
    assert timed_out.status == 500 and timed_out.body["message"].endswith("?timeout=1s\": context deadline exceeded")


async def test_dry_run_reaches_webhooks_without_side_effects(api: Client, hooks: AdmissionWebhook, ca: Issued) -> None:
    hooks.answers["label"] = _label_patch("stamped", "yes")
    await register(api, "MutatingWebhookConfiguration", "effects",
                   webhook("label.example.com", hooks.client_config(ca, "label"), sideEffects="NoneOnDryRun"))
    dry = await api.post(f"{CM}?dryRun=All", configmap("dry"))
    assert dry.status == 201 and dry.body["metadata"]["labels"] == {"stamped": "yes"}
    assert hooks.reviews["label"][-1]["request"]["dryRun"] is True
    assert hooks.reviews["label"][-1]["request"]["options"]["dryRun"] == ["All"]
    assert (await api.get(f"{CM}/dry")).status == 404
    # v1 stores only webhooks without side effects: one that has them cannot be registered
    bad = await api.post(f"/apis/{GROUP}/validatingwebhookconfigurations", {
        "apiVersion": GROUP, "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "x"},
        "webhooks": [webhook("some.example.com", hooks.client_config(ca, "some"), sideEffects="Some")]})
    assert bad.status == 422


async def test_a_webhook_behind_a_service_and_invalid_answers(api: Client, hooks: AdmissionWebhook, ca: Issued) -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hooks"},
               "spec": {"clusterIP": "127.0.0.1", "ports": [{"port": hooks.port, "protocol": "TCP"}]}}
    assert (await api.post("/api/v1/namespaces/default/services", service)).status == 201
    by_service = {"service": {"namespace": "default", "name": "hooks", "port": hooks.port, "path": "/svc"},
                  "caBundle": base64.b64encode(ca.pem).decode()}
    hooks.answers["svc"] = lambda r: {"uid": "not-it"} if r["object"]["metadata"]["name"] == "wrong-uid" else None
    await register(api, "ValidatingWebhookConfiguration", "svc", webhook("svc.example.com", by_service))
    await asyncio.sleep(0.3)
    assert (await api.post(CM, configmap("fine"))).status == 201
    wrong = await api.post(CM, configmap("wrong-uid"))
    assert wrong.status == 500
    assert 'received invalid webhook response: expected response.uid=' in wrong.body["message"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
async def test_kubectl_shows_the_denial_and_the_mutation(server: APIServer, api: Client, hooks: AdmissionWebhook,
                                                         ca: Issued, tmp_path: Path) -> None:
    hooks.answers["deny"] = lambda r: {"allowed": False, "status": {"message": "configmaps named nope are not allowed"}} \
        if r["object"]["metadata"]["name"] == "nope" else None
    hooks.answers["label"] = _label_patch("stamped", "by-webhook")
    await register(api, "ValidatingWebhookConfiguration", "deny", webhook("deny.example.com", hooks.client_config(ca, "deny")))
    await register(api, "MutatingWebhookConfiguration", "label", webhook("label.example.com", hooks.client_config(ca, "label")))
    env = {**os.environ, "KUBECONFIG": str(server.kubeconfig_path), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    code, _, err = await kubectl_async(env, "create", "configmap", "nope", "--from-literal=a=1")
    assert code == 1
    assert 'admission webhook "deny.example.com" denied the request: configmaps named nope are not allowed' in err
    code, out, err = await kubectl_async(env, "create", "configmap", "yes", "--from-literal=a=1", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["metadata"]["labels"] == {"stamped": "by-webhook"}
    code, out, _ = await kubectl_async(env, "get", "validatingwebhookconfigurations")
    assert code == 0 and "deny" in out


async def test_hostile_answers_are_bounded_and_sanitised(api: Client, hooks: AdmissionWebhook, ca: Issued) -> None:
    hooks.answers["weird"] = lambda r: {"allowed": r["name"] == "warned", "warnings": ["w"] * 5000 + ["bad\nline"], "status": {
        "code": 200, "reason": "Whatever", "message": "no", "details": {"causes": "not a list", "name": 7, "kind": "K"}}}
    hooks.raw["junk"] = b"not json"
    hooks.raw["huge"] = b'{"a": "' + b"x" * (4 << 20) + b'"}'
    await register(api, "ValidatingWebhookConfiguration", "hostile",
                   webhook("weird.example.com", hooks.client_config(ca, "weird"), ["configmaps"]),
                   webhook("junk.example.com", hooks.client_config(ca, "junk"), ["secrets"]),
                   webhook("huge.example.com", hooks.client_config(ca, "huge"), ["serviceaccounts"]))
    weird = await api.post(CM, configmap("x"))
    assert weird.status == 400 and weird.body["reason"] == "Whatever"
    assert weird.body["details"] == {"kind": "K"}
    warned = await api.post(CM, configmap("warned"))
    assert warned.status == 201 and warned.headers.getall("Warning", []) == ['299 - "w"']  # once, the bad line dropped
    junk = await api.post("/api/v1/namespaces/default/secrets", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
    assert junk.status == 500 and "received invalid webhook response: the webhook's answer is not JSON" in junk.body["message"]
    huge = await api.post("/api/v1/namespaces/default/serviceaccounts",
                          {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}})
    assert huge.status == 500 and "larger than" in huge.body["message"]
