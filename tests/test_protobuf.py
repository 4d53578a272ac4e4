"""Protobuf request bodies: the wire reader, the tables, and the server accepting them.

Bodies are built with a tiny encoder written here, independent of the decoder, and checked
against bytes recorded from kubectl v1.32 where the exact bytes matter.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kplane.core.meta.protobuf import OBJECT_META
from kplane.core.registry import scale
from kplane.core.runtime.protobuf import MEDIA_TYPE, Field, Message, ProtobufError, decode_envelope, decode_message
from kplane.core.runtime.schema import Shape, shape_of
from kplane.plugins.apiregistration.v1.protobuf import API_SERVICE
from kplane.plugins.apiregistration.v1.schemas import APIServiceSchema
from kplane.plugins.apps.v1.protobuf import DEPLOYMENT, REPLICA_SET
from kplane.plugins.apps.v1.schemas import DeploymentSchema, ReplicaSetSchema
from kplane.plugins.coordination.v1.protobuf import LEASE
from kplane.plugins.coordination.v1.schemas import LeaseSchema
from kplane.plugins.core.v1 import schemas as core_schemas
from kplane.plugins.core.v1.protobuf import BINDING, CONTAINER, MESSAGES, POD_SECURITY_CONTEXT, POD_SPEC
from kplane.plugins.core.v1.services import ServiceSchema
from tests.builders import UNSCHEDULED

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"

# `kubectl create configmap cm1 --from-literal=a=b` (kubectl-wire.md §9, 56 bytes)
KUBECTL_CONFIGMAP = bytes.fromhex(
    "6b3873000a0f0a0276311209436f6e6669674d6170121d0a130a03636d3112001a0022002a0032003800420012060a01611201621a002200"
)
# `kubectl create deployment web --image=nginx:1.25 --replicas=2 --port=80`
KUBECTL_DEPLOYMENT = bytes.fromhex(
    "6b3873000a150a07617070732f7631120a4465706c6f796d656e7412bd010a1f0a0377656212001a0022002a003200380042005a0a0a0361"
    "70701203776562128b010802120c0a0a0a0361707012037765621a710a1c0a0012001a0022002a003200380042005a0a0a03617070120377"
    "6562125112330a056e67696e78120a6e67696e783a312e32352a00320a0a001000185022002a0042006a007200800100880100900100a201"
    "001a00320042004a0052005800600068008201008a01009a0100c2010022020a00280038001a0c0800100018002000280038001a002200"
)


# -- an independent minimal encoder -------------------------------------------------------------
def varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative numbers travel as 64-bit two's complement
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def f(number: int, value: int | bool | str | bytes) -> bytes:
    """One field: ints and bools as varints, str/bytes (and nested messages) length-delimited."""
    if isinstance(value, (bool, int)):
        return varint(number << 3) + varint(int(value))
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def msg(*fields: bytes) -> bytes:
    return b"".join(fields)


def entry(key: str, value: str | bytes) -> bytes:
    return msg(f(1, key), f(2, value))


def meta(name: str, *more: bytes) -> bytes:
    """ObjectMeta as gogo-protobuf writes it: every plain string, generation 0, zero Time."""
    return msg(f(1, name), *(f(n, "") for n in range(2, 7)), f(7, 0), f(8, b""), *more)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return b"k8s\x00" + msg(f(1, msg(f(1, api_version), f(2, kind))), f(2, raw), f(3, ""), f(4, ""))


def decode(body: bytes) -> dict[str, Any]:
    api_version, kind, raw = decode_envelope(body)
    return {"apiVersion": api_version, "kind": kind, **decode_message(raw, {**MESSAGES, "Deployment": DEPLOYMENT}[kind])}


# -- recorded kubectl bodies ---------------------------------------------------------------------
def test_encoder_reproduces_kubectls_configmap_bytes() -> None:
    body = envelope("v1", "ConfigMap", msg(f(1, meta("cm1")), f(2, entry("a", "b"))))
    assert len(body) == 56 and body == KUBECTL_CONFIGMAP
    assert decode(body) == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"}, "data": {"a": "b"}}


def test_kubectls_deployment() -> None:
    assert decode(KUBECTL_DEPLOYMENT) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}], "resources": {}}]},
            },
            "strategy": {},
        },
        "status": {},
    }


# -- the JSON rules -------------------------------------------------------------------------------
def test_maps_and_bytes() -> None:
    secret = msg(
        f(1, meta("s", f(11, entry("app", "x")), f(12, entry("note", "")))),
        f(2, entry("user", b"admin")),
        f(2, entry("blob", b"\x00\xff")),
        f(2, msg(f(1, "empty"))),  # a map entry without its value: the zero value
        f(4, entry("plain", "text")),
        f(3, "Opaque"),
    )
    assert decode(envelope("v1", "Secret", secret)) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "labels": {"app": "x"}, "annotations": {"note": ""}},
        "data": {"user": base64.b64encode(b"admin").decode(), "blob": "AP8=", "empty": ""},
        "stringData": {"plain": "text"},
        "type": "Opaque",
    }


def test_time_zero_is_left_out_and_other_times_are_rfc3339() -> None:
    assert decode_message(meta("a"), OBJECT_META) == {"name": "a"}
    assert decode_message(msg(f(8, msg(f(1, 0), f(2, 0)))), OBJECT_META) == {}
    stamped = msg(f(8, msg(f(1, 1700000000), f(2, 999))), f(9, msg(f(1, -1))))
    assert decode_message(stamped, OBJECT_META) == {
        "creationTimestamp": "2023-11-14T22:13:20Z",  # nanos dropped, as metav1.Time's JSON does
        "deletionTimestamp": "1969-12-31T23:59:59Z",
    }
    with pytest.raises(ProtobufError, match="out of range"):
        decode_message(msg(f(8, msg(f(1, 10**15)))), OBJECT_META)


def test_pointer_zero_values_are_kept_plain_ones_omitted() -> None:
    spec = msg(f(1, 0), f(5, 0), f(6, 0), f(7, False))
    deployment = decode_message(msg(f(2, spec)), DEPLOYMENT)
    assert deployment == {"spec": {"replicas": 0, "revisionHistoryLimit": 0}}
    configmap = decode_message(msg(f(4, False)), MESSAGES["ConfigMap"])
    assert configmap == {"immutable": False}


def test_int_or_string_quantity_and_signed_varints() -> None:
    rolling = msg(f(1, msg(f(1, 0), f(2, 1))), f(2, msg(f(1, 1), f(3, "25%"))))
    spec = msg(f(4, msg(f(1, "RollingUpdate"), f(2, rolling))), f(5, -3))
    container = msg(f(1, "c"), f(8, msg(f(1, entry("cpu", msg(f(1, "500m")))), f(2, entry("memory", msg(f(1, "1Gi")))))))
    pod = msg(f(2, container), f(4, -1), f(25, -2147483648))
    template = msg(f(2, pod))
    decoded = decode_message(msg(f(2, msg(spec, f(3, template)))), DEPLOYMENT)["spec"]
    assert decoded["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"}}
    assert decoded["minReadySeconds"] == -3
    assert decoded["template"]["spec"] == {
        "containers": [{"name": "c", "resources": {"limits": {"cpu": "500m"}, "requests": {"memory": "1Gi"}}}],
        "terminationGracePeriodSeconds": -1,
        "priority": -2147483648,
    }
    empty_int_or_string = msg(f(4, msg(f(2, msg(f(1, b""))))))  # strategy.rollingUpdate.maxUnavailable {}
    assert decode_message(msg(f(2, empty_int_or_string)), DEPLOYMENT)["spec"]["strategy"] == {"rollingUpdate": {"maxUnavailable": 0}}


def test_inline_embedded_references_and_env() -> None:
    env = msg(f(1, "PASSWORD"), f(3, msg(f(4, msg(f(1, msg(f(1, "db"))), f(2, "pw"), f(3, True))))))
    env_from = msg(f(1, "CFG_"), f(2, msg(f(1, msg(f(1, "settings"))))))
    container = decode_message(msg(f(1, "app"), f(7, env), f(19, env_from), f(15, b"")), CONTAINER)
    assert container == {
        "name": "app",
        "env": [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw", "optional": True}}}],
        "envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "settings"}}],
        "securityContext": {},
    }


def test_repeated_varints_packed_or_not() -> None:
    packed = f(4, varint(1) + varint(2))
    assert decode_message(msg(f(4, 5), packed), POD_SECURITY_CONTEXT) == {"supplementalGroups": [5, 1, 2]}


def test_managed_fields_carry_json() -> None:
    managed = msg(f(1, "kubectl"), f(2, "Update"), f(6, "FieldsV1"), f(7, msg(f(1, b'{"f:data":{".":{}}}'))))
    assert decode_message(msg(f(17, managed)), OBJECT_META) == {
        "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}}}}]
    }
    with pytest.raises(ProtobufError, match="not valid JSON"):
        decode_message(msg(f(17, msg(f(7, msg(f(1, b"{nope")))))), OBJECT_META)


# -- errors -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "message", "error"),
    [
        (msg(f(1, "x"), f(99, "?")), CONTAINER, "unknown field 99 in message Container"),
        (msg(f(40, b"")), POD_SPEC, "unknown field 40 in message PodSpec"),  # pod-level resources: gated off in 1.32
        (f(2, f(99, b"")), POD_SPEC, "unknown field 99 in message Container"),
        (msg(f(11, msg(f(1, "k"), f(3, "x")))), OBJECT_META, "unknown field 3 in an entry of map field 11"),
        (msg(f(1, 7)), CONTAINER, "field 1 in message Container has wire type 0, expected length-delimited"),
        (msg(f(16, "yes")), CONTAINER, "field 16 in message Container has wire type 2, expected a varint"),
        (varint(1 << 3 | 3), CONTAINER, "group"),
        (varint(1 << 3 | 7), CONTAINER, "invalid wire type 7"),
        (varint(0), CONTAINER, "field number 0"),
        (f(1, "abc")[:-1], CONTAINER, "truncated field 1"),
        (varint(16 << 3) + b"\x80", CONTAINER, "truncated varint"),
        (varint(16 << 3) + b"\xff" * 11, CONTAINER, "longer than 10 bytes"),
        (varint(1 << 3 | 1) + b"\x00" * 7, CONTAINER, "truncated fixed-size field 1"),
        (f(1, b"\xff\xfe"), CONTAINER, "not valid UTF-8"),
    ],
)
def test_bad_messages(raw: bytes, message: Message, error: str) -> None:
    with pytest.raises(ProtobufError, match=error):
        decode_message(raw, message)


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b'{"kind": "ConfigMap"}', "prefix"),
        (KUBECTL_CONFIGMAP[:40], "truncated"),
        (b"k8s\x00" + f(2, b""), "no apiVersion and kind"),
        (b"k8s\x00" + f(1, msg(f(1, "v1"), f(2, "ConfigMap"))) + f(3, "gzip"), "contentEncoding 'gzip'"),
        (b"k8s\x00" + f(5, ""), "unknown field 5 in message Unknown"),
    ],
)
def test_bad_envelopes(body: bytes, error: str) -> None:
    with pytest.raises(ProtobufError, match=error):
        decode_envelope(body)


def test_a_field_is_not_both_repeated_and_a_map() -> None:
    with pytest.raises(ValueError):
        Field("x", "string", repeated=True, map=True)
    with pytest.raises(ValueError):
        Field("x", "string", inline=True)


# -- the tables agree with the JSON schemas -------------------------------------------------------------
def _check_names(message: Message, shape: Shape, path: str) -> list[str]:
    problems = []
    for number, field in message.fields.items():
        if field.inline:
            assert isinstance(field.kind, Message)
            problems += _check_names(field.kind, shape, path)
            continue
        fs = shape.by_key.get(field.name)
        if fs is None:
            problems.append(f"{path}.{field.name} ({message.name} field {number}) is not in the JSON schema")
        elif isinstance(field.kind, Message) and fs.child is not None:
            problems += _check_names(field.kind, fs.child, f"{path}.{field.name}")
    return problems


@pytest.mark.parametrize(
    ("message", "schema"),
    [
        (MESSAGES["Namespace"], core_schemas.NamespaceSchema),
        (MESSAGES["ConfigMap"], core_schemas.ConfigMapSchema),
        (MESSAGES["Secret"], core_schemas.SecretSchema),
        (MESSAGES["ServiceAccount"], core_schemas.ServiceAccountSchema),
        (MESSAGES["Pod"], core_schemas.PodSchema),
        (MESSAGES["Event"], core_schemas.EventSchema),
        (MESSAGES["Node"], core_schemas.NodeSchema),
        (MESSAGES["Service"], ServiceSchema),
        (DEPLOYMENT, DeploymentSchema),
        (REPLICA_SET, ReplicaSetSchema),
        (LEASE, LeaseSchema),
        (API_SERVICE, APIServiceSchema),
        (BINDING, core_schemas.BindingSchema),
        (scale.PROTOBUF, scale.ScaleSchema),
    ],
    ids=lambda value: getattr(value, "name", ""),
)
def test_every_tabled_field_is_known_to_the_json_schema(message: Message, schema: type) -> None:
    assert _check_names(message, shape_of(schema), message.name) == []


# -- through the server ----------------------------------------------------------------------------------
async def test_server_creates_from_protobuf(api) -> None:
    body = envelope("v1", "ConfigMap", msg(f(1, meta("pb", f(11, entry("app", "pb")))), f(2, entry("k", "v")), f(3, entry("bin", b"\x01"))))
    reply = await api.post(CONFIGMAPS, raw=body, content_type=MEDIA_TYPE)
    assert reply.status == 201, reply
    stored = (await api.get(f"{CONFIGMAPS}/pb")).body
    assert stored["data"] == {"k": "v"} and stored["binaryData"] == {"bin": "AQ=="}
    assert stored["metadata"]["labels"] == {"app": "pb"} and stored["metadata"]["creationTimestamp"]


def _assert_status(reply: Any, code: int, reason: str, *words: str) -> None:
    assert reply.status == code and reply.body["reason"] == reason, reply
    assert all(word in reply.body["message"] for word in words), reply


async def test_server_refuses_protobuf_for_kinds_without_a_table(api) -> None:
    """The sample API's kinds have no protobuf form (sample-apiserver 1.32 generates none)."""
    flunder = envelope("wardle.example.com/v1alpha1", "Flunder", msg(f(1, meta("f"))))
    reply = await api.post("/apis/wardle.example.com/v1alpha1/namespaces/default/flunders", raw=flunder, content_type=MEDIA_TYPE)
    _assert_status(reply, 415, "UnsupportedMediaType", "application/json", "only for some kinds", "Flunder")


async def test_server_refuses_a_body_of_another_kind(api) -> None:
    reply = await api.post("/api/v1/namespaces/default/secrets", raw=KUBECTL_CONFIGMAP, content_type=MEDIA_TYPE)
    _assert_status(reply, 415, "UnsupportedMediaType", "v1 ConfigMap", "v1 Secret")


async def test_server_answers_400_to_bad_protobuf(api) -> None:
    reply = await api.post(CONFIGMAPS, raw=KUBECTL_CONFIGMAP[:-9], content_type=MEDIA_TYPE)
    _assert_status(reply, 400, "BadRequest", "truncated")
    container = msg(f(1, "c"), f(99, b""))  # no such field
    probe = envelope("apps/v1", "Deployment", msg(f(2, msg(f(3, msg(f(2, msg(f(2, container)))))))))
    reply = await api.post("/apis/apps/v1/namespaces/default/deployments", raw=probe, content_type=MEDIA_TYPE)
    _assert_status(reply, 400, "BadRequest", "unknown field 99 in message Container")
    assert (await api.get(CONFIGMAPS)).body["items"] == []


# -- every built-in kind through the server, numbers from each generated.proto ------------------------
def micro_time(seconds: int, nanos: int) -> bytes:
    return msg(f(1, seconds), f(2, nanos))


def int_or_string(value: int | str) -> bytes:
    return msg(f(1, 1), f(3, value)) if isinstance(value, str) else msg(f(1, 0), f(2, value))


async def created(api, path: str, api_version: str, kind: str, raw: bytes) -> dict[str, Any]:
    reply = await api.post(path, raw=envelope(api_version, kind, raw), content_type=MEDIA_TYPE)
    assert reply.status == 201, reply
    stored = (await api.get(f"{path}/{reply.body['metadata']['name']}")).body
    assert stored == reply.body
    return stored


def test_micro_time_keeps_microseconds() -> None:
    assert decode_message(msg(f(10, micro_time(1700000000, 123456789))), MESSAGES["Event"]) == {
        "eventTime": "2023-11-14T22:13:20.123456Z"}
    assert decode_message(msg(f(10, micro_time(0, 0))), MESSAGES["Event"]) == {}
    with pytest.raises(ProtobufError, match="nanoseconds is out of range"):
        decode_message(msg(f(10, micro_time(1, 2_000_000_000))), MESSAGES["Event"])


async def test_a_pod_with_volumes_probes_and_scheduling(api) -> None:
    volumes = (
        f(1, msg(f(1, "data"), f(2, f(2, msg(f(2, msg(f(1, "1Gi")))))))),  # emptyDir.sizeLimit
        f(1, msg(f(1, "cfg"), f(2, f(19, msg(f(1, msg(f(1, "settings"))), f(3, 420)))))),  # configMap, inline name
    )
    probe = msg(f(1, f(2, msg(f(1, "/healthz"), f(2, int_or_string(8080))))), f(4, 5))  # handler.httpGet, periodSeconds
    container = msg(f(1, "app"), f(2, "busybox:1.36"), f(10, probe), f(9, msg(f(1, "data"), f(3, "/data"))))
    requirement = msg(f(1, "zone"), f(2, "In"), f(3, "a"))
    affinity = f(1, f(1, f(1, f(1, requirement))))  # nodeAffinity.required.nodeSelectorTerms[].matchExpressions[]
    toleration = msg(f(1, "dedicated"), f(2, "Equal"), f(3, "db"), f(4, "NoExecute"), f(5, 60))
    spec = msg(*volumes, f(2, container), f(19, UNSCHEDULED), f(22, toleration), f(18, affinity))
    pod = await created(api, "/api/v1/namespaces/default/pods", "v1", "Pod", msg(f(1, meta("pb-pod")), f(2, spec)))
    spec_json = pod["spec"]
    assert spec_json["volumes"][:2] == [
        {"name": "data", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420}},
    ]
    (app,) = spec_json["containers"]
    assert app["livenessProbe"]["httpGet"]["path"] == "/healthz" and app["livenessProbe"]["httpGet"]["port"] == 8080
    assert app["livenessProbe"]["periodSeconds"] == 5
    assert app["volumeMounts"][0] == {"name": "data", "mountPath": "/data"}  # then the ServiceAccount token's
    assert {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoExecute", "tolerationSeconds": 60} in spec_json["tolerations"]
    assert spec_json["affinity"] == {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}


async def test_a_service_and_a_protobuf_put(api) -> None:
    port = msg(f(1, "http"), f(2, "TCP"), f(3, 80), f(4, int_or_string("web")))
    spec = msg(f(1, port), f(2, entry("app", "web")), f(4, "ClusterIP"), f(7, "None"), f(22, "Cluster"))
    path = "/api/v1/namespaces/default/services"
    service = await created(api, path, "v1", "Service", msg(f(1, meta("pb-svc")), f(2, spec)))
    assert service["spec"]["ports"] == [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": "web"}]
    assert service["spec"]["selector"] == {"app": "web"} and service["spec"]["clusterIP"]
    # PUT as client-go sends it: the object read back, with its resourceVersion and allocated clusterIP
    resource_version, cluster_ip = service["metadata"]["resourceVersion"], service["spec"]["clusterIP"]
    updated_meta = msg(f(1, "pb-svc"), f(3, "default"), f(6, resource_version))
    new_spec = msg(f(1, port), f(2, entry("app", "api")), f(3, cluster_ip), f(4, "ClusterIP"))
    reply = await api.put(f"{path}/pb-svc", raw=envelope("v1", "Service", msg(f(1, updated_meta), f(2, new_spec))),
                          content_type=MEDIA_TYPE)
    assert reply.status == 200, reply
    assert reply.body["spec"]["selector"] == {"app": "api"} and reply.body["spec"]["clusterIP"] == cluster_ip


async def test_an_event_with_micro_times(api) -> None:
    involved = msg(f(1, "Pod"), f(2, "default"), f(3, "web-1"), f(5, "v1"))
    event = msg(
        f(1, meta("web-1.17a")), f(2, involved), f(3, "Pulled"), f(4, "pulled the image"), f(5, msg(f(1, "kubelet"))),
        f(8, 3), f(9, "Normal"), f(10, micro_time(1700000000, 5000)), f(11, msg(f(1, 2), f(2, micro_time(1700000001, 0)))),
        f(12, "Pull"), f(14, "kubelet"), f(15, "node-1"),
    )
    stored = await created(api, "/api/v1/namespaces/default/events", "v1", "Event", event)
    assert stored["involvedObject"] == {"kind": "Pod", "namespace": "default", "name": "web-1", "apiVersion": "v1"}
    assert (stored["reason"], stored["count"], stored["type"], stored["source"]) == ("Pulled", 3, "Normal", {"component": "kubelet"})
    assert stored["eventTime"] == "2023-11-14T22:13:20.000005Z"
    assert stored["series"] == {"count": 2, "lastObservedTime": "2023-11-14T22:13:21.000000Z"}


async def test_a_node(api) -> None:
    taint = msg(f(1, "dedicated"), f(2, "db"), f(3, "NoSchedule"))
    spec = msg(f(1, "10.0.0.0/24"), f(7, "10.0.0.0/24"), f(5, taint))
    stored = await created(api, "/api/v1/nodes", "v1", "Node", msg(f(1, meta("pb-node")), f(2, spec)))
    assert stored["spec"]["podCIDRs"] == ["10.0.0.0/24"]
    assert stored["spec"]["taints"] == [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]


async def test_a_replica_set_keeps_zero_replicas(api) -> None:
    template = msg(f(1, msg(f(11, entry("app", "rs")))), f(2, msg(f(2, msg(f(1, "app"), f(2, "busybox:1.36"))))))
    spec = msg(f(1, 0), f(2, msg(f(1, entry("app", "rs")))), f(3, template))
    stored = await created(api, "/apis/apps/v1/namespaces/default/replicasets", "apps/v1", "ReplicaSet",
                           msg(f(1, meta("pb-rs")), f(2, spec)))
    assert stored["spec"]["replicas"] == 0 and stored["spec"]["selector"] == {"matchLabels": {"app": "rs"}}


async def test_a_lease_as_leader_election_writes_it(api) -> None:
    spec = msg(f(1, "me_1234"), f(2, 15), f(3, micro_time(1700000000, 250_000_000)), f(4, micro_time(1700000010, 0)), f(5, 0))
    stored = await created(api, "/apis/coordination.k8s.io/v1/namespaces/default/leases", "coordination.k8s.io/v1", "Lease",
                           msg(f(1, meta("pb-lease")), f(2, spec)))
    assert stored["spec"] == {
        "holderIdentity": "me_1234", "leaseDurationSeconds": 15, "acquireTime": "2023-11-14T22:13:20.250000Z",
        "renewTime": "2023-11-14T22:13:30.000000Z", "leaseTransitions": 0,
    }


async def test_an_api_service(api) -> None:
    spec = msg(f(1, msg(f(1, "default"), f(2, "pb-api"), f(3, 8443))), f(2, "pb.example.com"), f(3, "v1alpha1"),
               f(4, True), f(7, 1000), f(8, 15))
    stored = await created(api, "/apis/apiregistration.k8s.io/v1/apiservices", "apiregistration.k8s.io/v1", "APIService",
                           msg(f(1, meta("v1alpha1.pb.example.com")), f(2, spec)))
    assert stored["spec"] == {
        "service": {"namespace": "default", "name": "pb-api", "port": 8443}, "group": "pb.example.com",
        "version": "v1alpha1", "insecureSkipTLSVerify": True, "groupPriorityMinimum": 1000, "versionPriority": 15,
    }


# -- the request kinds that are not objects of the scheme: DeleteOptions, Binding, Scale ------------------
def delete_options(*fields: bytes, api_version: str = "v1") -> bytes:
    """DeleteOptions as client-go's typed clients send it (in the client's group/version)."""
    return envelope(api_version, "DeleteOptions", msg(*fields))


async def _names(api, path: str) -> list[str]:
    return [item["metadata"]["name"] for item in (await api.get(path)).body["items"]]


async def test_delete_options_as_protobuf(api) -> None:
    """Every DeleteOptions field read from a protobuf body, for DELETE and deletecollection; a body
    that cannot be read is a 400 (415 for another kind) and deletes nothing."""
    for name in ("a", "b", "c"):
        made = await api.post(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"set": "x"}}})
        assert made.status == 201
    uid = (await api.get(f"{CONFIGMAPS}/a")).body["metadata"]["uid"]

    async def delete(path: str, body: bytes, **kw: Any) -> Any:
        return await api.request("DELETE", path, raw=body, content_type=MEDIA_TYPE, **kw)

    dry = await delete(f"{CONFIGMAPS}/a", delete_options(f(5, "All")))
    assert dry.status == 200 and dry.body["status"] == "Success", dry
    wrong_uid = await delete(f"{CONFIGMAPS}/a", delete_options(f(2, msg(f(1, "not-the-uid")))))
    _assert_status(wrong_uid, 409, "Conflict", "not-the-uid")
    wrong_rv = await delete(f"{CONFIGMAPS}/a", delete_options(f(2, msg(f(2, "1")))))
    _assert_status(wrong_rv, 409, "Conflict")
    both = await delete(f"{CONFIGMAPS}/a", delete_options(f(3, False), f(4, "Orphan")))  # orphanDependents=false is set
    _assert_status(both, 422, "Invalid", "DeleteOptions.meta.k8s.io", "orphanDependents and deletionPropagation cannot be both set")
    bad_policy = await delete(f"{CONFIGMAPS}/a", delete_options(f(4, "Sideways")))
    _assert_status(bad_policy, 422, "Invalid", "Sideways")
    dry_all = await delete(CONFIGMAPS, delete_options(f(5, "All")), params={"labelSelector": "set=x"})
    assert dry_all.status == 200 and len(dry_all.body["items"]) == 3
    malformed = [
        (delete_options(f(1, 0))[:-1], 400, "BadRequest"),  # truncated
        (b"k8s\x00\x0a", 400, "BadRequest"),  # truncated envelope
        (delete_options(f(9, 1)), 400, "BadRequest"),  # no field 9 in DeleteOptions
        (delete_options(f(2, b"\xff")), 400, "BadRequest"),  # preconditions that are not a message
        (delete_options(f(1, "x")), 400, "BadRequest"),  # gracePeriodSeconds as a string
        (envelope("v1", "ConfigMap", msg(f(1, meta("a")))), 415, "UnsupportedMediaType"),
        (delete_options(f(5, "All"), api_version="apps/v1"), 415, "UnsupportedMediaType"),  # not this group's
    ]
    for body, code, reason in malformed:
        _assert_status(await delete(f"{CONFIGMAPS}/a", body), code, reason)
        _assert_status(await delete(CONFIGMAPS, body), code, reason)
    assert await _names(api, CONFIGMAPS) == ["a", "b", "c"]

    deleted = await delete(f"{CONFIGMAPS}/a", delete_options(f(1, 0), f(2, msg(f(1, uid))), f(4, "Background"), api_version="meta.k8s.io/v1"))
    assert deleted.status == 200 and deleted.body["details"]["uid"] == uid, deleted
    rest = await delete(CONFIGMAPS, delete_options(f(1, 0), f(4, "Background")), params={"labelSelector": "set=x"})
    assert rest.status == 200 and sorted(i["metadata"]["name"] for i in rest.body["items"]) == ["b", "c"]
    assert await _names(api, CONFIGMAPS) == []


async def test_a_pod_with_a_grace_period_from_protobuf_delete_options(api) -> None:
    """gracePeriodSeconds is an int64 pointer: a bound pod keeps the grace it was given."""
    pods = "/api/v1/namespaces/default/pods"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "slow"},
           "spec": {"schedulerName": UNSCHEDULED, "containers": [{"name": "main", "image": "nginx:1.25"}]}}
    assert (await api.post(pods, pod)).status == 201
    binding = envelope("v1", "Binding", msg(f(1, meta("slow")), f(2, msg(f(1, "Node"), f(3, "node-a")))))
    bound = await api.post(f"{pods}/slow/binding", raw=binding, content_type=MEDIA_TYPE)
    assert bound.status == 201, bound
    assert (await api.get(f"{pods}/slow")).body["spec"]["nodeName"] == "node-a"
    reply = await api.request("DELETE", f"{pods}/slow", raw=delete_options(f(1, 7)), content_type=MEDIA_TYPE)
    assert reply.status == 200 and reply.body["metadata"]["deletionGracePeriodSeconds"] == 7, reply


async def test_binding_and_scale_as_protobuf(api) -> None:
    pods = "/api/v1/namespaces/default/pods"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"schedulerName": UNSCHEDULED, "containers": [{"name": "main", "image": "nginx:1.25"}]}}
    assert (await api.post(pods, pod)).status == 201
    not_a_binding = envelope("v1", "Pod", msg(f(1, meta("p"))))
    _assert_status(await api.post(f"{pods}/p/binding", raw=not_a_binding, content_type=MEDIA_TYPE), 415, "UnsupportedMediaType", "v1 Binding")
    unknown = envelope("v1", "Binding", msg(f(1, meta("p")), f(2, msg(f(42, "x")))))
    _assert_status(await api.post(f"{pods}/p/binding", raw=unknown, content_type=MEDIA_TYPE), 400, "BadRequest",
                   "unknown field 42 in message ObjectReference")
    assert "nodeName" not in (await api.get(f"{pods}/p")).body["spec"]
    binding = envelope("v1", "Binding", msg(f(1, meta("p")), f(2, msg(f(1, "Node"), f(3, "node-b")))))
    assert (await api.post(f"{pods}/p/binding", raw=binding, content_type=MEDIA_TYPE)).status == 201
    assert (await api.get(f"{pods}/p")).body["spec"]["nodeName"] == "node-b"

    deployments = "/apis/apps/v1/namespaces/default/deployments"
    made = await created(api, deployments, "apps/v1", "Deployment", msg(
        f(1, meta("web")), f(2, msg(f(1, 3), f(2, msg(f(1, entry("app", "web")))),
                                 f(3, msg(f(1, meta("", f(11, entry("app", "web")))), f(2, msg(f(2, msg(f(1, "c"), f(2, "nginx")))))))))))
    assert made["spec"]["replicas"] == 3
    to_zero = envelope("autoscaling/v1", "Scale", msg(f(1, meta("web")), f(2, msg(f(1, 0))), f(3, msg(f(1, 0)))))
    scaled = await api.put(f"{deployments}/web/scale", raw=to_zero, content_type=MEDIA_TYPE)
    assert scaled.status == 200 and scaled.body["spec"]["replicas"] == 0, scaled
    assert (await api.get(f"{deployments}/web")).body["spec"]["replicas"] == 0
    bad = envelope("autoscaling/v1", "Scale", msg(f(2, msg(f(1, "many")))))
    _assert_status(await api.put(f"{deployments}/web/scale", raw=bad, content_type=MEDIA_TYPE), 400, "BadRequest", "Scale")
    wrong = envelope("apps/v1", "Deployment", msg(f(1, meta("web"))))
    _assert_status(await api.put(f"{deployments}/web/scale", raw=wrong, content_type=MEDIA_TYPE), 415, "UnsupportedMediaType",
                   "autoscaling/v1 Scale")
    assert (await api.get(f"{deployments}/web")).body["spec"]["replicas"] == 0
