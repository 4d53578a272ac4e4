"""kplane.webhooks: handlers answering real AdmissionReview POSTs over HTTPS (its own CA), and
the configurations it registers on (and removes from) a real kplane server."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kplane.core.patching.jsonpatch import apply_json_patch
from kplane.core.pytest_plugin import Cluster, KplaneError
from kplane.webhooks import Review, WebhookServer, deny, json_patch, kplane_ca, mutating, validating

T = TypeVar("T")

DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
              "spec": {"selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "web", "image": "nginx:latest"}]}}}}


@validating("apps/v1", "deployments")
def no_latest(review: Review) -> str | None:
    containers = review.object["spec"]["template"]["spec"]["containers"]
    if any(c["image"].endswith(":latest") for c in containers):
        return "the :latest tag is not allowed"
    review.warn("pinned images: good")
    review.audit_annotations["checked"] = "yes"
    return None


@validating("v1", "configmaps", operations=("CREATE",), failurePolicy="Ignore", timeoutSeconds=3)
async def teapot(review: Review) -> Any:
    await asyncio.sleep(0)
    if review.object.get("data", {}).get("tea"):
        return deny("short and stout", code=418, reason="Teapot", warnings=["steam"])
    return True


@mutating("v1", "configmaps", reinvocationPolicy="IfNeeded")
def stamp(review: Review) -> dict[str, Any]:
    obj = review.object
    obj.setdefault("metadata", {}).setdefault("labels", {})["stamped"] = "yes"
    obj["data"].pop("drop", None)
    return obj


@validating("v1", "secrets", name="broken.example.com")
def broken(review: Review) -> None:
    raise RuntimeError("a bug in the handler")


HOOKS = WebhookServer(no_latest, teapot, stamp, broken, name="framework-test")


@pytest.fixture(scope="module")
def served() -> Iterator[WebhookServer]:
    with HOOKS.serving() as server:
        yield server


def post(server: WebhookServer, path: str, body: bytes) -> tuple[int, Any]:
    ctx = ssl.create_default_context(cadata=server.ca_bundle.decode())  # verifies the certificate for 127.0.0.1
    request = urllib.request.Request(server.url + path, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, context=ctx, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def review(obj: dict[str, Any], operation: str = "CREATE", uid: str = "u-1") -> bytes:
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "operation": operation, "object": obj, "name": obj["metadata"]["name"],
                                   "namespace": "default"}}).encode()


def test_a_validating_handler_denies_with_its_message_and_allows_with_warnings(served: WebhookServer) -> None:
    code, body = post(served, no_latest.path, review(DEPLOYMENT, uid="abc"))
    assert code == 200 and body["kind"] == "AdmissionReview" and body["apiVersion"] == "admission.k8s.io/v1"
    assert body["response"] == {"uid": "abc", "allowed": False,
                                "status": {"status": "Failure", "code": 403, "message": "the :latest tag is not allowed"}}
    pinned = json.loads(json.dumps(DEPLOYMENT))
    pinned["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
    code, body = post(served, no_latest.path, review(pinned))
    assert body["response"] == {"uid": "u-1", "allowed": True, "warnings": ["pinned images: good"],
                                "auditAnnotations": {"checked": "yes"}}


def test_an_async_handler_denies_with_a_code_and_reason(served: WebhookServer) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "pot"}, "data": {"tea": "earl grey"}}
    _, body = post(served, teapot.path, review(cm))
    assert body["response"]["status"] == {"status": "Failure", "code": 418, "reason": "Teapot", "message": "short and stout"}
    assert body["response"]["warnings"] == ["steam"]


def test_a_mutating_handler_answers_the_json_patch_of_its_changes(served: WebhookServer) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"}, "data": {"keep": "1", "drop": "2"}}
    _, body = post(served, stamp.path, review(cm))
    response = body["response"]
    assert response["allowed"] is True and response["patchType"] == "JSONPatch"
    patched = apply_json_patch(cm, json.loads(base64.b64decode(response["patch"])))
    assert patched == {**cm, "metadata": {"name": "m", "labels": {"stamped": "yes"}}, "data": {"keep": "1"}}
    again = post(served, stamp.path, review(patched))[1]["response"]  # nothing left to change: no patch
    assert again == {"uid": "u-1", "allowed": True}


def test_json_patch_escapes_keys_and_replaces_what_changes_shape() -> None:
    old = {"metadata": {"annotations": {"a/b": "1", "t~x": "2"}}, "list": [1, 2], "n": 1}
    new = {"metadata": {"annotations": {"a/b": "9"}}, "list": [1, 2, 3], "n": "1"}
    patch = json_patch(old, new)
    assert {"op": "replace", "path": "/metadata/annotations/a~1b", "value": "9"} in patch
    assert {"op": "remove", "path": "/metadata/annotations/t~0x"} in patch
    assert apply_json_patch(old, patch) == new


def test_bad_requests_are_refused_and_a_failing_handler_is_a_500(served: WebhookServer) -> None:
    assert post(served, no_latest.path, b"not json")[0] == 400
    assert post(served, no_latest.path, json.dumps({"kind": "AdmissionReview"}).encode())[0] == 400
    assert post(served, no_latest.path, b" " * (4 * 1024 * 1024))[0] == 413
    code, text = post(served, broken.path, review({"metadata": {"name": "s"}}))
    assert code == 500 and "Traceback" not in text and "broken.example.com" in text
    assert post(served, "/validate/unknown.example.com", review(DEPLOYMENT))[0] == 404


def test_the_configurations_name_the_handlers_rules_and_the_ca() -> None:
    mutating_config, validating_config = HOOKS.configurations()
    assert mutating_config["kind"] == "MutatingWebhookConfiguration"
    assert [w["name"] for w in validating_config["webhooks"]] == [
        "no-latest.webhooks.kplane.io", "teapot.webhooks.kplane.io", "broken.example.com"]
    tea = validating_config["webhooks"][1]
    assert tea["rules"] == [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                             "operations": ["CREATE"], "scope": "*"}]
    assert tea["failurePolicy"] == "Ignore" and tea["timeoutSeconds"] == 3 and tea["sideEffects"] == "None"
    assert base64.b64decode(tea["clientConfig"]["caBundle"]) == HOOKS.ca_bundle
    assert mutating_config["webhooks"][0]["reinvocationPolicy"] == "IfNeeded"
    with pytest.raises(ValueError, match="at least three segments"):
        validating("v1", "pods", name="short.name")(lambda review: None)


@pytest.mark.kplane(secure=True)  # a data dir with kplane's CA, which signs the webhook server's certificate
def test_serving_registers_the_configurations_and_removes_them_at_exit(kplane: Cluster) -> None:
    hooks = WebhookServer(no_latest, stamp, name="registered", ca=kplane_ca(kplane.server.config.data_dir))
    with hooks.serving(kplane):
        validating_config = kplane.get("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "registered")
        webhook = validating_config["webhooks"][0]
        assert base64.b64decode(webhook["clientConfig"]["caBundle"]) == \
            (kplane.server.config.data_dir / "pki" / "ca.crt").read_bytes()
        assert webhook["clientConfig"]["url"] == f"{hooks.url}/validate/no-latest.webhooks.kplane.io"
        assert webhook["matchPolicy"] == "Equivalent"  # the server's defaults
        assert kplane.get("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "registered")
        with WebhookServer(no_latest, name="registered").serving(kplane):  # a second registration replaces it
            pass
    assert kplane.get("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "registered") is None
    assert kplane.get("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "registered") is None


# -- through the API server: its webhook calls reach the handlers ------------------------------------
def once_registered(attempt: Callable[[], T | None]) -> T:
    """The server's informers see a new configuration a moment after it is made: repeat an
    idempotent attempt (a dry run) until it shows the webhook's effect (returns a value)."""
    deadline = time.monotonic() + 30
    while (result := attempt()) is None:
        if time.monotonic() > deadline:
            raise AssertionError("the webhook never took effect")
        time.sleep(0.02)
    return result


def refusal(call: Callable[[], Any]) -> Callable[[], KplaneError | None]:
    """An attempt for :func:`once_registered`: the error the call raises, None while it passes."""
    def attempt() -> KplaneError | None:
        try:
            call()
        except KplaneError as err:
            return err
        return None
    return attempt


def stamped(kplane: Cluster, configmap: dict[str, Any], label: str) -> dict[str, Any] | None:
    """A dry-run create of ``configmap``, once it comes back with ``label``."""
    made = kplane.request("POST", kplane.path("v1", "ConfigMap"), configmap, params={"dryRun": "All"})
    return made if label in (made["metadata"].get("labels") or {}) else None


def test_the_api_server_calls_the_handlers(kplane: Cluster, tmp_path: Path) -> None:
    deployments = kplane.path("apps/v1", "Deployment")

    def create_latest() -> None:
        kplane.request("POST", deployments, DEPLOYMENT, params={"dryRun": "All"})

    with WebhookServer(no_latest, stamp, broken, name="end-to-end").serving(kplane):
        err = once_registered(refusal(create_latest))
        assert err.code == 403 and err.status["message"] == \
            'admission webhook "no-latest.webhooks.kplane.io" denied the request: the :latest tag is not allowed'
        secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
        err = once_registered(refusal(lambda: kplane.request("POST", kplane.path("v1", "Secret"), secret,
                                                             params={"dryRun": "All"})))
        assert err.code == 500 and err.status["message"] == (  # failurePolicy Fail, in kube's words
            'Internal error occurred: failed calling webhook "broken.example.com": failed to call webhook: '
            "the server responded with the status code 500 but did not return more information")
        made = once_registered(lambda: stamped(kplane, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m"},
                                                       "data": {"drop": "x", "k": "v"}}, "stamped"))
        assert made["metadata"]["labels"] == {"stamped": "yes"} and made["data"] == {"k": "v"}
        env = {**os.environ, "KUBECONFIG": str(kplane.kubeconfig)}
        (tmp_path / "web.yaml").write_text(json.dumps(DEPLOYMENT))
        done = subprocess.run(["kubectl", "apply", "-f", str(tmp_path / "web.yaml")], capture_output=True, text=True,
                              env=env, timeout=30)
        assert done.returncode == 1 and 'admission webhook "no-latest.webhooks.kplane.io" denied the request: ' \
            "the :latest tag is not allowed" in done.stderr
        pinned = json.loads(json.dumps(DEPLOYMENT))
        pinned["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
        (tmp_path / "web.yaml").write_text(json.dumps(pinned))
        done = subprocess.run(["kubectl", "apply", "--dry-run=server", "-f", str(tmp_path / "web.yaml")],
                              capture_output=True, text=True, env=env, timeout=30)
        assert done.returncode == 0 and "Warning: pinned images: good" in done.stderr, done.stderr
