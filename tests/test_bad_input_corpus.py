"""A corpus of hostile and malformed requests: every one gets a 4xx metav1.Status, and none of
them stores or deletes anything.

The cases cover every verb, body content type, patch type, the query parameters the server
reads, and the subresources. Each case runs against one `kplane serve` process (no controllers,
so nothing else writes), and the storage revision is read before and after it: a rejected
request that changed anything shows as a moved revision. The expected code and reason are
kube-apiserver's for the same request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests

from tests.builders import KINDS
from tests.servers import Served, serving

JSON, YAML, MERGE, STRATEGIC, JSON_PATCH, APPLY = (
    "application/json", "application/yaml", "application/merge-patch+json",
    "application/strategic-merge-patch+json", "application/json-patch+json", "application/apply-patch+yaml")
PROTOBUF = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True)
class Case:
    id: str
    method: str
    path: str
    code: int
    reason: str
    body: bytes | None = None
    content_type: str | None = JSON
    params: dict[str, str] = field(default_factory=dict)

    def send(self, session: requests.Session, url: str) -> requests.Response:
        headers = {"Content-Type": self.content_type} if self.content_type and self.body is not None else {}
        return session.request(self.method, url + self.path, data=self.body, headers=headers, params=self.params,
                               timeout=30)


def j(value: Any) -> bytes:
    return json.dumps(value).encode()


def create_cases() -> Iterator[Case]:
    """The same malformed bodies POSTed to every kind."""
    for key, kind in KINDS.items():
        good = kind.body()
        yield Case(f"{key}-malformed-json", "POST", kind.collection, 400, "BadRequest", b'{"kind": ')
        yield Case(f"{key}-list-body", "POST", kind.collection, 400, "BadRequest", j([1, 2]))
        yield Case(f"{key}-string-body", "POST", kind.collection, 400, "BadRequest", j("text"))
        yield Case(f"{key}-null-body", "POST", kind.collection, 400, "BadRequest", b"null")
        yield Case(f"{key}-empty-body", "POST", kind.collection, 400, "BadRequest", b"")
        yield Case(f"{key}-wrong-kind", "POST", kind.collection, 400, "BadRequest", j({**good, "kind": "Widget"}))
        yield Case(f"{key}-wrong-apiversion", "POST", kind.collection, 400, "BadRequest",
                   j({**good, "apiVersion": "nope.example.com/v9"}))
        yield Case(f"{key}-metadata-not-object", "POST", kind.collection, 400, "BadRequest", j({**good, "metadata": "x"}))
        yield Case(f"{key}-no-name", "POST", kind.collection, 422, "Invalid", j({**good, "metadata": {}}))
        yield Case(f"{key}-invalid-name", "POST", kind.collection, 422, "Invalid", j(kind.body("Bad_Name")))
        yield Case(f"{key}-invalid-generate-name", "POST", kind.collection, 422, "Invalid",
                   j({**good, "metadata": {"generateName": "Bad_"}}))
        yield Case(f"{key}-label-not-string", "POST", kind.collection, 400, "BadRequest",
                   j(kind.body(labels={"a": 5})))
        yield Case(f"{key}-invalid-label", "POST", kind.collection, 422, "Invalid", j(kind.body(labels={"a": "-x-"})))
        yield Case(f"{key}-unknown-field-strict", "POST", kind.collection, 400, "BadRequest",
                   j({**good, "bogus": {"x": 1}}), params={"fieldValidation": "Strict"})
        yield Case(f"{key}-duplicate-field-strict", "POST", kind.collection, 400, "BadRequest",
                   j(good)[:-1] + b', "kind": "' + kind.kind.encode() + b'"}', params={"fieldValidation": "Strict"})
        yield Case(f"{key}-malformed-yaml", "POST", kind.collection, 400, "BadRequest", b"kind: x\n  bad: [", YAML)
        yield Case(f"{key}-xml", "POST", kind.collection, 415, "UnsupportedMediaType", b"<x/>", "application/xml")
        yield Case(f"{key}-resource-version-on-create", "POST", kind.collection, 400, "BadRequest",
                   j(kind.body(resourceVersion="5")))
        yield Case(f"{key}-put-name-mismatch", "PUT", kind.item(), 400, "BadRequest",
                   j(kind.body("other")))
        yield Case(f"{key}-put-stale-rv", "PUT", kind.item(), 409, "Conflict",
                   j(kind.body(kind.seed, resourceVersion="1")))
        yield Case(f"{key}-put-list-body", "PUT", kind.item(), 400, "BadRequest", j([]))
        yield Case(f"{key}-merge-patch-list", "PATCH", kind.item(), 422, "Invalid", j([1, 2]), MERGE)


def yaml_cases() -> Iterator[Case]:
    cm = KINDS["configmap"]
    bomb = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
        b"%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n" % ((chr(98 + i).encode(),) * 2 + (chr(97 + i).encode(),) * 10)
        for i in range(8))
    yield Case("yaml-alias-bomb", "POST", cm.collection, 400, "BadRequest",
               b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\nbogus:\n" + b"\n".join(b"  " + line for line in bomb.splitlines()), YAML)
    yield Case("yaml-deep-nesting", "POST", cm.collection, 400, "BadRequest",
               b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nbogus: " + b"[" * 2000 + b"]" * 2000, YAML)
    yield Case("yaml-huge-int", "POST", cm.collection, 400, "BadRequest",
               b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, generation: 123456789012345678901234567890}\n", YAML)
    yield Case("yaml-null-key", "POST", cm.collection, 400, "BadRequest",
               b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keys}\ndata: {~: a}\n", YAML)
    yield Case("yaml-sequence-key", "POST", cm.collection, 400, "BadRequest",
               b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keys}\ndata: {? [a] : b}\n", YAML)
    yield Case("yaml-duplicate-keys-strict", "POST", cm.collection, 400, "BadRequest",
               b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\ndata: {a: b}\ndata: {c: d}\n", YAML,
               {"fieldValidation": "Strict"})
    yield Case("yaml-not-a-map", "POST", cm.collection, 400, "BadRequest", b"- a\n- b\n", YAML)
    yield Case("yaml-tagged-python-object", "POST", cm.collection, 400, "BadRequest",
               b"!!python/object/apply:os.system ['true']\n", YAML)
    yield Case("yaml-undefined-alias", "POST", cm.collection, 400, "BadRequest",
               b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: alias}\ndata: *nope\n", YAML)
    yield Case("yaml-nan", "POST", KINDS["deployment"].collection, 400, "BadRequest",
               j(KINDS["deployment"].body("nan"))[:-1] + b', "status": {"replicas": .nan}}', YAML)
    yield Case("json-deep-nesting", "POST", cm.collection, 400, "BadRequest",
               b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"bogus":' + b"[" * 20000 + b"]" * 20000 + b"}")
    yield Case("json-deep-unknown-field", "POST", cm.collection, 400, "BadRequest",
               b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep2"},"bogus":' + b'{"a":' * 300 + b"1" + b"}" * 300 + b"}",
               params={"fieldValidation": "Strict"})
    yield Case("json-huge-int", "POST", KINDS["deployment"].collection, 400, "BadRequest",
               j(KINDS["deployment"].body())[:-1] + b', "status": {"replicas": 123456789012345678901234567890}}')
    yield Case("json-invalid-utf8", "POST", cm.collection, 400, "BadRequest",
               b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"\xff\xfe"}}')
    yield Case("json-trailing-garbage", "POST", cm.collection, 400, "BadRequest", j(cm.body()) + b"{}")
    yield Case("protobuf-garbage", "POST", cm.collection, 400, "BadRequest", b"k8s\x00\xff\xff\xff", PROTOBUF)
    yield Case("protobuf-no-magic", "POST", cm.collection, 400, "BadRequest", b"\x0a\x02v1", PROTOBUF)
    yield Case("text-plain", "POST", cm.collection, 415, "UnsupportedMediaType", j(cm.body()), "text/plain")
    yield Case("secret-bad-base64", "POST", KINDS["secret"].collection, 400, "BadRequest",
               j({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b64"}, "data": {"a": "!!!"}}))


def patch_cases() -> Iterator[Case]:
    cm, dep = KINDS["configmap"].item(), KINDS["deployment"].item()
    for name, content_type in (("merge", MERGE), ("strategic", STRATEGIC)):
        yield Case(f"{name}-patch-string", "PATCH", cm, 400, "BadRequest", j("str"), content_type)
        yield Case(f"{name}-patch-number", "PATCH", cm, 400, "BadRequest", b"5", content_type)
        yield Case(f"{name}-patch-malformed", "PATCH", cm, 400, "BadRequest", b"{", content_type)
        yield Case(f"{name}-patch-empty", "PATCH", cm, 400, "BadRequest", b"", content_type)
        yield Case(f"{name}-patch-wrong-type", "PATCH", dep, 422, "Invalid", j({"spec": {"replicas": "many"}}), content_type)
        yield Case(f"{name}-patch-wrong-kind", "PATCH", cm, 400, "BadRequest", j({"kind": "Secret"}), content_type)
        yield Case(f"{name}-patch-missing-object", "PATCH", KINDS["configmap"].item("absent"), 404, "NotFound",
                   j({"data": {"a": "b"}}), content_type)
        yield Case(f"{name}-patch-missing-lease", "PATCH", KINDS["lease"].item("absent"), 404, "NotFound",
                   j({"spec": {"holderIdentity": "x"}}), content_type)
        yield Case(f"{name}-patch-rename", "PATCH", cm, 400, "BadRequest", j({"metadata": {"name": "other"}}), content_type)
        yield Case(f"{name}-patch-invalid-result", "PATCH", dep, 422, "Invalid",
                   j({"spec": {"replicas": -1}}), content_type)
    yield Case("merge-patch-null", "PATCH", cm, 400, "BadRequest", b"null", MERGE)
    yield Case("strategic-patch-bad-directive", "PATCH", dep, 422, "Invalid",
               j({"spec": {"template": {"spec": {"containers": [{"$patch": "explode", "name": "c"}]}}}}), STRATEGIC)
    yield Case("strategic-patch-list-for-map", "PATCH", dep, 422, "Invalid", j({"spec": [1]}), STRATEGIC)
    yield Case("strategic-patch-order-directive-not-list", "PATCH", dep, 422, "Invalid",
               j({"spec": {"template": {"spec": {"$setElementOrder/containers": 5}}}}), STRATEGIC)
    yield Case("json-patch-object", "PATCH", cm, 400, "BadRequest", j({"op": "add"}), JSON_PATCH)
    yield Case("json-patch-unknown-op", "PATCH", cm, 422, "Invalid", j([{"op": "explode", "path": "/data"}]), JSON_PATCH)
    yield Case("json-patch-no-path", "PATCH", cm, 422, "Invalid", j([{"op": "add", "value": 1}]), JSON_PATCH)
    yield Case("json-patch-path-not-string", "PATCH", cm, 422, "Invalid", j([{"op": "add", "path": 5, "value": 1}]), JSON_PATCH)
    yield Case("json-patch-missing-target", "PATCH", cm, 422, "Invalid",
               j([{"op": "replace", "path": "/data/nothere/deeper", "value": "x"}]), JSON_PATCH)
    yield Case("json-patch-remove-missing", "PATCH", cm, 422, "Invalid", j([{"op": "remove", "path": "/nothere"}]), JSON_PATCH)
    yield Case("json-patch-test-fails", "PATCH", cm, 422, "Invalid",
               j([{"op": "test", "path": "/data/a", "value": "z"}, {"op": "remove", "path": "/data"}]), JSON_PATCH)
    yield Case("json-patch-bad-index", "PATCH", dep, 422, "Invalid",
               j([{"op": "add", "path": "/spec/template/spec/containers/99", "value": {}}]), JSON_PATCH)
    yield Case("json-patch-index-not-number", "PATCH", dep, 422, "Invalid",
               j([{"op": "replace", "path": "/spec/template/spec/containers/x/image", "value": "y"}]), JSON_PATCH)
    yield Case("json-patch-move-from-missing", "PATCH", cm, 422, "Invalid",
               j([{"op": "move", "from": "/nothere", "path": "/data/b"}]), JSON_PATCH)
    yield Case("json-patch-invalid-result", "PATCH", dep, 422, "Invalid",
               j([{"op": "replace", "path": "/spec/replicas", "value": -3}]), JSON_PATCH)
    yield Case("json-patch-change-kind", "PATCH", cm, 400, "BadRequest",
               j([{"op": "replace", "path": "/kind", "value": "Secret"}]), JSON_PATCH)
    yield Case("apply-no-field-manager", "PATCH", cm, 422, "Invalid", j(KINDS["configmap"].body("seed")), APPLY)
    yield Case("apply-not-object", "PATCH", cm, 400, "BadRequest", b"- a\n", APPLY, {"fieldManager": "m"})
    yield Case("apply-no-kind", "PATCH", cm, 400, "BadRequest", j({"apiVersion": "v1", "metadata": {"name": "seed"}}),
               APPLY, {"fieldManager": "m"})
    yield Case("apply-wrong-kind", "PATCH", cm, 400, "BadRequest",
               j({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "seed"}}), APPLY, {"fieldManager": "m"})
    yield Case("apply-name-mismatch", "PATCH", cm, 400, "BadRequest", j(KINDS["configmap"].body("other")), APPLY,
               {"fieldManager": "m"})
    yield Case("apply-force-without-apply", "PATCH", cm, 422, "Invalid", j({"data": {}}), MERGE, {"force": "true"})
    yield Case("apply-invalid-object", "PATCH", KINDS["deployment"].item("applied"), 422, "Invalid",
               j({**KINDS["deployment"].body("applied"), "spec": {"replicas": -1}}), APPLY, {"fieldManager": "m"})
    yield Case("apply-alias-bomb", "PATCH", cm, 400, "BadRequest",
               b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: seed}\na: &a [x,x,x,x,x,x,x,x,x,x]\n"
               + b"".join(b"%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n" % ((chr(98 + i).encode(),) * 2 + (chr(97 + i).encode(),) * 10)
                          for i in range(8)), APPLY, {"fieldManager": "m"})
    yield Case("patch-unknown-content-type", "PATCH", cm, 415, "UnsupportedMediaType", j({}), "text/plain")
    yield Case("patch-json-content-type", "PATCH", cm, 415, "UnsupportedMediaType", j({}), JSON)
    yield Case("patch-no-content-type", "PATCH", cm, 415, "UnsupportedMediaType", j({}), None)
    yield Case("patch-unknown-field-strict", "PATCH", cm, 422, "Invalid", j({"bogus": 1}), MERGE,
               {"fieldValidation": "Strict"})
    yield Case("patch-bad-field-validation", "PATCH", cm, 422, "Invalid", j({}), MERGE, {"fieldValidation": "Loose"})
    yield Case("patch-bad-dry-run", "PATCH", cm, 422, "Invalid", j({}), MERGE, {"dryRun": "Maybe"})
    yield Case("patch-collection", "PATCH", KINDS["configmap"].collection, 405, "MethodNotAllowed", j({}), MERGE)


def query_cases() -> Iterator[Case]:
    deps = KINDS["deployment"].collection
    for name, params in {
        "limit-not-int": {"limit": "many"},
        "limit-over-int64": {"limit": "99999999999999999999"},
        "limit-float": {"limit": "1.5"},
        "watch-not-bool": {"watch": "perhaps"},
        "timeout-seconds-not-int": {"watch": "1", "timeoutSeconds": "soon"},
        "timeout-seconds-over-int64": {"watch": "1", "timeoutSeconds": "99999999999999999999"},
        "continue-garbage": {"continue": "!!!"},
        "continue-not-json": {"continue": "bm90IGpzb24"},
        "continue-path-escape": {"continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLi8uLi9zZWNyZXRzIn0"},
        "resource-version-not-int": {"resourceVersion": "abc"},
        "resource-version-negative": {"resourceVersion": "-1"},
        "resource-version-match-bad": {"resourceVersion": "1", "resourceVersionMatch": "Sometime"},
        "resource-version-match-without-rv": {"resourceVersionMatch": "Exact"},
        "resource-version-match-exact-zero": {"resourceVersion": "0", "resourceVersionMatch": "Exact"},
        "continue-with-rv": {"continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIifQ", "resourceVersion": "5"},
        "label-selector-bad": {"labelSelector": "a in (b"},
        "label-selector-bad-value": {"labelSelector": "a=-b-"},
        "label-selector-bad-operator": {"labelSelector": "a=>b"},
        "field-selector-bad": {"fieldSelector": "metadata.name"},
        "field-selector-unknown-field": {"fieldSelector": "spec.nonsense=x"},
        "field-selector-bad-operator": {"fieldSelector": "metadata.name>x"},
        "allow-bookmarks-not-bool": {"watch": "1", "allowWatchBookmarks": "sure"},
    }.items():
        invalid = name.startswith("resource-version-match") or name == "continue-with-rv"  # ListOptions validation
        code, reason = (422, "Invalid") if invalid else (400, "BadRequest")
        yield Case(f"list-{name}", "GET", deps, code, reason, params=params)
    yield Case("watch-bad-rv", "GET", deps, 400, "BadRequest", params={"watch": "1", "resourceVersion": "abc"})
    yield Case("watch-bad-selector", "GET", deps, 400, "BadRequest", params={"watch": "1", "labelSelector": "a in ("})
    yield Case("list-future-rv", "GET", deps, 504, "Timeout", params={"resourceVersion": "99999999"})
    yield Case("create-bad-field-validation", "POST", KINDS["configmap"].collection, 422, "Invalid",
               j(KINDS["configmap"].body()), params={"fieldValidation": "Loose"})
    yield Case("create-bad-dry-run", "POST", KINDS["configmap"].collection, 422, "Invalid",
               j(KINDS["configmap"].body()), params={"dryRun": "Some"})
    yield Case("create-bad-field-manager", "POST", KINDS["configmap"].collection, 422, "Invalid",
               j(KINDS["configmap"].body()), params={"fieldManager": "x" * 200})


def delete_cases() -> Iterator[Case]:
    cm, cms, dep = KINDS["configmap"].item(), KINDS["configmap"].collection, KINDS["deployment"].item()
    for target, path in (("one", cm), ("collection", cms)):
        yield Case(f"delete-{target}-body-list", "DELETE", path, 400, "BadRequest", j([1]))
        yield Case(f"delete-{target}-body-string", "DELETE", path, 400, "BadRequest", j("x"))
        yield Case(f"delete-{target}-malformed", "DELETE", path, 400, "BadRequest", b"{")
        yield Case(f"delete-{target}-grace-not-int", "DELETE", path, 400, "BadRequest", j({"gracePeriodSeconds": "x"}))
        yield Case(f"delete-{target}-preconditions-not-object", "DELETE", path, 400, "BadRequest", j({"preconditions": 5}))
        yield Case(f"delete-{target}-wrong-kind", "DELETE", path, 400, "BadRequest",
                   j({"kind": "ConfigMap", "apiVersion": "v1"}))
        yield Case(f"delete-{target}-bad-propagation", "DELETE", path, 422, "Invalid", j({"propagationPolicy": "Sideways"}))
        yield Case(f"delete-{target}-orphan-and-policy", "DELETE", path, 422, "Invalid",
                   j({"orphanDependents": True, "propagationPolicy": "Background"}))
        yield Case(f"delete-{target}-bad-dry-run", "DELETE", path, 422, "Invalid", j({"dryRun": ["Some"]}))
        yield Case(f"delete-{target}-dry-run-not-list", "DELETE", path, 400, "BadRequest", j({"dryRun": "All"}))
        yield Case(f"delete-{target}-grace-float", "DELETE", path, 400, "BadRequest", j({"gracePeriodSeconds": 1.5}))
        yield Case(f"delete-{target}-query-bad-grace", "DELETE", path, 400, "BadRequest", params={"gracePeriodSeconds": "x"})
        yield Case(f"delete-{target}-query-bad-propagation", "DELETE", path, 422, "Invalid",
                   params={"propagationPolicy": "Sideways"})
        yield Case(f"delete-{target}-query-bad-dry-run", "DELETE", path, 422, "Invalid", params={"dryRun": "Some"})
        yield Case(f"delete-{target}-precondition-uid-not-string", "DELETE", path, 400, "BadRequest",
                   j({"preconditions": {"uid": 5}}))
        yield Case(f"delete-{target}-unknown-api-version", "DELETE", path, 400, "BadRequest",
                   j({"kind": "DeleteOptions", "apiVersion": "nope/v9"}))
        yield Case(f"delete-{target}-xml-body", "DELETE", path, 415, "UnsupportedMediaType", b"<x/>", "application/xml")
    yield Case("delete-uid-precondition", "DELETE", cm, 409, "Conflict", j({"preconditions": {"uid": "nope"}}))
    yield Case("delete-rv-precondition", "DELETE", dep, 409, "Conflict", j({"preconditions": {"resourceVersion": "1"}}))
    yield Case("delete-dry-run-body", "DELETE", cm, 200, "", j({"dryRun": ["All"]}))
    yield Case("delete-dry-run-query", "DELETE", dep, 200, "", params={"dryRun": "All"})
    yield Case("delete-collection-dry-run-body", "DELETE", cms, 200, "", j({"dryRun": ["All"]}))
    yield Case("delete-collection-bad-selector", "DELETE", cms, 400, "BadRequest", params={"labelSelector": "a in ("})
    yield Case("delete-missing", "DELETE", KINDS["configmap"].item("absent"), 404, "NotFound")


def subresource_cases() -> Iterator[Case]:
    dep, pod, ns = KINDS["deployment"].item(), KINDS["pod"].item(), KINDS["namespace"].item("corpus-ns")
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "seed"}, "spec": {"replicas": 1}}
    yield Case("scale-put-list", "PUT", f"{dep}/scale", 400, "BadRequest", j([1]))
    yield Case("scale-put-negative", "PUT", f"{dep}/scale", 422, "Invalid", j({**scale, "spec": {"replicas": -1}}))
    yield Case("scale-put-string-replicas", "PUT", f"{dep}/scale", 400, "BadRequest", j({**scale, "spec": {"replicas": "x"}}))
    yield Case("scale-put-wrong-kind", "PUT", f"{dep}/scale", 400, "BadRequest", j({**scale, "kind": "Deployment"}))
    yield Case("scale-put-name-mismatch", "PUT", f"{dep}/scale", 400, "BadRequest",
               j({**scale, "metadata": {"name": "other"}}))
    yield Case("scale-put-stale-rv", "PUT", f"{dep}/scale", 409, "Conflict",
               j({**scale, "metadata": {"name": "seed", "resourceVersion": "1"}}))
    yield Case("scale-merge-patch-list", "PATCH", f"{dep}/scale", 422, "Invalid", j([1]), MERGE)
    yield Case("scale-put-namespace-mismatch", "PUT", f"{dep}/scale", 400, "BadRequest",
               j({**scale, "metadata": {"name": "seed", "namespace": "kube-system"}}))
    yield Case("scale-json-patch-bad", "PATCH", f"{dep}/scale", 422, "Invalid",
               j([{"op": "remove", "path": "/spec/nothere"}]), JSON_PATCH)
    yield Case("scale-missing", "GET", f"{KINDS['deployment'].item('absent')}/scale", 404, "NotFound")
    yield Case("scale-of-unscalable", "GET", f"{KINDS['configmap'].item()}/scale", 404, "NotFound")
    yield Case("scale-post", "POST", f"{dep}/scale", 405, "MethodNotAllowed", j(scale))
    yield Case("scale-delete", "DELETE", f"{dep}/scale", 405, "MethodNotAllowed")
    yield Case("status-put-list", "PUT", f"{dep}/status", 400, "BadRequest", j([]))
    yield Case("status-put-wrong-kind", "PUT", f"{dep}/status", 400, "BadRequest",
               j({**KINDS["deployment"].body("seed"), "kind": "ReplicaSet"}))
    yield Case("status-merge-patch-wrong-type", "PATCH", f"{dep}/status", 422, "Invalid",
               j({"status": {"replicas": "x"}}), MERGE)
    yield Case("status-patch-missing", "PATCH", f"{KINDS['deployment'].item('absent')}/status", 404, "NotFound",
               j({"status": {}}), MERGE)
    yield Case("status-delete", "DELETE", f"{dep}/status", 405, "MethodNotAllowed")
    yield Case("status-post", "POST", f"{dep}/status", 405, "MethodNotAllowed", j({}))
    yield Case("binding-list-body", "POST", f"{pod}/binding", 400, "BadRequest", j([1]))
    yield Case("binding-no-target", "POST", f"{pod}/binding", 422, "Invalid",
               j({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "seed"}}))
    yield Case("binding-missing-pod", "POST", f"{KINDS['pod'].item('absent')}/binding", 404, "NotFound",
               j({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "absent"}, "target": {"kind": "Node", "name": "n"}}))
    yield Case("binding-get", "GET", f"{pod}/binding", 405, "MethodNotAllowed")
    yield Case("binding-put", "PUT", f"{pod}/binding", 405, "MethodNotAllowed", j({}))
    yield Case("unknown-subresource", "GET", f"{dep}/nonsense", 404, "NotFound")
    yield Case("finalize-list-body", "PUT", f"{ns}/finalize", 400, "BadRequest", j([1]))
    yield Case("namespace-status-wrong-kind", "PUT", f"{ns}/status", 400, "BadRequest", j({"kind": "Pod", "apiVersion": "v1"}))


def routing_cases() -> Iterator[Case]:
    yield Case("unknown-resource", "GET", "/apis/apps/v1/namespaces/default/widgets", 404, "NotFound")
    yield Case("unknown-group", "GET", "/apis/nope.example.com/v1/things", 404, "NotFound")
    yield Case("unknown-version", "GET", "/apis/apps/v9/namespaces/default/deployments", 404, "NotFound")
    yield Case("cluster-scoped-in-namespace", "GET", "/api/v1/namespaces/default/nodes", 404, "NotFound")
    yield Case("create-namespaced-without-namespace", "POST", "/apis/apps/v1/deployments", 405, "MethodNotAllowed",
               j(KINDS["deployment"].body()))
    yield Case("create-in-missing-namespace", "POST", "/api/v1/namespaces/absent/configmaps", 404, "NotFound",
               j(KINDS["configmap"].body()))
    yield Case("post-to-named-object", "POST", KINDS["configmap"].item(), 405, "MethodNotAllowed", j({}))
    yield Case("put-to-collection", "PUT", KINDS["configmap"].collection, 405, "MethodNotAllowed", j({}))
    yield Case("too-deep-path", "GET", f"{KINDS['deployment'].item()}/scale/extra", 404, "NotFound")
    yield Case("body-over-3-mib", "POST", KINDS["configmap"].collection, 413, "RequestEntityTooLarge",
               j(KINDS["configmap"].body(annotations={"big": "x" * (3 * 1024 * 1024)})))
    yield Case("namespace-mismatch", "POST", KINDS["configmap"].collection, 400, "BadRequest",
               j(KINDS["configmap"].body(namespace="kube-system")))
    yield Case("get-missing", "GET", KINDS["secret"].item("absent"), 404, "NotFound")
    yield Case("put-missing-no-create", "PUT", KINDS["deployment"].item("absent"), 404, "NotFound",
               j(KINDS["deployment"].body("absent", resourceVersion="5")))
    yield Case("invalid-update", "PUT", KINDS["deployment"].item(), 422, "Invalid",
               j({**KINDS["deployment"].body("seed"), "spec": {"replicas": 1}}))


CASES = [*create_cases(), *yaml_cases(), *patch_cases(), *query_cases(), *delete_cases(), *subresource_cases(),
         *routing_cases()]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("corpus") / "data", "--no-controllers") as server:
        yield server


@pytest.fixture(scope="module")
def session(served: Served) -> Iterator[requests.Session]:
    with requests.Session() as http:
        for key, kind in KINDS.items():
            body = kind.body(kind.seed)
            created = http.post(served.url + kind.collection, json=body, timeout=30)
            assert created.status_code == 201, (key, created.text)
        created = http.post(served.url + KINDS["namespace"].collection, json=KINDS["namespace"].body("corpus-ns"), timeout=30)
        assert created.status_code == 201, created.text
        yield http


def revision(http: requests.Session, url: str) -> str:
    """The storage's current revision: a consistent LIST answers at it."""
    reply = http.get(url + "/api/v1/namespaces", params={"limit": "1"}, timeout=30)
    assert reply.status_code == 200, reply.text
    return reply.json()["metadata"]["resourceVersion"]


def test_the_corpus_is_large_and_its_cases_distinct() -> None:
    assert len(CASES) >= 150
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.method for c in CASES} >= {"GET", "POST", "PUT", "PATCH", "DELETE"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input(case: Case, served: Served, session: requests.Session) -> None:
    before = revision(session, served.url)
    reply = case.send(session, served.url)
    after = revision(session, served.url)
    assert after == before, f"{case.id} changed the storage ({before} -> {after}): {reply.status_code} {reply.text[:300]}"
    if case.code == 200:  # a dry run answers as the real request would, and stores nothing
        assert reply.status_code == 200, reply.text[:500]
        return
    assert reply.status_code == case.code, reply.text[:500]
    assert reply.headers["Content-Type"].startswith("application/json")
    status = reply.json()
    assert status["kind"] == "Status" and status["apiVersion"] == "v1" and status["status"] == "Failure", status
    assert status["code"] == case.code and status["reason"] == case.reason, status
    message = status["message"]
    assert message and "Traceback" not in message and "Error(" not in message and "/work/" not in message, message
