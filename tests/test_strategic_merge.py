"""Strategic merge patch against the real core/v1 and apps/v1 schemas, with the patches kubectl sends."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kplane.core.runtime import fields
from kplane.core.runtime.schema import Schema, Shape, shape_of
from kplane.core.patching.errors import PatchError
from kplane.core.patching.strategic import apply_strategic_merge_patch
from kplane.plugins.apps.v1.schemas import DeploymentSchema
from kplane.plugins.core.v1.schemas import ConfigMapSchema, PodSchema

DEPLOYMENT = shape_of(DeploymentSchema)
POD = shape_of(PodSchema)
CONFIGMAP = shape_of(ConfigMapSchema)

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def nginx(**extra: Any) -> dict[str, Any]:
    return {
        "name": "nginx",
        "image": "nginx:1.25",
        "ports": [{"containerPort": 80, "protocol": "TCP"}],
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        "resources": {},
        "livenessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 10},
        "args": ["--a", "--b", "--c"],
        **extra,
    }


def deployment(containers: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    """A deployment as the server encodes it: every section filled in, like a stored object."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "0b1c",
            "resourceVersion": "7",
            "generation": 2,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"app": "web"},
            "annotations": {"deployment.kubernetes.io/revision": "2", LAST_APPLIED: '{"old":true}\n'},
            "finalizers": ["example.com/a", "example.com/c"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Thing", "name": "t", "uid": "u1"}],
        },
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [nginx()] if containers is None else containers,
                    "tolerations": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}],
                },
            },
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            **spec,
        },
        "status": {
            "observedGeneration": 2,
            "replicas": 2,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
            ],
        },
    }


def pod(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {
            "containers": [{"name": "app", "image": "busybox", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
            "volumes": [
                {"name": "data", "emptyDir": {}},
                {"name": "cfg", "configMap": {"name": "a", "items": [{"key": "k", "path": "p"}]}},
            ],
            **spec,
        },
    }


def configmap() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}


def edit(doc: dict[str, Any], change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """``doc`` deep-copied with ``change`` applied: the expected result, said as a difference."""
    out = copy.deepcopy(doc)
    change(out)
    return out


def template(doc: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = doc["spec"]["template"]["spec"]
    return spec


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["name"] for item in items]


SIDECAR = {"name": "sidecar", "image": "busybox:1.36"}
D = deployment()
D2 = deployment([nginx(), SIDECAR])

# (id, shape, document, patch, expected result)
CASES: list[tuple[str, Shape, dict[str, Any], Any, dict[str, Any]]] = [
    # -- the patches kubectl sends (kubectl-wire.md §8.3, §8.10, §8.14) --------------------------
    (
        "set-image",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "nginx"}], "containers": [{"image": "nginx:1.28", "name": "nginx"}]}}}},
        edit(D, lambda d: template(d)["containers"][0].update(image="nginx:1.28")),
    ),
    (
        "rollout-restart",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-29T14:21:52Z"}}}}},
        edit(D, lambda d: d["spec"]["template"]["metadata"].update(annotations={"kubectl.kubernetes.io/restartedAt": "2026-11-29T14:21:52Z"})),
    ),
    ("rollout-pause", DEPLOYMENT, D, {"spec": {"paused": True}}, edit(D, lambda d: d["spec"].update(paused=True))),
    ("rollout-resume", DEPLOYMENT, deployment(paused=True), {"spec": {"paused": None}}, D),
    (
        "apply-removes-a-container",
        DEPLOYMENT,
        D2,
        {
            "metadata": {"annotations": {LAST_APPLIED: '{"new":true}\n'}},
            "spec": {
                "replicas": 3,
                "template": {"spec": {"$setElementOrder/containers": [{"name": "nginx"}], "containers": [{"$patch": "delete", "name": "sidecar"}]}},
            },
        },
        edit(D, lambda d: (d["metadata"]["annotations"].update({LAST_APPLIED: '{"new":true}\n'}), d["spec"].update(replicas=3))),
    ),
    (
        "apply-adds-a-container-where-setElementOrder-says",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "nginx"}, {"name": "sidecar"}], "containers": [SIDECAR]}}}},
        edit(D, lambda d: template(d)["containers"].append(SIDECAR)),
    ),
    (
        # Without $setElementOrder k8s puts a new item before the document's (see kubectl patch docs).
        "patch-adds-a-container-first",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"containers": [SIDECAR]}}}},
        edit(D, lambda d: template(d)["containers"].insert(0, SIDECAR)),
    ),
    (
        "edit-reorders-containers",
        DEPLOYMENT,
        D2,
        {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "nginx"}]}}}},
        deployment([SIDECAR, nginx()]),
    ),
    (
        "port-added-by-merge-key",
        DEPLOYMENT,
        D,
        {
            "spec": {
                "template": {
                    "spec": {
                        "$setElementOrder/containers": [{"name": "nginx"}],
                        "containers": [
                            {"$setElementOrder/ports": [{"containerPort": 80}, {"containerPort": 443}], "name": "nginx", "ports": [{"containerPort": 443, "name": "https"}]}
                        ],
                    }
                }
            }
        },
        edit(D, lambda d: template(d)["containers"][0]["ports"].append({"containerPort": 443, "name": "https"})),
    ),
    (
        "port-changed-by-merge-key",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "ports": [{"containerPort": 80, "protocol": "UDP"}]}]}}}},
        edit(D, lambda d: template(d)["containers"][0]["ports"][0].update(protocol="UDP")),
    ),
    (
        "env-removed",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"containers": [{"$setElementOrder/env": [{"name": "B"}], "env": [{"$patch": "delete", "name": "A"}], "name": "nginx"}]}}}},
        edit(D, lambda d: template(d)["containers"][0].update(env=[{"name": "B", "value": "2"}])),
    ),
    (
        "env-value-changed-and-one-added",
        DEPLOYMENT,
        D,
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"$setElementOrder/env": [{"name": "A"}, {"name": "B"}, {"name": "C"}], "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}], "name": "nginx"}
                        ]
                    }
                }
            }
        },
        edit(D, lambda d: template(d)["containers"][0].update(env=[{"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}])),
    ),
    # -- merge lists of scalars: finalizers ------------------------------------------------------------
    (
        "finalizers-union-puts-new-first",
        DEPLOYMENT,
        D,
        {"metadata": {"finalizers": ["example.com/b"]}},
        edit(D, lambda d: d["metadata"].update(finalizers=["example.com/b", "example.com/a", "example.com/c"])),
    ),
    (
        "finalizers-union-interleaves-with-the-document",
        DEPLOYMENT,
        D,
        {"metadata": {"finalizers": ["example.com/a", "example.com/b"]}},
        edit(D, lambda d: d["metadata"].update(finalizers=["example.com/a", "example.com/b", "example.com/c"])),
    ),
    (
        "finalizers-union-with-setElementOrder",
        DEPLOYMENT,
        D,
        {"metadata": {"$setElementOrder/finalizers": ["example.com/a", "example.com/c", "example.com/b"], "finalizers": ["example.com/b"]}},
        edit(D, lambda d: d["metadata"]["finalizers"].append("example.com/b")),
    ),
    (
        "finalizers-deleteFromPrimitiveList",
        DEPLOYMENT,
        D,
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a", "example.com/zzz"]}},
        edit(D, lambda d: d["metadata"].update(finalizers=["example.com/c"])),
    ),
    (
        "finalizers-add-and-delete-in-one-patch",
        DEPLOYMENT,
        D,
        {
            "metadata": {
                "$setElementOrder/finalizers": ["example.com/c", "example.com/d"],
                "$deleteFromPrimitiveList/finalizers": ["example.com/a"],
                "finalizers": ["example.com/d"],
            }
        },
        edit(D, lambda d: d["metadata"].update(finalizers=["example.com/c", "example.com/d"])),
    ),
    (
        "deleteFromPrimitiveList-on-a-missing-list-adds-nothing",
        CONFIGMAP,
        configmap(),
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}},
        configmap(),
    ),
    (
        "deleteFromPrimitiveList-works-on-a-replace-list-too",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "$deleteFromPrimitiveList/args": ["--b"]}]}}}},
        edit(D, lambda d: template(d)["containers"][0].update(args=["--a", "--c"])),
    ),
    # -- merge lists of objects --------------------------------------------------------------------------
    (
        "conditions-merged-by-type",
        DEPLOYMENT,
        D,
        {"status": {"conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]}},
        edit(D, lambda d: d["status"]["conditions"][1].update(status="False", reason="ProgressDeadlineExceeded")),
    ),
    (
        "owner-reference-added-by-uid",
        DEPLOYMENT,
        D,
        {"metadata": {"ownerReferences": [{"uid": "u1", "controller": True}, {"apiVersion": "v1", "kind": "Other", "name": "o", "uid": "u2"}]}},
        edit(
            D,
            lambda d: d["metadata"].update(
                ownerReferences=[
                    {"apiVersion": "v1", "kind": "Thing", "name": "t", "uid": "u1", "controller": True},
                    {"apiVersion": "v1", "kind": "Other", "name": "o", "uid": "u2"},
                ]
            ),
        ),
    ),
    (
        "delete-of-an-absent-item-is-a-no-op",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"containers": [{"$patch": "delete", "name": "ghost"}]}}}},
        D,
    ),
    (
        # k8s test "set elements order in a list with server-only items 2": server-only items stay put.
        "setElementOrder-keeps-server-only-items-in-place",
        DEPLOYMENT,
        deployment([{"name": n} for n in ("c1", "c2", "c9", "c3", "c4")]),
        {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": n} for n in ("c2", "c1", "c4", "c3")]}}}},
        deployment([{"name": n} for n in ("c2", "c1", "c9", "c4", "c3")]),
    ),
    (
        "setElementOrder-names-items-the-list-lacks",
        DEPLOYMENT,
        deployment([{"name": "c1"}, {"name": "c3"}]),
        {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "c3"}, {"name": "c2"}, {"name": "c1"}]}}}},
        deployment([{"name": "c3"}, {"name": "c1"}]),
    ),
    (
        "new-items-are-cleaned-of-directives-and-nulls",
        DEPLOYMENT,
        D,
        {
            "spec": {
                "template": {
                    "spec": {
                        "$setElementOrder/containers": [{"name": "nginx"}, {"name": "sidecar"}],
                        "containers": [
                            {
                                "name": "sidecar",
                                "image": "busybox:1.36",
                                "command": None,
                                "$setElementOrder/ports": [{"containerPort": 9000}],
                                "ports": [{"containerPort": 9000}],
                                "securityContext": {"$patch": "delete"},
                            }
                        ],
                    }
                }
            }
        },
        edit(D, lambda d: template(d)["containers"].append({"name": "sidecar", "image": "busybox:1.36", "ports": [{"containerPort": 9000}]})),
    ),
    # -- $retainKeys ---------------------------------------------------------------------------------
    (
        "strategy-RollingUpdate-to-Recreate",
        DEPLOYMENT,
        D,
        {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": None, "type": "Recreate"}}},
        edit(D, lambda d: d["spec"].update(strategy={"type": "Recreate"})),
    ),
    (
        "retainKeys-clears-what-the-patch-does-not-mention",
        DEPLOYMENT,
        D,
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        edit(D, lambda d: d["spec"].update(strategy={"type": "Recreate"})),
    ),
    (
        "volume-source-switched",
        POD,
        pod(),
        {"spec": {"$setElementOrder/volumes": [{"name": "data"}, {"name": "cfg"}], "volumes": [{"$retainKeys": ["configMap", "name"], "configMap": {"name": "cfg"}, "name": "data"}]}},
        edit(pod(), lambda p: p["spec"]["volumes"].__setitem__(0, {"name": "data", "configMap": {"name": "cfg"}})),
    ),
    # -- $patch: replace / delete / merge --------------------------------------------------------------
    (
        "replace-a-map",
        DEPLOYMENT,
        D,
        {"metadata": {"labels": {"$patch": "replace", "tier": "web"}}},
        edit(D, lambda d: d["metadata"].update(labels={"tier": "web"})),
    ),
    ("replace-configmap-data", CONFIGMAP, configmap(), {"data": {"$patch": "replace", "z": "9"}}, edit(configmap(), lambda c: c.update(data={"z": "9"}))),
    (
        "replace-a-list",
        DEPLOYMENT,
        D2,
        {"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "busybox"}, {"$patch": "replace"}]}}}},
        deployment([{"name": "only", "image": "busybox"}]),
    ),
    (
        "replace-marker-in-a-list-the-document-lacks",
        POD,
        pod(),
        {"spec": {"initContainers": [{"name": "init", "image": "busybox"}, {"$patch": "replace"}]}},
        edit(pod(), lambda p: p["spec"].update(initContainers=[{"name": "init", "image": "busybox"}])),
    ),
    (
        "delete-a-map",
        DEPLOYMENT,
        D,
        {"spec": {"strategy": {"rollingUpdate": {"$patch": "delete"}}}},
        edit(D, lambda d: d["spec"]["strategy"].pop("rollingUpdate")),
    ),
    (
        "delete-a-map-value-the-document-lacks",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"metadata": {"annotations": {"$patch": "delete"}}}}},
        D,
    ),
    ("merge-directive-is-the-default", DEPLOYMENT, D, {"spec": {"$patch": "merge", "replicas": 5}}, edit(D, lambda d: d["spec"].update(replicas=5))),
    (
        "replace-directive-on-an-absent-map-inserts-it",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"metadata": {"annotations": {"$patch": "replace", "a": "b"}}}}},
        edit(D, lambda d: d["spec"]["template"]["metadata"].update(annotations={"a": "b"})),
    ),
    # -- plain JSON merge where there is no metadata -------------------------------------------------
    (
        "list-without-strategy-is-replaced",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"tolerations": [{"operator": "Exists"}]}}}},
        edit(D, lambda d: template(d).update(tolerations=[{"operator": "Exists"}])),
    ),
    (
        "raw-dict-merges-as-json-merge-patch",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "livenessProbe": {"httpGet": {"path": "/healthz"}, "periodSeconds": None}}]}}}},
        edit(D, lambda d: template(d)["containers"][0].update(livenessProbe={"httpGet": {"path": "/healthz", "port": 80}})),
    ),
    (
        "raw-dict-items-merge-by-name-as-plain-maps",
        POD,
        pod(),
        {"spec": {"volumes": [{"name": "cfg", "configMap": {"name": "b", "defaultMode": 420}}]}},
        edit(pod(), lambda p: p["spec"]["volumes"][1]["configMap"].update(name="b", defaultMode=420)),
    ),
    (
        "unknown-keys-merge-plainly",
        CONFIGMAP,
        {**configmap(), "extra": {"a": 1, "b": [1, 2]}},
        {"extra": {"a": None, "b": [3], "c": {"d": 1}}},
        {**configmap(), "extra": {"b": [3], "c": {"d": 1}}},
    ),
    (
        "deleteFromPrimitiveList-tells-true-from-1",
        CONFIGMAP,
        {**configmap(), "extra": [True, 1, "1"]},
        {"$deleteFromPrimitiveList/extra": [1]},
        {**configmap(), "extra": [True, "1"]},
    ),
    ("configmap-data-null-deletes", CONFIGMAP, configmap(), {"data": {"a": None, "c": "3"}}, edit(configmap(), lambda c: c.update(data={"b": "2", "c": "3"}))),
    # -- no-ops ----------------------------------------------------------------------------------------
    ("empty-patch", DEPLOYMENT, D, {}, D),
    ("null-patch", DEPLOYMENT, D, None, D),
    ("patch-equal-to-the-document", DEPLOYMENT, D, copy.deepcopy(D), D),
]


def directive_keys(value: Any, path: str = "") -> list[str]:
    if isinstance(value, dict):
        return [f"{path}.{k}" for k in value if k.startswith("$")] + [p for k, v in value.items() for p in directive_keys(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in directive_keys(v, f"{path}[{i}]")]
    return []


@pytest.mark.parametrize(("shape", "doc", "patch", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_strategic_merge(shape: Shape, doc: dict[str, Any], patch: Any, expected: dict[str, Any]) -> None:
    doc_before, patch_before = copy.deepcopy(doc), copy.deepcopy(patch)
    result = apply_strategic_merge_patch(doc, patch, shape)
    assert result == expected
    assert directive_keys(result) == []
    assert doc == doc_before and patch == patch_before  # inputs untouched


def test_new_container_order_matches_the_kubectl_patch_docs() -> None:
    """The docs' redis example: the patched-in container is listed before the existing one."""
    doc = deployment([{"name": "patch-demo-ctr", "image": "nginx"}])
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "patch-demo-ctr-2", "image": "redis"}]}}}}
    assert names(template(apply_strategic_merge_patch(doc, patch, DEPLOYMENT))["containers"]) == ["patch-demo-ctr-2", "patch-demo-ctr"]


def test_only_the_patched_path_is_copied() -> None:
    doc = deployment([nginx(), SIDECAR])
    patch = {"spec": {"template": {"spec": {"containers": [{"image": "nginx:1.28", "name": "nginx"}]}}}}
    result = apply_strategic_merge_patch(doc, patch, DEPLOYMENT)
    assert result["status"] is doc["status"] and result["metadata"] is doc["metadata"]
    assert result["spec"]["selector"] is doc["spec"]["selector"]
    assert template(result)["containers"][1] is template(doc)["containers"][1]  # the untouched sidecar
    assert template(result)["containers"][0]["ports"] is template(doc)["containers"][0]["ports"]
    assert template(result)["containers"][0] is not template(doc)["containers"][0]


class _PortSchema(Schema):
    name = fields.Str()
    port = fields.Int()


class _GroupSchema(Schema):
    ports = fields.List(fields.Nested(_PortSchema), metadata=fields.merge_by("name"))


class _GroupsSchema(Schema):
    groups = fields.Dict(keys=fields.Str(), values=fields.Nested(_GroupSchema))


def test_values_of_a_map_of_schemas_use_their_schema() -> None:
    """A ``MAP`` container: each value merges with the value schema's metadata (here a merge list)."""
    doc = {"groups": {"g": {"ports": [{"name": "a", "port": 1}]}, "h": {"ports": []}}}
    patch = {"groups": {"g": {"ports": [{"name": "a", "port": 2}, {"name": "b", "port": 3}]}}}
    result = apply_strategic_merge_patch(doc, patch, shape_of(_GroupsSchema))
    assert result == {"groups": {"g": {"ports": [{"name": "a", "port": 2}, {"name": "b", "port": 3}]}, "h": {"ports": []}}}
    patch = {"groups": {"g": {"ports": [{"name": "b", "port": 3}]}}}
    assert apply_strategic_merge_patch(doc, patch, shape_of(_GroupsSchema))["groups"]["g"]["ports"] == [{"name": "b", "port": 3}, {"name": "a", "port": 1}]


# (id, shape, document, patch, status code, message fragment)
ERRORS: list[tuple[str, Shape, dict[str, Any], Any, int, str]] = [
    ("patch-is-a-list", DEPLOYMENT, D, [{"op": "add"}], 400, "cannot unmarshal array into Go value of type map[string]interface {}"),
    ("patch-is-a-string", DEPLOYMENT, D, "x", 400, "cannot unmarshal string"),
    ("retainKeys-not-a-list", DEPLOYMENT, D, {"spec": {"strategy": {"$retainKeys": "type", "type": "Recreate"}}}, 400, "invalid patch format of retainKeys"),
    ("patch-key-not-in-retainKeys", DEPLOYMENT, D, {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}, 400, "invalid patch format of retainKeys"),
    ("retainKeys-not-a-list-in-a-new-value", POD, pod(), {"spec": {"volumes": [{"name": "new", "$retainKeys": 1}]}}, 400, "invalid patch format of retainKeys"),
    ("setElementOrder-without-a-list-name", DEPLOYMENT, D, {"metadata": {"$setElementOrder": ["a"]}}, 400, "invalid patch format of setElementOrder list"),
    ("deleteFromPrimitiveList-without-a-list-name", DEPLOYMENT, D, {"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}, 400, "invalid patch format of primitive list"),
    ("deleteFromPrimitiveList-not-a-list", DEPLOYMENT, D, {"metadata": {"$deleteFromPrimitiveList/finalizers": "example.com/a"}}, 400, "invalid patch format of primitive list"),
    ("deleteFromPrimitiveList-null", DEPLOYMENT, D, {"metadata": {"$deleteFromPrimitiveList/finalizers": None}}, 400, "invalid patch format of primitive list"),
    (
        "deleteFromPrimitiveList-on-a-list-of-objects",
        DEPLOYMENT,
        D,
        {"spec": {"template": {"spec": {"$deleteFromPrimitiveList/containers": ["nginx"]}}}},
        400,
        "invalid patch format of primitive list",
    ),
    ("deleteFromPrimitiveList-on-a-map", DEPLOYMENT, D, {"metadata": {"$deleteFromPrimitiveList/labels": ["app"]}}, 400, "invalid patch format of primitive list"),
    ("deleteFromPrimitiveList-of-objects", DEPLOYMENT, D, {"metadata": {"$deleteFromPrimitiveList/finalizers": [{"a": 1}]}}, 400, "invalid patch format of primitive list"),
    ("list-of-lists-in-a-merge-list", DEPLOYMENT, D, {"metadata": {"finalizers": [["example.com/a"]]}}, 422, "lists of lists are not supported"),
    ("objects-in-a-merge-list-without-merge-key", DEPLOYMENT, D, {"metadata": {"finalizers": [{"name": "a"}]}}, 500, "cannot merge lists without merge key for finalizers"),
    ("bad-patch-directive-in-a-map", DEPLOYMENT, D, {"spec": {"strategy": {"$patch": "remove"}}}, 500, "unknown patch type: remove in map: map[$patch:remove]"),
    ("bad-patch-directive-in-a-new-map", DEPLOYMENT, D, {"spec": {"template": {"metadata": {"annotations": {"$patch": 1}}}}}, 500, "unknown patch type: 1"),
    ("bad-patch-directive-in-a-list", DEPLOYMENT, D, {"spec": {"template": {"spec": {"containers": [{"$patch": "drop", "name": "nginx"}]}}}}, 500, "unknown patch type: drop"),
    (
        "merge-list-item-without-merge-key",
        POD,
        pod(),
        {"spec": {"volumes": [{"hostPath": {"path": "/var/lib/kubelet/pods"}}]}},
        500,
        "map: map[hostPath:map[path:/var/lib/kubelet/pods]] does not contain declared merge key: name",
    ),
    ("delete-item-without-merge-key", DEPLOYMENT, D, {"spec": {"template": {"spec": {"containers": [{"$patch": "delete"}]}}}}, 500, "does not contain declared merge key: name"),
    ("scalar-in-a-list-of-objects", DEPLOYMENT, D, {"spec": {"template": {"spec": {"containers": ["nginx"]}}}}, 500, "list element types are not identical"),
    ("setElementOrder-not-a-list", DEPLOYMENT, D, {"spec": {"template": {"spec": {"$setElementOrder/containers": {"name": "nginx"}}}}}, 500, "expected a []interface {}, but received a map"),
    ("setElementOrder-on-a-struct", DEPLOYMENT, D, {"spec": {"$setElementOrder/template": [{"name": "x"}]}}, 500, 'expected slice or array type for the json field "template"'),
    ("setElementOrder-on-an-unknown-field", DEPLOYMENT, D, {"spec": {"$setElementOrder/sidecars": []}}, 500, 'unable to find api field in struct DeploymentSpec for the json field "sidecars"'),
    ("setElementOrder-on-a-raw-map", CONFIGMAP, {**configmap(), "extra": {"x": {"a": 1}}}, {"extra": {"$setElementOrder/x": []}}, 500, "expected a []interface {}, but received a map"),
    ("setElementOrder-item-without-merge-key", DEPLOYMENT, D, {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"image": "x"}]}}}}, 500, "does not contain declared merge key: name"),
    (
        "setElementOrder-contradicts-the-patch-list",
        DEPLOYMENT,
        D2,
        {"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "nginx"}, {"name": "sidecar"}], "containers": [{"name": "sidecar"}, {"name": "nginx"}]}}}},
        500,
        "doesn't match $setElementOrder list",
    ),
    (
        "setElementOrder-of-scalars-contradicts-the-patch-list",
        DEPLOYMENT,
        D,
        {"metadata": {"$setElementOrder/finalizers": ["example.com/a", "example.com/c"], "finalizers": ["example.com/c", "example.com/a"]}},
        500,
        "doesn't match $setElementOrder list",
    ),
]


@pytest.mark.parametrize(("shape", "doc", "patch", "code", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_patches(shape: Shape, doc: dict[str, Any], patch: Any, code: int, message: str) -> None:
    doc_before = copy.deepcopy(doc)
    with pytest.raises(PatchError) as info:
        apply_strategic_merge_patch(doc, patch, shape)
    assert (info.value.code, message in info.value.message) == (code, True), info.value.message
    assert doc == doc_before
