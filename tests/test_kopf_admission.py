"""kopf's admission webhooks (``@kopf.on.validate`` / ``@kopf.on.mutate``, kopf's own webhook
server, its self-managed configurations) against the `kplane` fixture."""

from __future__ import annotations

import base64
import json
import ssl
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kplane.core.pki.certificates import SubjectAltNames, issue, new_ca
from kplane.core.pytest_plugin import Cluster
from tests.test_webhook_framework import once_registered, refusal, stamped

kopf = pytest.importorskip("kopf")
kopf_testing = pytest.importorskip("kopf.testing")

OPERATOR = '''
import os
import kopf

@kopf.on.startup()
def configure(settings, **_):
    settings.admission.server = kopf.WebhookServer(
        addr="127.0.0.1", host="127.0.0.1", certfile=os.environ["HOOK_CERT"], pkeyfile=os.environ["HOOK_KEY"],
        cadata=open(os.environ["HOOK_CA"], "rb").read())
    settings.admission.managed = "auto.kopf.dev"

@kopf.on.login()
def login(**kwargs):
    return kopf.login_with_kubeconfig(**kwargs)

@kopf.on.validate("configmaps", id="no-tea")
def no_tea(body, warnings, **_):
    if "tea" in (body.get("data") or {}):
        raise kopf.AdmissionError("no tea here", code=418)
    warnings.append("checked by kopf")

@kopf.on.mutate("configmaps", id="stamp")
def stamp(patch, **_):
    patch.metadata.setdefault("labels", {})["stamped-by"] = "kopf"
'''

CONFIGS = "admissionregistration.k8s.io/v1"


@pytest.fixture
def operator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kplane: Cluster) -> Iterator[Path]:
    """The operator's file, its serving certificate (from a throwaway CA) in the environment.
    ``kopf run`` in-process registers the file's handlers in kopf's default registry: a registry
    of the test's own keeps them from the process's other kopf operators (test_kopf_crd.py)."""
    ca = new_ca("kopf-test-ca")
    leaf = issue(ca, "kopf-webhooks", sans=SubjectAltNames.parse(["127.0.0.1"]), server=True)
    for name, data in (("HOOK_CERT", leaf.cert_pem()), ("HOOK_KEY", leaf.key_pem()), ("HOOK_CA", ca.cert_pem())):
        (tmp_path / name).write_bytes(data)
        monkeypatch.setenv(name, str(tmp_path / name))
    monkeypatch.setenv("KUBECONFIG", str(kplane.kubeconfig))
    (tmp_path / "operator.py").write_text(OPERATOR)
    before = kopf.get_default_registry()
    kopf.set_default_registry(kopf.OperatorRegistry())
    try:
        yield tmp_path / "operator.py"
    finally:
        kopf.set_default_registry(before)


def managed(kplane: Cluster, kind: str) -> list[dict[str, Any]]:
    return (kplane.get(CONFIGS, kind, "auto.kopf.dev") or {}).get("webhooks") or []


def post(url: str, ca_file: str, review: dict[str, Any]) -> dict[str, Any]:
    ctx = ssl.create_default_context(cafile=ca_file)
    request = urllib.request.Request(url, data=json.dumps(review).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, context=ctx, timeout=10) as reply:
        return json.loads(reply.read())["response"]


@pytest.mark.kplane(secure=True)  # kopf logs in with the kubeconfig's client certificate
def test_kopf_manages_its_webhook_configurations_on_kplane(kplane: Cluster, operator: Path) -> None:
    with kopf_testing.KopfRunner(["run", "--standalone", "--namespace=default", str(operator)], timeout=60) as runner:
        validating = kplane.wait_for(CONFIGS, "ValidatingWebhookConfiguration", "auto.kopf.dev",
                                     until=lambda o: bool(o.get("webhooks")))["webhooks"]
        mutating = kplane.wait_for(CONFIGS, "MutatingWebhookConfiguration", "auto.kopf.dev",
                                   until=lambda o: bool(o.get("webhooks")))["webhooks"]
        assert [w["name"] for w in validating] == ["no-tea.auto.kopf.dev"]
        hook = validating[0]
        assert hook["rules"][0]["resources"] == ["configmaps"] and hook["rules"][0]["apiGroups"] == [""]
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == Path(operator.parent / "HOOK_CA").read_bytes()
        ca = str(operator.parent / "HOOK_CA")
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                  "request": {"uid": "u1", "operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                              "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                              "userInfo": {"username": "admin"}, "namespace": "default", "name": "pot",
                              "object": {"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": "pot", "namespace": "default"}, "data": {"tea": "1"}}}}
        denied = post(hook["clientConfig"]["url"], ca, review)
        assert denied["allowed"] is False and denied["status"] == {"code": 418, "message": "no tea here"}
        patched = post(mutating[0]["clientConfig"]["url"], ca, review)
        assert patched["allowed"] is True and patched["patchType"] == "JSONPatch"

        configmaps = kplane.path("v1", "ConfigMap")
        tea = review["request"]["object"]
        err = once_registered(refusal(lambda: kplane.request("POST", configmaps, tea, params={"dryRun": "All"})))
        assert err.code == 418 and err.status["message"] == \
            'admission webhook "no-tea.auto.kopf.dev" denied the request: no tea here'
        made = once_registered(lambda: stamped(kplane, {"apiVersion": "v1", "kind": "ConfigMap",
                                                        "metadata": {"name": "plain"}}, "stamped-by"))
        assert made["metadata"]["labels"] == {"stamped-by": "kopf"}
    assert runner.exception is None and runner.exit_code == 0, runner.output
    assert managed(kplane, "ValidatingWebhookConfiguration") == []  # kopf removes its webhooks at exit
    assert managed(kplane, "MutatingWebhookConfiguration") == []
