"""Bad input always gets a metav1.Status with the right code and reason, and nothing is stored."""

from __future__ import annotations

import json

import pytest

from tests.builders import DEPLOYMENTS, deployment


@pytest.fixture
async def nothing_stored(api):
    """Asserts after the test that no Deployment exists."""
    yield
    listed = await api.get(DEPLOYMENTS)
    assert listed.body["items"] == [], listed


def assert_status(reply, code: int, reason: str) -> None:
    assert reply.status == code, reply
    body = reply.body
    assert body["kind"] == "Status" and body["apiVersion"] == "v1" and body["status"] == "Failure", body
    assert body["code"] == code and body["reason"] == reason and body["message"], body


async def test_malformed_json(api, nothing_stored):
    reply = await api.post(DEPLOYMENTS, raw=b'{"apiVersion": "apps/v1", "kind": ')
    assert_status(reply, 400, "BadRequest")


async def test_malformed_yaml(api, nothing_stored):
    reply = await api.post(DEPLOYMENTS, raw=b"kind: Deployment\n  bad: [indent", content_type="application/yaml")
    assert_status(reply, 400, "BadRequest")


async def test_yaml_body_is_accepted(api):
    import yaml

    reply = await api.post(DEPLOYMENTS, raw=yaml.safe_dump(deployment()).encode(), content_type="application/yaml")
    assert reply.status == 201


async def test_missing_content_type_is_json(api):
    reply = await api.post(DEPLOYMENTS, raw=json.dumps(deployment()).encode(), content_type=None)
    assert reply.status == 201, reply


async def test_body_that_is_not_an_object(api, nothing_stored):
    assert_status(await api.post(DEPLOYMENTS, [1, 2]), 400, "BadRequest")
    assert_status(await api.post(DEPLOYMENTS, raw=b""), 400, "BadRequest")
    assert_status(await api.post(DEPLOYMENTS, {"metadata": "x"}), 400, "BadRequest")


async def test_unsupported_content_type(api, nothing_stored):
    reply = await api.post(DEPLOYMENTS, raw=b"<xml/>", content_type="application/xml")
    assert_status(reply, 415, "UnsupportedMediaType")
    no_table = await api.post("/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", raw=b"k8s\x00",
                              content_type="application/vnd.kubernetes.protobuf")
    assert_status(no_table, 415, "UnsupportedMediaType")  # the sample API is JSON only, as sample-apiserver 1.32
    empty = await api.post("/apis/apps/v1/namespaces/default/replicasets", raw=b"k8s\x00", content_type="application/vnd.kubernetes.protobuf")
    assert_status(empty, 400, "BadRequest")
    garbled = await api.post(DEPLOYMENTS, raw=b"\x00k8s", content_type="application/vnd.kubernetes.protobuf")
    assert_status(garbled, 400, "BadRequest")


async def test_wrong_api_version_or_kind_for_the_url(api, nothing_stored):
    wrong_version = deployment(version="apps/v1beta2")
    reply = await api.post(DEPLOYMENTS, wrong_version)
    assert_status(reply, 400, "BadRequest")
    assert "apps/v1beta2" in reply.body["message"]
    wrong_kind = deployment() | {"kind": "ReplicaSet"}
    assert_status(await api.post(DEPLOYMENTS, wrong_kind), 400, "BadRequest")


async def test_unknown_fields_per_field_validation(api, nothing_stored):
    body = deployment()
    body["spec"]["replicaz"] = 3
    body["spec"]["template"]["spec"]["containers"][0]["imagge"] = "x"
    strict = await api.post(DEPLOYMENTS, body, params={"fieldValidation": "Strict"})  # what kubectl sends
    assert_status(strict, 400, "BadRequest")
    assert strict.body["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.template.spec.containers[0].imagge", unknown field "spec.replicaz"')  # document order
    bad_mode = await api.post(DEPLOYMENTS, body, params={"fieldValidation": "Loose"})
    assert_status(bad_mode, 422, "Invalid")  # ValidateCreateOptions (tests/test_write_options.py)


async def test_unknown_fields_warn_and_ignore(api):
    body = deployment()
    body["spec"]["replicaz"] = 3
    warned = await api.post(DEPLOYMENTS, body)  # no fieldValidation: Warn, as kube-apiserver
    assert warned.status == 201
    assert warned.headers.getall("Warning") == ['299 - "unknown field \\"spec.replicaz\\""']
    assert "replicaz" not in warned.body["spec"]
    body["metadata"]["name"] = "quiet"
    body["spec"]["selector"]["matchLabels"]["app"] = "quiet"
    body["spec"]["template"]["metadata"]["labels"]["app"] = "quiet"
    ignored = await api.post(DEPLOYMENTS, body, params={"fieldValidation": "Ignore"})
    assert ignored.status == 201 and "Warning" not in ignored.headers


async def test_wrong_field_types(api, nothing_stored):
    body = deployment()
    body["spec"]["replicas"] = "3"
    reply = await api.post(DEPLOYMENTS, body)
    assert_status(reply, 400, "BadRequest")
    assert reply.body["details"]["causes"][0]["field"] == "spec.replicas"
    body = deployment()
    body["spec"]["paused"] = "yes"
    assert_status(await api.post(DEPLOYMENTS, body), 400, "BadRequest")
    body = deployment()
    body["metadata"]["creationTimestamp"] = "yesterday"
    assert_status(await api.post(DEPLOYMENTS, body), 400, "BadRequest")


async def test_invalid_name(api, nothing_stored):
    reply = await api.post(DEPLOYMENTS, deployment(name="-bad-"))
    assert_status(reply, 422, "Invalid")
    cause = next(c for c in reply.body["details"]["causes"] if c["field"] == "metadata.name")
    assert cause["reason"] == "FieldValueInvalid"
    assert "RFC 1123 subdomain" in cause["message"]


async def test_missing_name(api, nothing_stored):
    body = deployment()
    del body["metadata"]["name"]
    reply = await api.post(DEPLOYMENTS, body)
    assert_status(reply, 422, "Invalid")
    assert reply.body["details"]["causes"][0]["message"] == "Required value: name or generateName is required"


async def test_body_over_3_mib(api, nothing_stored):
    body = deployment()
    body["metadata"]["annotations"] = {"big": "x" * (3 * 1024 * 1024)}
    reply = await api.post(DEPLOYMENTS, body)
    assert_status(reply, 413, "RequestEntityTooLarge")


async def test_namespace_mismatch_between_url_and_body(api, nothing_stored):
    body = deployment()
    body["metadata"]["namespace"] = "kube-system"
    reply = await api.post(DEPLOYMENTS, body)
    assert_status(reply, 400, "BadRequest")
    assert reply.body["message"] == "the namespace of the provided object does not match the namespace sent on the request"


async def test_name_mismatch_between_url_and_body(api):
    await api.post(DEPLOYMENTS, deployment())
    reply = await api.put(f"{DEPLOYMENTS}/web", deployment(name="other"))
    assert_status(reply, 400, "BadRequest")


async def test_resource_version_on_create(api, nothing_stored):
    body = deployment()
    body["metadata"]["resourceVersion"] = "5"
    assert_status(await api.post(DEPLOYMENTS, body), 400, "BadRequest")


async def test_unknown_resources_and_methods(api):
    assert_status(await api.get("/apis/apps/v1/namespaces/default/widgets"), 404, "NotFound")
    assert_status(await api.get("/apis/nope/v1/things"), 404, "NotFound")
    assert_status(await api.get("/apis/apps/v9/namespaces/default/deployments"), 404, "NotFound")
    assert_status(await api.get("/api/v1/namespaces/default/namespaces"), 404, "NotFound")  # cluster-scoped
    assert_status(await api.post("/apis/apps/v1/deployments", deployment()), 405, "MethodNotAllowed")
    assert_status(await api.delete(f"{DEPLOYMENTS}/web/status"), 405, "MethodNotAllowed")
    assert_status(await api.get(f"{DEPLOYMENTS}/web/nonsense"), 404, "NotFound")


async def test_unsupported_patch_type(api):
    await api.post(DEPLOYMENTS, deployment())
    reply = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {}}, content_type="text/plain")
    assert_status(reply, 415, "UnsupportedMediaType")


async def test_invalid_query_values(api):
    assert_status(await api.get(DEPLOYMENTS, params={"limit": "many"}), 400, "BadRequest")
    assert_status(await api.get(DEPLOYMENTS, params={"watch": "perhaps"}), 400, "BadRequest")
    assert_status(await api.get(DEPLOYMENTS, params={"watch": "1", "timeoutSeconds": "soon"}), 400, "BadRequest")


async def test_unknown_field_names_with_control_characters_become_safe_warnings(api):
    """A field name may hold any character; the Warning header quoting it holds no control
    characters (aiohttp would refuse to send them: that was a 500), quotes and backslashes escaped."""
    reply = await api.post("/api/v1/namespaces/default/configmaps",
                           raw=b'{"metadata": {"name": "ctl"}, "\\u001f\\r\\nX-Injected: 1": "", "a\\\\\\"b": 1}')
    assert reply.status == 201, reply
    assert "X-Injected" not in reply.headers
    assert reply.headers.getall("Warning") == ['299 - "unknown field \\"   X-Injected: 1\\""',
                                               '299 - "unknown field \\"a\\\\\\"b\\""']
    patched = await api.patch("/api/v1/namespaces/default/configmaps/ctl", None, raw=b'{"\\u001f": ""}',
                              content_type="application/merge-patch+json")
    assert patched.status == 200 and patched.headers.getall("Warning") == ['299 - "unknown field \\" \\""']
