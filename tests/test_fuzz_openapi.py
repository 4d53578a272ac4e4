"""A bounded property-based fuzz of every operation our own OpenAPI documents describe.

Hypothesis builds requests from the served `/openapi/v3` documents: an operation, its path
parameters, any of its query parameters, and a body shaped by its schema (with values of the
wrong type, hostile strings and huge numbers mixed in), in each content type the operation
accepts. Whatever it sends, the server answers below 500, every error is a metav1.Status whose
code is the HTTP status, and the server stays ready.

CI runs a few hundred requests (a few seconds, always the same ones); set KPLANE_FUZZ_EXAMPLES
to run longer, with new random requests each time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
import requests
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import KINDS
from tests.servers import Served, serving

EXAMPLES = int(os.environ.get("KPLANE_FUZZ_EXAMPLES", "0"))
MAX_DEPTH = 5  # schema nesting followed before a value becomes a scalar

HOSTILE_STRINGS = st.sampled_from([
    "", " ", "-", "a/b", "../x", "%00", "\x00", "\u202e", "😀", "x" * 300, "*", "!", "{}", "[]", "null", "1e400",
    "9223372036854775808", "-1", "0", "true", "a,b", "a=b", "a in (b", "$patch", "metadata.name=x",
])
HOSTILE_VALUES = st.one_of(
    HOSTILE_STRINGS, st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(), st.none(), st.just([]), st.just({}), st.just({"a": {"b": [1, {"c": None}]}}),
)
NAMES = st.one_of(st.sampled_from(["seed", "seed", "x", "default", "kube-system"]),
                  st.from_regex(r"[a-z0-9]([-a-z0-9]{0,12}[a-z0-9])?", fullmatch=True), HOSTILE_STRINGS)
QUERY_VALUES = {
    "dryRun": ["All", "", "Some"],
    "fieldValidation": ["Strict", "Warn", "Ignore", "Loose"],
    "fieldManager": ["fuzz", "", "x" * 200],
    "force": ["true", "false", "maybe"],
    "propagationPolicy": ["Background", "Foreground", "Orphan", "Sideways"],
    "gracePeriodSeconds": ["0", "30", "-1", "x", "99999999999999999999"],
    "labelSelector": ["app=a", "app in (a,b)", "!app", "a in (b", "a=-b-"],
    "fieldSelector": ["metadata.name=seed", "metadata.namespace!=x", "spec.nonsense=x", "metadata.name"],
    "limit": ["1", "0", "-1", "500", "99999999999999999999", "x"],
    "continue": ["", "!!!", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIifQ"],
    "resourceVersion": ["", "0", "1", "abc", "-1", "99999999"],
    "resourceVersionMatch": ["", "Exact", "NotOlderThan", "Sometime"],
    "allowWatchBookmarks": ["true", "false", "x"],
}
PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml")


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    query: tuple[str, ...]
    body_types: tuple[str, ...]
    schema: dict[str, Any] | None
    api_version: str
    kind: str


def load_operations(url: str) -> tuple[list[Operation], dict[str, Any]]:
    """Every operation of every document the server's OpenAPI v3 index lists, and their schemas."""
    operations: list[Operation] = []
    components: dict[str, Any] = {}
    index = requests.get(f"{url}/openapi/v3", timeout=30).json()
    for entry in index["paths"].values():
        document = requests.get(url + entry["serverRelativeURL"], timeout=30).json()
        components.update(document.get("components", {}).get("schemas", {}))
        for path, item in document["paths"].items():
            for method, op in item.items():
                if method == "parameters":
                    continue
                gvk = op.get("x-kubernetes-group-version-kind", {})
                content = op.get("requestBody", {}).get("content", {})
                schema = next(iter(content.values()), {}).get("schema") if content else None
                group, version = gvk.get("group", ""), gvk.get("version", "v1")
                operations.append(Operation(
                    method.upper(), path, tuple(p["name"] for p in op.get("parameters", []) if p["in"] == "query"),
                    tuple(content), schema, f"{group}/{version}" if group else version, gvk.get("kind", "")))
    return operations, components


def values(schema: dict[str, Any] | None, components: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values shaped like ``schema``, and now and then a hostile one in its place."""
    return st.one_of(_shaped(schema or {}, components, depth), HOSTILE_VALUES) if depth else _shaped(schema or {}, components, depth)


def _shaped(schema: dict[str, Any], components: dict[str, Any], depth: int) -> st.SearchStrategy[Any]:
    if "$ref" in schema:
        return _shaped(components.get(schema["$ref"].rsplit("/", 1)[-1], {}), components, depth)
    if schema.get("allOf"):
        return _shaped(schema["allOf"][0], components, depth)
    if schema.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(min_value=-5, max_value=100), st.sampled_from(["25%", "http", "x"]))
    kind = schema.get("type", "object" if "properties" in schema else "")
    if kind == "object" and depth < MAX_DEPTH:
        properties = schema.get("properties")
        if properties:
            return st.fixed_dictionaries({}, optional={
                name: st.deferred(lambda s=sub: values(s, components, depth + 1)) for name, sub in properties.items()})
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            return st.dictionaries(st.one_of(NAMES, st.text(max_size=8)), values(extra, components, depth + 1), max_size=3)
        return st.dictionaries(st.text(max_size=5), HOSTILE_VALUES, max_size=2)
    if kind == "array" and depth < MAX_DEPTH:
        return st.lists(values(schema.get("items", {}), components, depth + 1), max_size=3)
    if kind == "integer":
        return st.integers(min_value=-10, max_value=1000)
    if kind == "number":
        return st.floats(min_value=-10, max_value=1000)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        return st.one_of(NAMES, st.sampled_from(["2026-01-01T00:00:00Z", "TCP", "Always", "ClusterIP", "aGk="]))
    return HOSTILE_VALUES


@st.composite
def requests_from(draw: st.DrawFn, operations: list[Operation], components: dict[str, Any]) -> dict[str, Any]:
    op = draw(st.sampled_from(operations))
    path = op.path
    namespace = draw(st.one_of(st.just("default"), NAMES))  # mostly where the seeded objects are
    path = path.replace("{namespace}", quote(namespace, safe="") or "x").replace("{name}", quote(draw(NAMES), safe="") or "x")
    query = {}
    choices = [name for name in op.query if name not in ("watch", "timeoutSeconds")]
    for name in draw(st.lists(st.sampled_from(choices), unique=True, max_size=4)) if choices else ():
        query[name] = draw(st.one_of(st.sampled_from(QUERY_VALUES.get(name, ["x"])), HOSTILE_STRINGS))
    if "watch" in op.query and draw(st.integers(0, 19)) == 0:  # now and then a watch, which must end by itself
        query.update(watch=draw(st.sampled_from(["true", "1", "maybe"])), timeoutSeconds=draw(st.sampled_from(["1", "x"])))
    request: dict[str, Any] = {"method": op.method, "url": path, "params": query, "headers": {}}
    if not op.body_types:
        return request
    content_type = draw(st.sampled_from(op.body_types))
    if content_type == "application/json-patch+json":
        body: Any = draw(st.lists(st.fixed_dictionaries(
            {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "explode"]),
             "path": st.sampled_from(["/metadata/labels/a", "/spec", "/spec/replicas", "", "/x/0", "/metadata/name"])},
            optional={"value": HOSTILE_VALUES, "from": st.sampled_from(["/spec", "/nothere"])}), max_size=3))
    else:
        body = draw(values(op.schema, components))
        if isinstance(body, dict) and draw(st.integers(0, 3)):  # mostly of the right kind, to get past the first checks
            body.update(apiVersion=op.api_version, kind=op.kind)
            if isinstance(body.get("metadata"), dict) and "name" in op.path:
                body["metadata"]["name"] = path.rsplit("/", 1)[-1]
    if content_type == "application/apply-patch+yaml":
        query.setdefault("fieldManager", "fuzz")
    raw = yaml.safe_dump(body).encode() if content_type.endswith("yaml") else json.dumps(body).encode()
    request.update(data=draw(st.one_of(st.just(raw), st.binary(max_size=40))) if draw(st.integers(0, 9)) == 0 else raw,
                   headers={"Content-Type": content_type})
    return request


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A server holding an object named ``seed`` of every kind, for requests to find."""
    with serving(tmp_path_factory.mktemp("fuzz") / "data", "--no-controllers") as server:
        for kind in KINDS.values():
            created = requests.post(server.url + kind.collection, json=kind.body(kind.seed), timeout=30)
            assert created.status_code == 201, created.text
        yield server


@pytest.fixture(scope="module")
def operations(served: Served) -> tuple[list[Operation], dict[str, Any]]:
    found = load_operations(served.url)
    assert {op.method for op in found[0]} == {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}  # the last two: proxies
    return found


def test_every_served_operation_answers_below_500(served: Served, operations: tuple[list[Operation], dict[str, Any]]) -> None:
    ops, components = operations
    http = requests.Session()

    @settings(max_examples=EXAMPLES or 300, deadline=None, database=None, derandomize=not EXAMPLES,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(requests_from(ops, components))
    def check(request: dict[str, Any]) -> None:
        reply = http.request(timeout=30, **{**request, "url": served.url + request["url"]})
        if reply.status_code == 504 and "ResourceVersionTooLarge" in reply.text:
            return  # a list from a future resourceVersion: kube-apiserver's 504 too, by design
        if reply.status_code == 503 and "/proxy" in request["url"] and '"reason":"ServiceUnavailable"' in reply.text:
            return  # a proxy to a Service without ready endpoints: kube-apiserver's 503 too
        assert reply.status_code < 500, (request, reply.status_code, reply.text[:500])
        proxied = "/proxy" in request["url"] and reply.headers.get("Content-Type", "").startswith("text/plain")
        # a proxy relays its backend's answer (a simulated kubelet's 404); a HEAD answer has no body
        if reply.status_code >= 400 and not proxied and request["method"] != "HEAD":
            status = reply.json()
            assert status["kind"] == "Status" and status["code"] == reply.status_code, (request, status)

    try:
        check()
    finally:
        http.close()
    assert requests.get(f"{served.url}/readyz", timeout=10).status_code == 200
