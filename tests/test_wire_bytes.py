"""Response bodies byte for byte as kube-apiserver writes them.

kube-apiserver encodes with Go's ``json.Encoder``: struct fields in declaration order (a Status
has ``details`` before ``code``), empty ``omitempty`` fields left out, ``<``, ``>`` and ``&``
escaped as ``\\u003c``..., and a newline after every body. The expected bytes below are written
out by hand from the Go types (k8s.io/apimachinery/pkg/apis/meta/v1/types.go), not produced by
our code.
"""

from __future__ import annotations

import json

from tests.builders import deployment

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


async def _raw(api, method: str, path: str, body: object = None) -> tuple[int, bytes, str]:
    data = None if body is None else json.dumps(body).encode()
    async with api.session.request(method, path, data=data, headers={"Content-Type": "application/json"}) as resp:
        return resp.status, await resp.read(), resp.headers["Content-Type"]


async def test_a_404_status_is_kube_apiservers_bytes(api):
    status, body, content_type = await _raw(api, "GET", f"{CONFIGMAPS}/missing")
    assert (status, content_type) == (404, "application/json")
    assert body == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"configmaps \\"missing\\" not found","reason":"NotFound",'
        b'"details":{"name":"missing","kind":"configmaps"},"code":404}\n'
    )


async def test_a_422_status_has_details_with_group_and_causes_in_go_order(api):
    status, body, _ = await _raw(api, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment(replicas=-1))
    assert status == 422
    assert body == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"Deployment.apps \\"web\\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0",'
        b'"reason":"Invalid","details":{"name":"web","group":"apps","kind":"Deployment",'
        b'"causes":[{"reason":"FieldValueInvalid","message":"Invalid value: -1: must be greater than or equal to 0",'
        b'"field":"spec.replicas"}]},"code":422}\n'
    )


async def test_html_characters_are_escaped_as_go_escapes_them(api):
    status, body, _ = await _raw(api, "GET", f"{CONFIGMAPS}/a&b")
    assert status == 404
    assert b'"message":"configmaps \\"a\\u0026b\\" not found"' in body and b"&" not in body
    assert json.loads(body)["details"]["name"] == "a&b"  # the same text once decoded


async def test_a_success_status_lists_details_in_go_order(api):
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {}}
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    _, created, _ = await _raw(api, "POST", leases, lease)
    uid = json.loads(created)["metadata"]["uid"]
    status, body, _ = await _raw(api, "DELETE", f"{leases}/l")
    assert status == 200
    assert body == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success",'
        b'"details":{"name":"l","group":"coordination.k8s.io","kind":"leases","uid":"' + uid.encode() + b'"}}\n'
    )


async def test_every_json_body_ends_with_a_newline(api):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "<v>"}}
    status, created, _ = await _raw(api, "POST", CONFIGMAPS, cm)
    assert status == 201 and created.endswith(b"}\n") and b'"k":"\\u003cv\\u003e"' in created
    for path in (f"{CONFIGMAPS}/c", CONFIGMAPS, "/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1"):
        status, body, _ = await _raw(api, "GET", path)
        assert status == 200 and body.endswith(b"}\n") and body.count(b"\n") == 1, path
    async with api.session.get(CONFIGMAPS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}) as resp:
        table = await resp.read()
    assert table.startswith(b'{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{') and table.endswith(b"}\n")


async def test_watch_lines_are_one_event_each_with_its_newline(api):
    await _raw(api, "POST", CONFIGMAPS, {"metadata": {"name": "w"}, "data": {"a": "&"}})
    async with api.session.get(CONFIGMAPS, params={"watch": "1", "timeoutSeconds": "1"}) as resp:
        stream = await resp.read()
    lines = stream.split(b"\n")
    assert lines[-1] == b"" and lines[0].startswith(b'{"type":"ADDED","object":{')
    assert b'"a":"\\u0026"' in lines[0]


async def test_version_is_indented_as_kube_apiserver_writes_it(api):
    """``/version`` is written with ``json.MarshalIndent(info, "", "  ")`` and no newline."""
    async with api.session.get("/version") as reply:
        raw = await reply.read()
    info = json.loads(raw)
    assert list(info) == ["major", "minor", "gitVersion", "gitCommit", "gitTreeState", "buildDate", "goVersion",
                          "compiler", "platform"]
    assert raw == json.dumps(info, indent=2).encode()
