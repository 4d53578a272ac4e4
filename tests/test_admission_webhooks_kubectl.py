"""Admission webhooks through a real `kplane serve`, real HTTPS webhook servers and the real
kubectl: denials and their status, JSONPatch mutations in order and their reinvocation,
validating webhooks in parallel, matchPolicy, selectors, matchConditions, failurePolicy and
timeoutSeconds, the answer's checks, warnings and audit annotations, Service references.

One server for the module (audited) and one aiohttp webhook server in a thread of the test
process, its certificate from a throwaway CA; each test answers on its own path and selects only
objects labelled with its own name, so the tests never see each other's webhooks. A new
configuration takes effect once the server's informers have seen it: :func:`until` polls.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from kplane.core.client.kubeconfig import load_kubeconfig
from kplane.core.pki.certificates import SubjectAltNames, issue, new_ca
from tests.kubectl_cli import Kubectl
from tests.servers import Served, free_port, serving
from tests.waiting import wait_until

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources: [{group: "", resources: [configmaps]}]
"""

Review = dict[str, Any]
Answer = Callable[[Review], Awaitable[dict[str, Any]] | dict[str, Any]]


class Hooks:
    """An HTTPS webhook server on loopback: each path answers with the function the test set,
    and keeps the AdmissionReview requests it got."""

    def __init__(self, workdir: Path) -> None:
        ca = new_ca("webhooks-test-ca")
        pair = issue(ca, "hooks", sans=SubjectAltNames.parse(["127.0.0.1", "localhost", "hooks.default.svc"]), server=True)
        (workdir / "hook.crt").write_bytes(pair.cert_pem())
        (workdir / "hook.key").write_bytes(pair.key_pem())
        self.ca_bundle = base64.b64encode(ca.cert_pem()).decode()
        self.answers: dict[str, Answer] = {}
        self.seen: dict[str, list[Review]] = {}
        self.versions: dict[str, list[str]] = {}  # the apiVersion of each review
        self.port = free_port()
        self.loop = asyncio.new_event_loop()
        self._certs = (workdir / "hook.crt", workdir / "hook.key")
        started = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(started,), daemon=True)
        self._thread.start()
        started.wait(10)

    def _run(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_post("/{path}", self._handle)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*self._certs)
        runner = self._runner = web.AppRunner(app)
        self.loop.run_until_complete(runner.setup())
        self.loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", self.port, ssl_context=context).start())
        started.set()
        self.loop.run_forever()
        self.loop.run_until_complete(runner.cleanup())

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        review = await request.json()
        self.seen.setdefault(path, []).append(review["request"])
        self.versions.setdefault(path, []).append(review["apiVersion"])
        answer = self.answers[path](review["request"])
        if asyncio.iscoroutine(answer):
            answer = await answer
        if isinstance(answer, web.StreamResponse):
            return answer
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": {"uid": review["request"]["uid"], **answer}})

    def url(self, path: str) -> dict[str, Any]:
        return {"url": f"https://127.0.0.1:{self.port}/{path}", "caBundle": self.ca_bundle}

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


class Cluster:
    def __init__(self, served: Served, kubectl: Kubectl, audit_log: Path, hooks: Hooks) -> None:
        self.served, self.kubectl, self.audit_log, self.hooks = served, kubectl, audit_log, hooks
        self.tls = load_kubeconfig(served.kubeconfig).ssl  # the admin's client certificate

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any], Any]:
        """One request as the admin; (status, body, headers)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.served.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30, context=self.tls) as reply:
                return reply.status, json.loads(reply.read()), reply.headers
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read()), err.headers

    def install(self, kind: str, name: str, *webhooks: dict[str, Any]) -> None:
        path = VALIDATING if kind == "Validating" else MUTATING
        body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": f"{kind}WebhookConfiguration",
                "metadata": {"name": name}, "webhooks": list(webhooks)}
        status, answer, _ = self.call("POST", path, body)
        assert status == 201, answer


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    workdir = tmp_path_factory.mktemp("webhooks")
    (workdir / "audit.yaml").write_text(AUDIT_POLICY)
    audit_log = workdir / "audit.log"
    hooks = Hooks(workdir)
    try:
        with serving(workdir / "data", "--audit-policy-file", str(workdir / "audit.yaml"), "--audit-log-path",
                     str(audit_log), "--audit-log-mode", "blocking", secure=True) as served:
            env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"),
                   "HOME": str(workdir)}
            yield Cluster(served, Kubectl(env, workdir), audit_log, hooks)
    finally:
        hooks.stop()


def webhook(cluster: Cluster, test: str, name: str = "", **spec: Any) -> dict[str, Any]:
    """A webhook on CREATE/UPDATE of the ConfigMaps labelled for ``test``, answered at /``test``."""
    out = {"name": name or f"{test}.example.com", "clientConfig": cluster.hooks.url(test),
           "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                      "resources": ["configmaps"]}],
           "objectSelector": {"matchLabels": {"wh-test": test}}, "sideEffects": "None",
           "admissionReviewVersions": ["v1"], "timeoutSeconds": 5}
    out.update(spec)
    return out


def configmap(test: str, name: str, data: dict[str, str] | None = None, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"wh-test": test, **labels}}, "data": data or {}}


def refused(cluster: Cluster, probe: dict[str, Any]) -> Callable[[], bool]:
    return lambda: cluster.call("POST", CONFIGMAPS + "?dryRun=All", probe)[0] >= 400


def patch(*operations: dict[str, Any]) -> dict[str, Any]:
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(list(operations)).encode()).decode()}


def test_a_denial_reaches_kubectl_and_the_client_with_the_webhook_s_status(cluster: Cluster) -> None:
    test = "denial"
    cluster.hooks.answers[test] = lambda r: {"allowed": "bad" not in (r["object"].get("data") or {}), "status": {
        "code": 409, "reason": "AlreadyExists", "message": "bad data", "details": {"name": "x", "causes": [
            {"reason": "FieldValueInvalid", "message": "no bad", "field": "data.bad"}]}}}
    cluster.install("Validating", test, webhook(cluster, test))
    wait_until(refused(cluster, configmap(test, "probe", {"bad": "1"})))

    manifest = json.dumps(configmap(test, "a", {"bad": "1"}))
    done = cluster.kubectl.run("apply", "-f", "-", stdin=manifest, check=False)
    assert done.returncode != 0
    assert 'admission webhook "denial.example.com" denied the request: bad data' in done.stderr

    status, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "a", {"bad": "1"}))
    assert status == 409
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": 'admission webhook "denial.example.com" denied the request: bad data',
                    "reason": "AlreadyExists", "details": {"name": "x", "causes": [
                        {"reason": "FieldValueInvalid", "message": "no bad", "field": "data.bad"}]}, "code": 409}
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "good"))[0] == 201
    review = cluster.hooks.seen[test][-1]
    assert (review["kind"], review["resource"], review["operation"], review["name"], review["namespace"]) == (
        {"group": "", "version": "v1", "kind": "ConfigMap"}, {"group": "", "version": "v1", "resource": "configmaps"},
        "CREATE", "good", "default")
    assert review["userInfo"]["username"] and review["options"]["kind"] == "CreateOptions"

    cluster.hooks.answers[test] = lambda r: {"allowed": False}
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "b"))
    assert (body["code"], body["message"]) == (400, 'admission webhook "denial.example.com" denied the request without explanation')


def test_a_mutation_reaches_kubectl_with_warnings_and_audit_annotations(cluster: Cluster) -> None:
    test = "mutation"
    cluster.hooks.answers[test] = lambda r: {
        **patch({"op": "add", "path": "/data", "value": {"added": "by-webhook"}}),
        "warnings": ["mutated by the webhook"], "auditAnnotations": {"seen": "yes"}}
    cluster.install("Mutating", test, webhook(cluster, test))
    wait_until(lambda: (cluster.call("POST", CONFIGMAPS + "?dryRun=All", configmap(test, "probe"))[1].get("data") or {})
          .get("added") == "by-webhook")

    done = cluster.kubectl.run("apply", "-f", "-", stdin=json.dumps(configmap(test, "m")))
    assert "Warning: mutated by the webhook" in done.stderr
    got = json.loads(cluster.kubectl.run("get", "configmap", "m", "-o", "json").stdout)
    assert got["data"] == {"added": "by-webhook"}

    events = [json.loads(line) for line in cluster.audit_log.read_text().splitlines()]
    created = [e for e in events if e["verb"] == "create" and e["objectRef"].get("name") == "m"
               and e["stage"] == "ResponseComplete"]
    assert created, "no audit event for the create"
    annotations = created[-1]["annotations"]
    assert annotations["mutation.example.com/seen"] == "yes"
    assert json.loads(annotations["mutation.webhook.admission.k8s.io/round_0_index_0"]) == {
        "configuration": "mutation", "webhook": "mutation.example.com", "mutated": True}


def test_mutating_webhooks_run_in_order_and_if_needed_ones_are_reinvoked(cluster: Cluster) -> None:
    test = "order"
    first, second = f"{test}-first", f"{test}-second"

    def count(review: Review) -> dict[str, Any]:
        labels = review["object"]["metadata"].get("labels") or {}
        return patch({"op": "add", "path": "/metadata/annotations", "value": {
            "first-saw-second": str("second" in labels).lower()}})
    cluster.hooks.answers[first] = count
    cluster.hooks.answers[second] = lambda r: patch({"op": "add", "path": "/metadata/labels/second", "value": "yes"})
    cluster.install("Mutating", test,
                    webhook(cluster, test, "first.example.com", clientConfig=cluster.hooks.url(first),
                            reinvocationPolicy="IfNeeded"),
                    webhook(cluster, test, "second.example.com", clientConfig=cluster.hooks.url(second)))
    wait_until(lambda: "second" in cluster.call("POST", CONFIGMAPS + "?dryRun=All", configmap(test, "probe"))[1]
          .get("metadata", {}).get("labels", {}))
    cluster.hooks.seen.clear()

    status, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "o"))
    assert status == 201, body
    assert body["metadata"]["labels"]["second"] == "yes"
    assert body["metadata"]["annotations"] == {"first-saw-second": "true"}  # its second call saw the second's change
    assert len(cluster.hooks.seen[first]) == 2 and len(cluster.hooks.seen[second]) == 1


def test_validating_webhooks_are_called_in_parallel(cluster: Cluster) -> None:
    test = "parallel"
    arrived = {name: asyncio.Event() for name in ("a", "b")}

    def meet(me: str, other: str) -> Answer:
        async def answer(review: Review) -> dict[str, Any]:
            arrived[me].set()
            await asyncio.wait_for(arrived[other].wait(), 4)  # only if both are asked at once
            return {"allowed": True}
        return answer
    cluster.hooks.answers[f"{test}-a"] = meet("a", "b")
    cluster.hooks.answers[f"{test}-b"] = meet("b", "a")
    cluster.hooks.answers[f"{test}-probe"] = lambda r: {"allowed": r["name"] != "probe"}
    cluster.install("Validating", test,
                    webhook(cluster, test, "a.example.com", clientConfig=cluster.hooks.url(f"{test}-a")),
                    webhook(cluster, test, "b.example.com", clientConfig=cluster.hooks.url(f"{test}-b")),
                    webhook(cluster, test, "probe.example.com", clientConfig=cluster.hooks.url(f"{test}-probe")))
    wait_until(refused(cluster, configmap(test, "probe")))
    for event in arrived.values():
        cluster.hooks.loop.call_soon_threadsafe(event.clear)
    status, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "p"))
    assert status == 201, body


def test_failure_policy_decides_for_an_unreachable_or_slow_webhook(cluster: Cluster) -> None:
    test = "failing"
    closed = free_port()
    unreachable = {"url": f"https://127.0.0.1:{closed}/x", "caBundle": cluster.hooks.ca_bundle}

    async def slow(review: Review) -> dict[str, Any]:
        await asyncio.sleep(3)
        return {"allowed": True}
    cluster.hooks.answers[f"{test}-slow"] = slow
    other_ca = base64.b64encode(new_ca("another-ca").cert_pem()).decode()
    untrusted = {**cluster.hooks.url(f"{test}-slow"), "caBundle": other_ca}
    cluster.install("Validating", test,
                    webhook(cluster, test, "ignored.example.com", clientConfig=unreachable, failurePolicy="Ignore"),
                    webhook(cluster, f"{test}-tls", "untrusted.example.com", clientConfig=untrusted),
                    webhook(cluster, f"{test}-fail", "closed.example.com", clientConfig=unreachable),
                    webhook(cluster, f"{test}-slow", "slow.example.com", clientConfig=cluster.hooks.url(f"{test}-slow"),
                            timeoutSeconds=1))
    wait_until(refused(cluster, configmap(f"{test}-fail", "probe")))

    assert cluster.call("POST", CONFIGMAPS, configmap(test, "ignored"))[0] == 201
    events = [json.loads(line) for line in cluster.audit_log.read_text().splitlines()]
    created = [e for e in events if e["verb"] == "create" and e["objectRef"].get("name") == "ignored"
               and e["stage"] == "ResponseComplete"]
    failed_open = {k: v for k, v in created[-1]["annotations"].items() if k.startswith("failed-open.")}
    assert list(failed_open.values()) == ["ignored.example.com"]  # index: the webhook's among all of them
    assert next(iter(failed_open)).startswith("failed-open.validating.webhook.admission.k8s.io/round_0_index_")
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(f"{test}-tls", "t"))
    assert body["message"].endswith(f'failed calling webhook "untrusted.example.com": failed to call webhook: Post '
                                    f'"https://127.0.0.1:{cluster.hooks.port}/{test}-slow?timeout=5s": tls: failed to '
                                    "verify certificate: x509: certificate signed by unknown authority")
    status, body, _ = cluster.call("POST", CONFIGMAPS, configmap(f"{test}-fail", "f"))
    assert (status, body["reason"]) == (500, "InternalError")
    assert body["message"] == (f'Internal error occurred: failed calling webhook "closed.example.com": failed to call '
                               f'webhook: Post "https://127.0.0.1:{closed}/x?timeout=5s": dial tcp 127.0.0.1:{closed}: '
                               "connect: connection refused")
    status, body, _ = cluster.call("POST", CONFIGMAPS, configmap(f"{test}-slow", "s"))
    assert status == 500
    assert body["message"] == (f'Internal error occurred: failed calling webhook "slow.example.com": failed to call '
                               f'webhook: Post "https://127.0.0.1:{cluster.hooks.port}/{test}-slow?timeout=1s": '
                               "context deadline exceeded")


@pytest.mark.parametrize(("answer", "error"), [
    ({"response": {"uid": "other", "allowed": True}}, 'expected response.uid="{uid}", got "other"'),
    ({"kind": "AdmissionReview"}, "webhook response was absent"),
    ({"apiVersion": "v1", "kind": "Status", "response": {"uid": "{uid}", "allowed": True}},
     "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got v1, Kind=Status"),
    ({"response": {"uid": "{uid}", "allowed": True, "patch": "W10="}},
     "webhook returned response.patch but not response.patchType"),
    ({"response": {"uid": "{uid}", "allowed": True, "patch": "W10=", "patchType": "JSONPatch"}},
     "validating webhook may not return response.patch or response.patchType"),
])
def test_an_answer_that_does_not_hold_up_is_a_failure_naming_the_webhook(cluster: Cluster, answer: dict[str, Any],
                                                                         error: str) -> None:
    test = "answers"
    def reply(review: Review) -> web.Response:
        text = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", **answer})
        return web.json_response(text=text.replace("{uid}", review["uid"]))
    cluster.hooks.answers[test] = reply
    if not any(w["name"] == "answers.example.com" for w in _webhooks(cluster, VALIDATING, test)):
        cluster.install("Validating", test, webhook(cluster, test))
    wait_until(refused(cluster, configmap(test, "probe")))
    status, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "x"))
    uid = cluster.hooks.seen[test][-1]["uid"]
    assert status == 500
    assert body["message"] == ('Internal error occurred: failed calling webhook "answers.example.com": '
                               f"received invalid webhook response: {error.replace('{uid}', uid)}")


def test_a_webhook_speaking_only_v1beta1_gets_a_v1beta1_review(cluster: Cluster) -> None:
    test = "v1beta1"
    cluster.hooks.answers[test] = lambda r: {"allowed": r["name"] != "probe"}
    cluster.install("Validating", test, webhook(cluster, test, admissionReviewVersions=["v1beta1"]))
    wait_until(refused(cluster, configmap(test, "probe")))
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "x"))[0] == 201
    assert cluster.hooks.versions[test][-1] == "admission.k8s.io/v1beta1"


def _webhooks(cluster: Cluster, path: str, name: str) -> list[dict[str, Any]]:
    status, body, _ = cluster.call("GET", f"{path}/{name}")
    return body.get("webhooks", []) if status == 200 else []


def test_an_oversized_answer_is_refused_and_warnings_are_bounded(cluster: Cluster) -> None:
    test = "oversized"
    cluster.hooks.answers[test] = lambda r: {"allowed": r["name"] != "probe", "warnings": ["x" * (4 << 20)]}
    cluster.install("Validating", test, webhook(cluster, test))
    wait_until(refused(cluster, configmap(test, "probe")))
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "x"))
    assert "failed to call webhook: the webhook's answer is larger than" in body["message"]

    cluster.hooks.answers[test] = lambda r: {"allowed": True, "warnings": ["y" * 5000, "short", "short", "z" * 300, ""]}
    status, _, headers = cluster.call("POST", CONFIGMAPS, configmap(test, "y"))
    assert status == 201
    # past kube's 4096 characters a warning is cut to 256; none is empty or said twice
    assert headers.get_all("Warning") == [f'299 - "{"y" * 256}"', '299 - "short"', f'299 - "{"z" * 300}"']


def test_match_policy_sends_another_version_converted_and_exact_does_not(cluster: Cluster) -> None:
    test = "versions"
    cluster.hooks.answers[test] = lambda r: {"allowed": r["name"] != "probe"}
    rule = {"apiGroups": ["autoscaling"], "apiVersions": ["v2"], "operations": ["CREATE"],
            "resources": ["horizontalpodautoscalers"]}
    cluster.install("Validating", test, webhook(cluster, test, rules=[rule]),
                    webhook(cluster, test, "exact.example.com", rules=[rule], matchPolicy="Exact",
                            clientConfig=cluster.hooks.url(f"{test}-exact")))
    hpas = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"

    def hpa(name: str) -> dict[str, Any]:
        return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": name, "labels": {"wh-test": test}},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                         "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}}
    wait_until(lambda: cluster.call("POST", hpas + "?dryRun=All", hpa("probe"))[0] >= 400)
    status, body, _ = cluster.call("POST", hpas, hpa("h"))
    assert status == 201, body
    review = cluster.hooks.seen[test][-1]
    assert review["kind"] == {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}
    assert review["requestKind"]["version"] == "v1"
    assert review["object"]["apiVersion"] == "autoscaling/v2"
    assert review["object"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 50
    assert f"{test}-exact" not in cluster.hooks.seen


def test_namespace_selector_and_match_conditions(cluster: Cluster) -> None:
    test = "selectors"
    cluster.hooks.answers[test] = lambda r: {"allowed": False, "status": {"message": "caught"}}
    assert cluster.call("POST", "/api/v1/namespaces", {"metadata": {"name": "watched", "labels": {"watch": "yes"}}})[0] == 201
    cluster.install("Validating", test, webhook(
        cluster, test, namespaceSelector={"matchLabels": {"watch": "yes"}},
        matchConditions=[{"name": "not-skipped", "expression": "object.metadata.name != 'skip'"},
                         {"name": "admin", "expression": "request.userInfo.username != ''"}]))
    watched = "/api/v1/namespaces/watched/configmaps"
    wait_until(lambda: cluster.call("POST", watched + "?dryRun=All", configmap(test, "probe"))[0] >= 400)

    assert cluster.call("POST", watched, configmap(test, "skip"))[0] == 201  # a condition is false
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "elsewhere"))[0] == 201  # another namespace
    _, body, _ = cluster.call("POST", watched, configmap(test, "caught"))
    assert body["message"] == 'admission webhook "selectors.example.com" denied the request: caught'

    broken = "selectors-broken"
    cluster.install("Validating", broken, webhook(
        cluster, broken, matchConditions=[{"name": "bad", "expression": "object.data.missing == 'x'"}]))
    wait_until(refused(cluster, configmap(broken, "probe")))
    status, body, _ = cluster.call("POST", CONFIGMAPS, configmap(broken, "b"))
    assert (status, body["reason"]) == (403, "Forbidden")
    assert body["message"] == ('configmaps "b" is forbidden: expression \'object.data.missing == \'x\'\' resulted in '
                               "error: no such key: missing")


def test_a_service_reference_and_dry_run(cluster: Cluster) -> None:
    test = "service"
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hooks"},
               "spec": {"type": "ExternalName", "externalName": "localhost", "ports": [{"port": cluster.hooks.port}]}}
    assert cluster.call("POST", "/api/v1/namespaces/default/services", service)[0] == 201
    cluster.hooks.answers[test] = lambda r: {"allowed": r["name"] != "probe" and not r["dryRun"]}
    cluster.install("Validating", test, webhook(cluster, test, sideEffects="NoneOnDryRun", clientConfig={
        "service": {"namespace": "default", "name": "hooks", "port": cluster.hooks.port, "path": f"/{test}"},
        "caBundle": cluster.hooks.ca_bundle}))
    wait_until(refused(cluster, configmap(test, "probe")))
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "s"))[0] == 201
    assert cluster.hooks.seen[test][-1]["dryRun"] is False
    assert cluster.call("POST", CONFIGMAPS + "?dryRun=All", configmap(test, "d"))[0] == 400
    assert cluster.hooks.seen[test][-1]["dryRun"] is True


def test_webhooks_are_never_asked_about_their_own_configurations(cluster: Cluster) -> None:
    test = "exempt"
    unreachable = {"url": f"https://127.0.0.1:{free_port()}/x", "caBundle": cluster.hooks.ca_bundle}
    cluster.install("Validating", test, webhook(cluster, test, clientConfig=unreachable, objectSelector={}, rules=[
        {"apiGroups": ["admissionregistration.k8s.io"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}]))
    cluster.install("Validating", f"{test}-other", webhook(cluster, f"{test}-other"))
    assert cluster.call("DELETE", f"{VALIDATING}/{test}-other")[0] == 200
    assert cluster.call("DELETE", f"{VALIDATING}/{test}")[0] == 200


def test_a_connect_goes_to_the_webhooks_with_its_options(cluster: Cluster) -> None:
    test = "connect"
    cluster.hooks.answers[test] = lambda r: {"allowed": False, "status": {"message": "no exec here", "code": 403}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "quiet"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert cluster.call("POST", "/api/v1/namespaces/default/pods", pod)[0] == 201
    cluster.install("Validating", test, webhook(cluster, test, objectSelector={}, rules=[
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CONNECT"], "resources": ["pods/exec"]}]))

    def denied() -> bool:
        done = cluster.kubectl.run("exec", "quiet", "-c", "c", "--", "ls", "-l", check=False)
        return 'admission webhook "connect.example.com" denied the request: no exec here' in done.stderr
    wait_until(denied)
    review = cluster.hooks.seen[test][-1]
    assert (review["operation"], review["subResource"], review["name"]) == ("CONNECT", "exec", "quiet")
    assert review["kind"] == {"group": "", "version": "v1", "kind": "PodExecOptions"}
    assert review["object"]["command"] == ["ls", "-l"] and review["object"]["container"] == "c"
    assert review["object"]["stdout"] is True


def test_a_scale_is_sent_as_autoscaling_v1_scale_and_its_patch_scales_the_parent(cluster: Cluster) -> None:
    test = "scale"
    cluster.hooks.answers[test] = lambda r: patch({"op": "replace", "path": "/spec/replicas", "value": 3}) \
        if r["object"]["spec"]["replicas"] > 3 else {"allowed": True}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "scaled"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "scaled"}},
                           "template": {"metadata": {"labels": {"app": "scaled"}},
                                        "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    assert cluster.call("POST", "/apis/apps/v1/namespaces/default/deployments", deployment)[0] == 201
    cluster.install("Mutating", test, webhook(cluster, test, objectSelector={}, rules=[
        {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["deployments/scale"]}]))
    scale = "/apis/apps/v1/namespaces/default/deployments/scaled/scale"
    wait_until(lambda: cluster.call("PUT", scale + "?dryRun=All", {
        "apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "scaled", "namespace": "default"},
        "spec": {"replicas": 9}})[1].get("spec", {}).get("replicas") == 3)

    cluster.kubectl.run("scale", "deployment", "scaled", "--replicas=10")
    _, got, _ = cluster.call("GET", "/apis/apps/v1/namespaces/default/deployments/scaled")
    assert got["spec"]["replicas"] == 3
    review = cluster.hooks.seen[test][-1]
    assert (review["kind"], review["subResource"]) == ({"group": "autoscaling", "version": "v1", "kind": "Scale"}, "scale")
    assert review["resource"] == {"group": "apps", "version": "v1", "resource": "deployments"}
    assert (review["object"]["spec"]["replicas"], review["oldObject"]["spec"]["replicas"]) == (10, 1)
