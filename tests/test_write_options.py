"""CreateOptions, UpdateOptions and PatchOptions validated as kube-apiserver validates them
(``ValidateCreateOptions``/``ValidateUpdateOptions``/``ValidatePatchOptions``): for every write of
every resource and subresource, bad options are one 422 Invalid ``<kind>.meta.k8s.io`` and
nothing is written."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import DEPLOYMENTS, UNSCHEDULED, deployment

PODS = "/api/v1/namespaces/default/pods"
MERGE = "application/merge-patch+json"
APPLY = "application/apply-patch+yaml"
TOO_LONG = "m" * 129

# (query, the message after '<kind>.meta.k8s.io "" is invalid: ', the causes' reasons and fields)
BAD_OPTIONS: list[tuple[list[tuple[str, str]], str, list[tuple[str, str]]]] = [
    ([("fieldManager", TOO_LONG)], "fieldManager: Too long: may not be more than 128 bytes",
     [("FieldValueTooLong", "fieldManager")]),
    ([("fieldManager", "ed\titor")], 'fieldManager: Invalid value: "ed\\titor": invalid character U+0009 (at position 2)',
     [("FieldValueInvalid", "fieldManager")]),
    ([("fieldManager", "é\u200bx")], 'fieldManager: Invalid value: "é\u200bx": invalid character U+200B (at position 2)',
     [("FieldValueInvalid", "fieldManager")]),  # a byte offset, as Go ranges a string
    ([("dryRun", "Some")], 'dryRun: Unsupported value: ["Some"]: supported values: "All"', [("FieldValueNotSupported", "dryRun")]),
    ([("dryRun", "All"), ("dryRun", "")], 'dryRun: Unsupported value: ["All",""]: supported values: "All"',
     [("FieldValueNotSupported", "dryRun")]),
    ([("fieldValidation", "Loose")],
     'fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"',
     [("FieldValueNotSupported", "fieldValidation")]),
    ([("fieldValidation", "strict")],  # exact values only, as Go's set
     'fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"',
     [("FieldValueNotSupported", "fieldValidation")]),
    ([("fieldManager", TOO_LONG + "\n"), ("dryRun", "x")],
     f'[fieldManager: Too long: may not be more than 128 bytes, fieldManager: Invalid value: "{TOO_LONG}\\n": '
     'invalid character U+000A (at position 129), dryRun: Unsupported value: ["x"]: supported values: "All"]',
     [("FieldValueTooLong", "fieldManager"), ("FieldValueInvalid", "fieldManager"), ("FieldValueNotSupported", "dryRun")]),
]


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": UNSCHEDULED, "containers": [{"name": "main", "image": "nginx:1.25"}]}}


def binding(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node", "name": "node-a"}}


def scale(replicas: int) -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas}}


# Every kind of write: (kind of options, method, path, body, content type)
WRITES: list[tuple[str, str, str, Any, str]] = [
    ("CreateOptions", "POST", DEPLOYMENTS, deployment("other"), "application/json"),
    ("UpdateOptions", "PUT", f"{DEPLOYMENTS}/web", deployment(replicas=5), "application/json"),
    ("PatchOptions", "PATCH", f"{DEPLOYMENTS}/web", {"spec": {"replicas": 5}}, MERGE),
    ("PatchOptions", "PATCH", f"{DEPLOYMENTS}/web", deployment(replicas=5), APPLY),
    ("UpdateOptions", "PUT", f"{DEPLOYMENTS}/web/status", {**deployment(), "status": {"replicas": 5}}, "application/json"),
    ("PatchOptions", "PATCH", f"{DEPLOYMENTS}/web/status", {"status": {"replicas": 5}}, MERGE),
    ("UpdateOptions", "PUT", f"{DEPLOYMENTS}/web/scale", scale(5), "application/json"),
    ("PatchOptions", "PATCH", f"{DEPLOYMENTS}/web/scale", {"spec": {"replicas": 5}}, MERGE),
    ("CreateOptions", "POST", f"{PODS}/lonely/binding", binding("lonely"), "application/json"),
]


async def _state(api) -> list[tuple[str, str, str]]:
    """Every object the writes could touch, by name, resourceVersion and node."""
    deployments = (await api.get(DEPLOYMENTS)).body["items"]
    pods = (await api.get(PODS)).body["items"]
    return [(o["metadata"]["name"], o["metadata"]["resourceVersion"], (o["spec"].get("nodeName") or "")) for o in deployments + pods]


@pytest.fixture
async def objects(api):
    assert (await api.post(DEPLOYMENTS, deployment())).status == 201
    assert (await api.post(PODS, pod("lonely"))).status == 201
    return await _state(api)


@pytest.mark.parametrize(("kind", "method", "path", "body", "content_type"), WRITES,
                         ids=["create", "update", "merge-patch", "apply", "update-status", "patch-status",
                              "update-scale", "patch-scale", "binding"])
async def test_bad_options_are_invalid_and_write_nothing(api, objects, kind, method, path, body, content_type) -> None:
    for query, message, causes in BAD_OPTIONS:
        params = [*query, ("fieldManager", "tester")] if content_type == APPLY and query[0][0] != "fieldManager" else query
        reply = await api.request(method, path, body, content_type=content_type, params=params)
        assert reply.status == 422, (query, reply)
        status = reply.body
        assert (status["reason"], status["details"]["kind"], status["details"]["group"]) == ("Invalid", kind, "meta.k8s.io")
        assert "name" not in status["details"]
        assert status["message"] == f'{kind}.meta.k8s.io "" is invalid: {message}', query
        assert [(c["reason"], c["field"]) for c in status["details"]["causes"]] == causes
    assert await _state(api) == objects


async def test_patch_rules(api, objects) -> None:
    """Apply needs a fieldManager; force is for apply only, and force=false counts as given (Go's *bool)."""
    no_manager = await api.patch(f"{DEPLOYMENTS}/web", deployment(), content_type=APPLY)
    assert no_manager.status == 422
    assert no_manager.body["message"] == 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'
    for force in ("true", "false"):
        forced = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 5}}, params={"force": force})
        assert forced.status == 422
        assert forced.body["message"] == 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
    assert await _state(api) == objects


async def test_good_options_still_work(api, objects) -> None:
    """The edges that are allowed: 128 bytes, a space and non-ASCII letters; dryRun=All; each
    fieldValidation value; and reads ignore write options, as kube-apiserver's GET does."""
    manager = "ü" * 63 + "a "  # 128 bytes (65 characters)
    assert len(manager.encode()) == 128
    reply = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 3}}, params={"fieldManager": manager})
    assert reply.status == 200, reply
    assert manager in [m["manager"] for m in reply.body["metadata"]["managedFields"]]
    dry = await api.post(DEPLOYMENTS, deployment("dry"), params={"dryRun": "All", "fieldValidation": "Ignore"})
    assert dry.status == 201
    assert (await api.get(f"{DEPLOYMENTS}/dry")).status == 404
    for validation in ("Strict", "Warn", "Ignore", ""):
        assert (await api.put(f"{DEPLOYMENTS}/web/scale", scale(4), params={"fieldValidation": validation})).status == 200
    assert (await api.get(f"{DEPLOYMENTS}/web", params={"dryRun": "Some", "fieldManager": TOO_LONG})).status == 200
