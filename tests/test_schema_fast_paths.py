"""The decoder's and converters' fast paths against the slow paths they stand for.

Decoding takes a leaf's value without marshmallow when its type and range say marshmallow would
load it unchanged (``FieldShape.plain``); ``object_to_wire`` and ``wire_to_object`` convert in
one walk what ``python_to_wire(unbuild(...))`` and ``build(wire_to_python(...))`` convert in two.
Both are checked here over every schema of every plugin, so a new field class or schema feature
that the fast paths do not know fails here, not in a client's object.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from typing import Any

import pytest
from marshmallow import ValidationError

from kplane.core.plugins import PluginManager
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.registry import Registry
from kplane.core.runtime.fields import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN
from kplane.core.runtime.objects import build, unbuild
from kplane.core.runtime.schema import FieldShape, Shape, object_to_wire, python_to_wire, wire_to_object, wire_to_python
from kplane.core.runtime.scheme import Scheme
from tests.builders import KINDS, PODSPEC

# Values around every boundary the fast path draws: types JSON can carry, Python's bool-is-int,
# the int32 and int64 limits and one past them, strings marshmallow might treat specially.
CANDIDATES: list[Any] = [
    True, False, 0, 1, -1, INT32_MAX, INT32_MAX + 1, INT32_MIN, INT32_MIN - 1, INT64_MAX, INT64_MAX + 1, INT64_MIN,
    INT64_MIN - 1, 2**70, 1.0, 1.5, "", "x", "1", "true", "null", "\x00", "😀", "a" * 5000,
]

RICH_POD_SPEC = {
    **PODSPEC,
    "containers": [{
        "name": "c", "image": "nginx:1.25", "args": ["-g", "daemon off;"], "env": [{"name": "A", "value": "1"}],
        "ports": [{"containerPort": 80, "protocol": "TCP"}], "resources": {"limits": {"cpu": "500m", "memory": "64Mi"}},
        "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5},
        "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "v", "mountPath": "/data", "readOnly": True}],
    }],
    "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}}],
    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30}],
    "terminationGracePeriodSeconds": 0, "hostNetwork": False,
}
# Bodies of kinds whose versions have no conversion (the one-walk paths' kinds), with many of
# the field classes a schema has: nested structs, lists and maps of structs, int-or-strings,
# quantities, booleans that are false and integers that are zero (Go's zero values).
RICH = [
    ("batch/v1", "Job", {"spec": {
        "parallelism": 0, "backoffLimit": 6, "completionMode": "Indexed", "completions": 3, "suspend": False,
        "template": {"metadata": {"labels": {"app": "a"}, "annotations": {"a": ""}},
                     "spec": {**RICH_POD_SPEC, "restartPolicy": "Never", "initContainers": [], "imagePullSecrets": []}}}}),
    ("v1", "Service", {"spec": {
        "type": "NodePort", "selector": {"app": "a"}, "sessionAffinity": "None",
        "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
                  {"name": "metrics", "port": 9090, "targetPort": 9090}]}}),
    ("v1", "ConfigMap", {"data": {"a": "", "b": "😀"}, "binaryData": {"c": "AAE="}, "immutable": False}),
]


@pytest.fixture(scope="module")
def scheme() -> Scheme:
    """Every installed plugin's types, registered as the server registers them (nothing stored)."""
    manager = PluginManager()
    manager.load_entry_points()
    built = Scheme()
    asyncio.run(manager.setup(built, Registry(built, None, AdmissionChain()), AdmissionChain()))  # type: ignore[arg-type]
    return built


def leaves(shape: Shape, seen: set[int] | None = None) -> Iterator[FieldShape]:
    """Every leaf of a schema, following nested schemas once each (some are recursive)."""
    seen = set() if seen is None else seen
    if id(shape) in seen:
        return
    seen.add(id(shape))
    for fs in shape.by_key.values():
        if fs.child is None:
            yield fs
        else:
            yield from leaves(fs.child, seen)


def shapes(scheme: Scheme) -> Iterator[tuple[str, Shape]]:
    for rt in scheme.types():
        for name, version in rt.versions.items():
            yield f"{rt.group or 'core'}/{name} {rt.kind}", version.shape


def fast_takes(fs: FieldShape, value: Any) -> bool:
    """What ``schema._load`` asks before it takes a leaf's value as it is."""
    return type(value) is fs.plain and (fs.bounds is None or fs.bounds[0] <= value <= fs.bounds[1])


def test_a_leaf_taken_as_it_is_is_one_marshmallow_loads_unchanged(scheme: Scheme) -> None:
    checked = 0
    for where, shape in shapes(scheme):
        for fs in leaves(shape):
            if fs.plain is None:
                continue
            for value in CANDIDATES:
                try:
                    loaded = fs.field.deserialize(value)
                    unchanged = type(loaded) is type(value) and loaded == value
                except ValidationError:
                    unchanged = False
                # Taken as it is exactly when marshmallow would give it back as it is; a value
                # marshmallow changes or refuses goes through marshmallow.
                assert fast_takes(fs, value) == (unchanged and type(value) is fs.plain), (where, fs.key, value)
                checked += 1
    assert checked > 10_000  # every plugin's schemas were walked, not a few


def test_one_walk_conversions_equal_the_two_walk_ones(scheme: Scheme) -> None:
    bodies = [(k.api_version, k.kind, k.body()) for k in KINDS.values()]
    bodies += [(api_version, kind, {"apiVersion": api_version, "kind": kind, "metadata": {"name": "rich"}, **content})
               for api_version, kind, content in RICH]
    compared: set[tuple[str, str]] = set()
    for api_version, kind, body in bodies:
        group, _, version = api_version.rpartition("/")
        rt = scheme.by_kind(group, kind)
        assert rt is not None, kind
        obj, _ = rt.decode(copy.deepcopy(body), version)
        for name, v in rt.versions.items():
            if v.from_internal is not None or v.to_internal is not None:
                continue  # a converted version takes the two-walk path itself
            wire, two_walks = object_to_wire(v.shape, obj), python_to_wire(v.shape, unbuild(obj))
            assert wire == two_walks and list(wire) == list(two_walks), (kind, name)  # key order too
            assert wire_to_object(v.shape, rt.internal, wire) == build(rt.internal, wire_to_python(v.shape, wire)), (kind, name)
            compared.add((group, kind))
    assert {(a.rpartition("/")[0], k) for a, k, _ in RICH} <= compared and len(compared) > len(KINDS) // 2
