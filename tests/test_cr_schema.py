"""Custom resources validated, pruned and defaulted against their CRD version's structural
schema, as apiextensions-apiserver does, through real HTTP (and kubectl) with a CRD made here."""

from __future__ import annotations

import asyncio
import copy
import subprocess
from typing import Any

import pytest
import yaml

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/schema.example.com/v1/namespaces/default/widgets"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "string", "enum": ["small", "large"]},
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "format": "int32"},
                "name": {"type": "string", "minLength": 3, "maxLength": 8, "pattern": "^[a-z]+$"},
                "ratio": {"type": "number", "exclusiveMinimum": True, "minimum": 0},
                "when": {"type": "string", "format": "date-time"},
                "port": {"x-kubernetes-int-or-string": True},
                "tags": {"type": "array", "maxItems": 3, "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "required": ["name"],
                                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                "labels": {"type": "object", "maxProperties": 2, "additionalProperties": {"type": "string"}},
                "note": {"type": "string", "nullable": True},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                          "properties": {"kept": {"type": "object", "properties": {"a": {"type": "string"}}}}},
                "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "x-kubernetes-preserve-unknown-fields": True},
                "choice": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                           "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
            },
        },
    },
}


def crd(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.schema.example.com"},
        "spec": {"group": "schema.example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": schema}}]},
    }


def widget(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "schema.example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


async def wait_served(api, check=None) -> None:
    """Until the CRD is Established and its resource served (and ``check`` of a probe holds)."""
    for _ in range(200):
        reply = await api.get(f"{CRDS}/widgets.schema.example.com")
        conditions = {c["type"]: c["status"] for c in (reply.body.get("status") or {}).get("conditions") or []}
        if conditions.get("Established") == "True" and (await api.get(WIDGETS)).status == 200:
            if check is None or await check():
                return
        await asyncio.sleep(0.05)
    raise AssertionError("the CRD was not served")


@pytest.fixture
async def widgets(api):
    assert (await api.post(CRDS, crd(SCHEMA))).status == 201
    await wait_served(api)
    return api


def causes(reply) -> list[tuple[str, str, str]]:
    return [(c["field"], c["reason"], c["message"]) for c in reply.body["details"]["causes"]]


async def test_a_valid_widget_is_stored(widgets):
    reply = await widgets.post(WIDGETS, widget("ok", {"size": "small", "replicas": 3, "name": "abc", "port": "http",
                                                       "when": "2024-01-02T03:04:05Z", "choice": {"a": "x"}}))
    assert reply.status == 201, reply
    assert reply.body["spec"]["replicas"] == 3


async def test_every_schema_violation_is_a_cause_of_one_422(widgets):
    spec = {"replicas": "three", "name": "ab", "ratio": 0, "when": "yesterday", "port": True,
            "tags": ["a", "b", "a", "c"], "labels": {"x": "1", "y": "2", "z": 3},
            "ports": [{"name": "web", "port": 80}, {"name": "web", "port": 81}],
            "choice": {"a": "1", "b": "2"}, "template": {"kind": "Pod", "metadata": {"name": "a/b"}}}
    reply = await widgets.post(WIDGETS, widget("bad", spec))
    assert reply.status == 422, reply
    assert reply.body["reason"] == "Invalid"
    assert reply.body["details"] == {**reply.body["details"], "name": "bad", "group": "schema.example.com", "kind": "Widget"}
    expected = [
        ("spec.replicas", "FieldValueTypeInvalid",
         'Invalid value: "string": spec.replicas in body must be of type integer: "string"'),
        ("spec.name", "FieldValueInvalid", 'Invalid value: "ab": spec.name in body should be at least 3 chars long'),
        ("spec.ratio", "FieldValueInvalid", "Invalid value: 0: spec.ratio in body should be greater than 0"),
        ("spec.when", "FieldValueTypeInvalid",
         'Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"'),
        ("spec.port", "FieldValueTypeInvalid",
         'Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'),
        ("spec.tags", "FieldValueTooMany", "Too many: 4: must have at most 3 items"),
        ("spec.labels", "FieldValueTooMany", "Too many: 3: must have at most 2 items"),
        ("spec.labels.z", "FieldValueTypeInvalid",
         'Invalid value: "integer": spec.labels.z in body must be of type string: "integer"'),
        ("<nil>", "FieldValueInvalid",
         'Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found 2 valid alternatives'),
        ("spec.size", "FieldValueRequired", "Required value"),
        ("spec.template.apiVersion", "FieldValueRequired", "Required value"),
        ("spec.template.metadata.name", "FieldValueInvalid", "Invalid value: \"a/b\": may not contain '/'"),
        ("spec.tags[2]", "FieldValueDuplicate", 'Duplicate value: "a"'),
        ("spec.ports[1]", "FieldValueDuplicate", 'Duplicate value: {"name":"web"}'),
    ]
    assert causes(reply) == expected
    head = 'Widget.schema.example.com "bad" is invalid: ['
    assert reply.body["message"] == head + ", ".join(f"{f}: {m}" for f, _, m in expected) + "]"
    assert (await widgets.get(f"{WIDGETS}/bad")).status == 404  # nothing stored


async def test_bounds_lengths_enum_and_pattern(widgets):
    reply = await widgets.post(WIDGETS, widget("w", {"size": "huge", "replicas": 0, "name": "abcdefghij"}))
    assert causes(reply) == [
        ("spec.size", "FieldValueNotSupported", 'Unsupported value: "huge": supported values: "small", "large"'),
        ("spec.replicas", "FieldValueInvalid", "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
        ("spec.name", "FieldValueTooLong", "Too long: may not be more than 8 bytes"),
    ]
    reply = await widgets.post(WIDGETS, widget("w", {"size": "small", "replicas": 11, "name": "ABC"}))
    assert causes(reply) == [
        ("spec.replicas", "FieldValueInvalid", "Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
        ("spec.name", "FieldValueInvalid", "Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'"),
    ]
    # an int32 field holds no more than an int32; an integer field no fraction
    reply = await widgets.post(WIDGETS, widget("w", {"size": "small", "replicas": 1.5}))
    assert causes(reply) == [
        ("spec.replicas", "FieldValueTypeInvalid",
         'Invalid value: "float64": spec.replicas in body must be of type int32: "float64"'),
        ("<nil>", "FieldValueInvalid",
         'Invalid value: "": Checked value must be of type integer with format int32 in spec.replicas'),
    ]
    # a float with an integral value is an integer, as in kube-openapi
    assert (await widgets.post(WIDGETS, widget("w", {"size": "small", "replicas": 2.0}))).status == 201


async def test_a_hostile_pattern_value_is_matched_in_linear_time(api):
    schema = copy.deepcopy(SCHEMA)
    schema["properties"]["spec"]["properties"]["name"] = {"type": "string", "pattern": "^(a+)+$"}
    assert (await api.post(CRDS, crd(schema))).status == 201
    await wait_served(api)
    loop = asyncio.get_running_loop()
    began = loop.time()
    reply = await api.post(WIDGETS, widget("w", {"size": "small", "name": "a" * 50_000 + "b"}))
    assert reply.status == 422 and causes(reply)[0][0] == "spec.name", reply
    assert loop.time() - began < 2


async def test_pruning_reports_unknown_fields_by_field_validation(widgets):
    body = widget("p", {"size": "small", "foo": 1, "ports": [{"name": "a", "bar": 2}],
                        "extra": {"anything": {"x": 1}, "kept": {"a": "y", "gone": 1}},
                        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t", "bogus": 1},
                                     "spec": {"free": True}}})
    body["status"] = {"whatever": 1}
    strict = await widgets.post(WIDGETS, body, params={"fieldValidation": "Strict"})
    assert strict.status == 400, strict
    assert strict.body["reason"] == "BadRequest"
    assert strict.body["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.extra.kept.gone", '
        'unknown field "spec.foo", unknown field "spec.ports[0].bar", unknown field "status", '
        'unknown field "spec.template.metadata.bogus"')
    assert (await widgets.get(f"{WIDGETS}/p")).status == 404
    warned = await widgets.post(WIDGETS, body, params={"fieldValidation": "Warn"})
    assert warned.status == 201, warned
    assert warned.headers.getall("Warning") == [
        '299 - "unknown field \\"spec.extra.kept.gone\\""', '299 - "unknown field \\"spec.foo\\""',
        '299 - "unknown field \\"spec.ports[0].bar\\""', '299 - "unknown field \\"status\\""',
        '299 - "unknown field \\"spec.template.metadata.bogus\\""']
    stored = (await widgets.get(f"{WIDGETS}/p")).body
    assert "status" not in stored
    assert stored["spec"]["ports"] == [{"name": "a"}]
    assert stored["spec"]["extra"] == {"anything": {"x": 1}, "kept": {"a": "y"}}
    assert stored["spec"]["template"] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t"},
                                          "spec": {"free": True}}


async def test_nulls_are_dropped_unless_nullable(widgets):
    reply = await widgets.post(WIDGETS, widget("n", {"size": "small", "replicas": None, "note": None}))
    assert reply.status == 201, reply
    assert reply.body["spec"] == {"size": "small", "note": None}


async def test_malformed_embedded_metadata_is_a_400(widgets):
    body = widget("m", {"size": "small", "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": "x"}}})
    reply = await widgets.post(WIDGETS, body)
    assert reply.status == 400, reply
    assert reply.body["message"].startswith(
        'Widget in version "v1" cannot be handled as a Widget: spec.template.metadata: Invalid value: ')
    assert (await widgets.get(f"{WIDGETS}/m")).status == 404


async def test_defaults_on_create_update_and_read_after_the_crd_changes(widgets):
    assert (await widgets.post(WIDGETS, widget("old", {"size": "small"}))).status == 201
    current = (await widgets.get(f"{CRDS}/widgets.schema.example.com")).body
    props = current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    props["replicas"]["default"] = 2
    props["ports"]["items"]["properties"]["port"]["default"] = 8080
    props["labels"]["default"] = {"team": "a"}
    assert (await widgets.put(f"{CRDS}/widgets.schema.example.com", current)).status == 200

    async def defaulted() -> bool:
        return (await widgets.get(f"{WIDGETS}/old")).body["spec"].get("replicas") == 2
    await wait_served(widgets, defaulted)

    # read: the object stored before the defaults existed reads with them, in GET and LIST
    old = (await widgets.get(f"{WIDGETS}/old")).body
    assert old["spec"] == {"size": "small", "replicas": 2, "labels": {"team": "a"}}
    listed = (await widgets.get(WIDGETS)).body["items"]
    assert listed[0]["spec"] == old["spec"]
    # an update that changes nothing but what defaulting added bumps no generation
    same = await widgets.put(f"{WIDGETS}/old", old)
    assert same.status == 200 and same.body["metadata"]["generation"] == 1, same
    # create: nested defaults inside arrays; an explicit value wins; null takes the default
    made = await widgets.post(WIDGETS, widget("new", {"size": "large", "replicas": None, "ports": [{"name": "a"}, {"name": "b", "port": 1}]}))
    assert made.status == 201, made
    assert made.body["spec"] == {"size": "large", "replicas": 2, "labels": {"team": "a"},
                                 "ports": [{"name": "a", "port": 8080}, {"name": "b", "port": 1}]}
    # update: a field removed is defaulted again
    patched = await widgets.patch(f"{WIDGETS}/new", {"spec": {"replicas": None, "labels": None}})
    assert patched.status == 200, patched
    assert patched.body["spec"]["replicas"] == 2 and patched.body["spec"]["labels"] == {"team": "a"}


async def test_an_update_is_validated_and_a_rejected_one_changes_nothing(widgets):
    made = await widgets.post(WIDGETS, widget("u", {"size": "small", "replicas": 1}))
    assert made.status == 201
    reply = await widgets.patch(f"{WIDGETS}/u", {"spec": {"replicas": 20, "tags": ["x", "x"]}})
    assert reply.status == 422, reply
    assert causes(reply) == [
        ("spec.replicas", "FieldValueInvalid", "Invalid value: 20: spec.replicas in body should be less than or equal to 10"),
        ("spec.tags[1]", "FieldValueDuplicate", 'Duplicate value: "x"'),
    ]
    stored = (await widgets.get(f"{WIDGETS}/u")).body
    assert stored["spec"] == {"size": "small", "replicas": 1}
    assert stored["metadata"]["resourceVersion"] == made.body["metadata"]["resourceVersion"]


def test_kubectl_shows_the_validation_errors(kubectl):
    kubectl.apply_file("apply", yaml.safe_dump(crd(SCHEMA)))
    kubectl.run("wait", "--for=condition=Established", "crd/widgets.schema.example.com", "--timeout=20s")
    bad = yaml.safe_dump(widget("k", {"size": "medium", "replicas": "x"}))
    for _ in range(50):  # discovery may lag the Established condition by a moment
        done = kubectl.run("apply", "-f", "-", stdin=bad, check=False)
        if "the server doesn't have a resource type" not in done.stderr and "no matches for kind" not in done.stderr:
            break
        subprocess.run(["sleep", "0.2"], check=True)
    assert done.returncode == 1
    assert 'The Widget "k" is invalid: ' in done.stderr, done.stderr
    assert 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"' in done.stderr
    assert 'spec.size: Unsupported value: "medium": supported values: "small", "large"' in done.stderr
    # kubectl asks for strict field validation: the unknown field is an error of its own
    good = yaml.safe_dump(widget("k", {"size": "small", "foo": 1}))
    done = kubectl.run("apply", "-f", "-", stdin=good, check=False)
    assert done.returncode == 1 and 'unknown field "spec.foo"' in done.stderr, done.stderr
    done = kubectl.run("apply", "--validate=warn", "-f", "-", stdin=good)
    assert 'unknown field "spec.foo"' in done.stderr
    assert kubectl.json("get", "widget", "k")["spec"] == {"size": "small"}


async def test_updates_ratchet_errors_of_values_stored_before_the_schema_tightened(widgets):
    stored = {"size": "small", "replicas": 1, "name": "abcdefgh", "labels": {"a": "xyz"},
              "ports": [{"name": "web", "port": 80}], "tags": ["a", "b"]}
    assert (await widgets.post(WIDGETS, widget("r", stored))).status == 201
    current = (await widgets.get(f"{CRDS}/widgets.schema.example.com")).body
    props = current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    props["name"]["maxLength"] = 4  # "abcdefgh" is now too long
    props["size"]["enum"] = ["large"]  # "small" is no longer allowed
    props["labels"]["additionalProperties"]["maxLength"] = 2
    props["ports"]["items"]["properties"]["port"]["minimum"] = 1000
    props["tags"]["items"]["maxLength"] = 0
    assert (await widgets.put(f"{CRDS}/widgets.schema.example.com", current)).status == 200

    async def tightened() -> bool:
        probe = await widgets.post(f"{WIDGETS}?dryRun=All", widget("p", {"size": "large", "name": "abcdefgh"}))
        return probe.status == 422
    await wait_served(widgets, tightened)

    # a create is checked in full
    fresh = await widgets.post(WIDGETS, widget("n", stored))
    assert [c[0] for c in causes(fresh)] == ["spec.size", "spec.name", "spec.tags[0]", "spec.tags[1]",
                                            "spec.ports[0].port", "spec.labels.a"], fresh
    # an update changing another field succeeds: the stored invalid values ratchet
    changed = await widgets.patch(f"{WIDGETS}/r", {"spec": {"replicas": 2, "labels": {"b": "ok"}}})
    assert changed.status == 200, changed
    # a listType=map item correlates by its key: unchanged, it ratchets even when the list moves
    moved = await widgets.patch(f"{WIDGETS}/r", {"spec": {"ports": [{"name": "new", "port": 2000}, {"name": "web", "port": 80}]}})
    assert moved.status == 200, moved
    # changing an offending field to another invalid value fails, with only that field's error
    for patch, field, message in [
        ({"name": "abcdefghi"}, "spec.name", "Too long: may not be more than 4 bytes"),
        ({"size": "medium"}, "spec.size", 'Unsupported value: "medium": supported values: "large"'),
        ({"labels": {"a": "xyzw", "b": "ok"}}, "spec.labels.a", None),
        ({"ports": [{"name": "new", "port": 2000}, {"name": "web", "port": 81}]}, "spec.ports[1].port", None),
        # an atomic list does not correlate by item: a changed list reports its unchanged items too
        ({"tags": ["a", "b", "c"]}, "spec.tags[0]", None),
    ]:
        reply = await widgets.patch(f"{WIDGETS}/r", {"spec": patch})
        assert reply.status == 422, (patch, reply)
        assert causes(reply)[0][0] == field, (patch, causes(reply))
        if message is not None:
            assert [c[0] for c in causes(reply)] == [field] and causes(reply)[0][2] == message, causes(reply)
    final = (await widgets.get(f"{WIDGETS}/r")).body["spec"]
    assert final["name"] == "abcdefgh" and final["size"] == "small" and final["replicas"] == 2
