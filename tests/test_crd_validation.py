"""CustomResourceDefinitions are validated as kube-apiserver validates them: a bad CRD is a 422
Invalid (400 for what strict decoding refuses) with Kubernetes' field paths, messages and
causes, and nothing is stored."""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any

import pytest
import yaml

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NAME = "widgets.example.com"


def schema(**spec_properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": spec_properties}}}


def crd(openapi: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """A valid CRD (one version), with ``spec`` fields replaced."""
    body = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": NAME},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": openapi or schema(size={"type": "integer"})}}]},
    }
    body["spec"].update(spec)
    return body


def two_versions(v1: dict[str, Any], v2: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": v1}},
            {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": v2}}]


async def refused(api: Any, body: dict[str, Any], code: int = 422) -> dict[str, Any]:
    """POST ``body``; it must be refused with ``code`` and leave nothing stored."""
    reply = await api.post(CRDS, body)
    assert reply.status == code, reply
    name = body["metadata"]["name"]
    assert (await api.get(f"{CRDS}/{name}")).status == 404
    return reply.body


BAD = {
    "name not plural.group": (
        {**crd(), "metadata": {"name": "gadgets.example.com"}},
        [("FieldValueInvalid", "metadata.name", 'Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group')]),
    "group without a dot": (
        {**crd(group="example"), "metadata": {"name": "widgets.example"}},
        [("FieldValueInvalid", "spec.group", 'Invalid value: "example": should be a domain with at least one dot')]),
    "scope": (
        crd(scope="Global"),
        [("FieldValueNotSupported", "spec.scope", 'Unsupported value: "Global": supported values: "Cluster", "Namespaced"')]),
    "names": (
        crd(names={"plural": "widgets", "singular": "Widget", "kind": "Widget", "listKind": "Widget", "shortNames": ["w_1"]}),
        [("FieldValueInvalid", "spec.names.singular", 'Invalid value: "Widget": a DNS-1035 label must consist of lower case '
          "alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character "
          "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"),
         ("FieldValueInvalid", "spec.names.shortNames[0]", None),
         ("FieldValueInvalid", "spec.names.listKind", 'Invalid value: "Widget": kind and listKind may not be the same')]),
    "no storage version": (
        crd(versions=[{"name": "v1", "served": True, "storage": False, "schema": {"openAPIV3Schema": schema()}}]),
        [("FieldValueInvalid", "spec.versions", None), ("FieldValueInvalid", "status.storedVersions",
                                                         "Invalid value: []: must have at least one stored version")]),
    "version name": (
        crd(versions=[{"name": "V1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema()}}]),
        [("FieldValueInvalid", "spec.versions[0].name", None), ("FieldValueInvalid", "spec.version", None)]),
    "no schema": (
        crd(versions=[{"name": "v1", "served": True, "storage": True}]),
        [("FieldValueRequired", "spec.versions[0].schema.openAPIV3Schema", "Required value")]),
    "type missing (one schema: spec.validation)": (
        crd(schema(size={"description": "how big"})),
        [("FieldValueRequired", "spec.validation.openAPIV3Schema.properties[spec].properties[size].type",
          "Required value: must not be empty for specified object fields")]),
    "type missing in one of two schemas": (
        crd(versions=two_versions(schema(), schema(size={}))),
        [("FieldValueRequired", "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[size].type",
          "Required value: must not be empty for specified object fields")]),
    "array without items": (
        crd(schema(tags={"type": "array"})),
        [("FieldValueRequired", "spec.validation.openAPIV3Schema.properties[spec].properties[tags].items",
          "Required value: must be specified")]),
    "$ref and uniqueItems": (
        crd(schema(a={"$ref": "#/definitions/a"}, b={"type": "array", "items": {"type": "string"}, "uniqueItems": True})),
        [("FieldValueForbidden", "spec.validation.openAPIV3Schema.properties[spec].properties[a].$ref", "Forbidden: $ref is not supported"),
         ("FieldValueForbidden", "spec.validation.openAPIV3Schema.properties[spec].properties[b].uniqueItems",
          "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic")]),
    "properties and additionalProperties": (
        crd(schema(m={"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}})),
        [("FieldValueForbidden", "spec.validation.openAPIV3Schema.properties[spec].properties[m].additionalProperties",
          "Forbidden: additionalProperties and properties are mutual exclusive")]),
    "type in anyOf": (
        crd(schema(a={"type": "string", "anyOf": [{"type": "string"}, {"pattern": "x"}]})),
        [("FieldValueForbidden", "spec.validation.openAPIV3Schema.properties[spec].properties[a].anyOf[0].type",
          "Forbidden: must be empty to be structural")]),
    "patterns RE2 refuses, in Go's words": (
        crd(schema(a={"type": "string", "pattern": "^(?=x)"}, b={"type": "string", "pattern": "a("},
                   c={"type": "string", "pattern": "(a)\\1"}, d={"type": "string", "pattern": "\\C"})),
        [("FieldValueInvalid", "spec.validation.openAPIV3Schema.properties[spec].properties[a].pattern",
          'Invalid value: "^(?=x)": must be a valid regular expression, but isn\'t: '
          "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"),
         ("FieldValueInvalid", "spec.validation.openAPIV3Schema.properties[spec].properties[b].pattern",
          'Invalid value: "a(": must be a valid regular expression, but isn\'t: error parsing regexp: missing closing ): `a(`'),
         ("FieldValueInvalid", "spec.validation.openAPIV3Schema.properties[spec].properties[c].pattern",
          'Invalid value: "(a)\\\\1": must be a valid regular expression, but isn\'t: '
          "error parsing regexp: invalid escape sequence: `\\1`"),
         ("FieldValueInvalid", "spec.validation.openAPIV3Schema.properties[spec].properties[d].pattern",
          'Invalid value: "\\\\C": must be a valid regular expression, but isn\'t: '
          "error parsing regexp: invalid escape sequence: `\\C`")]),
    "value validation without structure": (
        {**crd(), "spec": {**crd()["spec"], "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {"spec": {"type": "object"}}, "anyOf": [{"properties": {"status": {"required": ["x"]}}}]}}}]}},
        [("FieldValueRequired", "spec.validation.openAPIV3Schema.properties[status]",
          "Required value: because it is defined in spec.validation.openAPIV3Schema.anyOf[0].properties[status]")]),
    "embedded resource": (
        crd(schema(e={"type": "string", "x-kubernetes-embedded-resource": True})),
        [("FieldValueInvalid", "spec.validation.openAPIV3Schema.properties[spec].properties[e].type",
          'Invalid value: "string": must be object if x-kubernetes-embedded-resource is true'),
         ("FieldValueRequired", "spec.validation.openAPIV3Schema.properties[spec].properties[e].properties",
          "Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields")]),
    "int-or-string with preserve-unknown-fields": (
        crd(schema(port={"x-kubernetes-int-or-string": True, "x-kubernetes-preserve-unknown-fields": True})),
        [("FieldValueInvalid", "spec.validation.openAPIV3Schema.properties[spec].properties[port].x-kubernetes-preserve-unknown-fields",
          "Invalid value: true: must be false if x-kubernetes-int-or-string is true")]),
    "list-map keys neither required nor defaulted": (
        crd(schema(ports={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                          "items": {"type": "object", "properties": {"port": {"type": "integer"}}}})),
        [("FieldValueRequired", "spec.validation.openAPIV3Schema.properties[spec].properties[ports].items.properties[port].default",
          "Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property")]),
    "list-type on an object": (
        crd(schema(o={"type": "object", "x-kubernetes-list-type": "set"})),
        [("FieldValueInvalid", "spec.validation.openAPIV3Schema.properties[spec].properties[o].type",
          'Invalid value: "object": must be array if x-kubernetes-list-type is specified')]),
    "metadata at the root": (
        crd({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}),
        [("FieldValueForbidden", "spec.validation.openAPIV3Schema.properties[metadata]",
          "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified")]),
    "default with a pruned field": (
        crd(schema(o={"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": "y"}})),
        [("FieldValueInvalid", "spec.validation.openAPIV3Schema.properties[spec].properties[o].default",
          'Invalid value: {"a":"x","b":"y"}: must not have unknown fields')]),
    "default in top-level metadata": (
        crd({"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}}),
        [("FieldValueForbidden", "spec.validation.openAPIV3Schema.properties[metadata].default",
          "Forbidden: must not be set in top-level metadata")]),
    "status subresource with a non-object root": (
        crd({"type": "object", "properties": {"status": {"type": "object"}}, "additionalProperties": {"type": "string"}},
            versions=[{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                       "schema": {"openAPIV3Schema": {"type": "object", "nullable": True}}}]),
        [("FieldValueInvalid", "spec.validation.openAPIV3Schema", None),
         ("FieldValueForbidden", "spec.validation.openAPIV3Schema.nullable", "Forbidden: nullable cannot be true at the root")]),
    "scale paths": (
        crd(versions=[{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema()},
                       "subresources": {"scale": {"specReplicasPath": ".status.replicas", "statusReplicasPath": "status.replicas"}}}]),
        [("FieldValueInvalid", "spec.subresources.scale.specReplicasPath", 'Invalid value: ".status.replicas": should be a json path under .spec'),
         ("FieldValueInvalid", "spec.subresources.scale.statusReplicasPath",
          'Invalid value: "status.replicas": must be a simple json path starting with .')]),
    "printer columns": (
        crd(versions=[{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema()},
                       "additionalPrinterColumns": [{"name": "Size", "type": "float", "jsonPath": ""}]}]),
        [("FieldValueInvalid", "spec.additionalPrinterColumns[0].type", 'Invalid value: "float": must be one of boolean,date,integer,number,string'),
         ("FieldValueRequired", "spec.additionalPrinterColumns[0].JSONPath", "Required value")]),
    "selectable fields": (
        crd(versions=[{"name": "v1", "served": True, "storage": True,
                       "schema": {"openAPIV3Schema": schema(size={"type": "integer"}, o={"type": "object"})},
                       "selectableFields": [{"jsonPath": ".spec.size"}, {"jsonPath": ".spec.o"}, {"jsonPath": ".spec.nope"},
                                            {"jsonPath": ".spec.size"}]}]),
        [("FieldValueInvalid", "spec.selectableFields[1].jsonPath",
          'Invalid value: ".spec.o": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'),
         ("FieldValueInvalid", "spec.selectableFields[2].jsonPath", 'Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field'),
         ("FieldValueDuplicate", "spec.selectableFields[3].jsonPath", 'Duplicate value: ".spec.size"')]),
    "too many selectable fields": (
        crd(versions=[{"name": "v1", "served": True, "storage": True,
                       "schema": {"openAPIV3Schema": schema(**{f"f{i}": {"type": "string"} for i in range(9)})},
                       "selectableFields": [{"jsonPath": f".spec.f{i}"} for i in range(9)]}]),
        [("FieldValueTooMany", "spec.selectableFields", "Too many: 9: must have at most 8 items")]),
    "deprecation warning": (
        crd(versions=[{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema()},
                       "deprecated": True, "deprecationWarning": "old\tone"}]),
        [("FieldValueInvalid", "spec.versions[0].deprecationWarning",
          'Invalid value: "old\\tone": must only contain printable UTF-8 characters; non-printable character found at index 3')]),
    "webhook conversion without a client config": (
        crd(conversion={"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v2"]}}),
        [("FieldValueRequired", "spec.conversion.webhookClientConfig", "Required value: required when strategy is set to Webhook"),
         ("FieldValueInvalid", "spec.conversion.conversionReviewVersions", 'Invalid value: ["v2"]: must include at least one of v1, v1beta1')]),
    "webhook url": (
        crd(conversion={"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                                                            "clientConfig": {"url": "http://hook.example.com/convert?x=1"}}}),
        [("FieldValueInvalid", "spec.conversion.webhookClientConfig.url",
          "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"),
         ("FieldValueInvalid", "spec.conversion.webhookClientConfig.url", 'Invalid value: "x=1": query parameters are not permitted in the URL')]),
    "webhook service": (
        crd(conversion={"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {
            "service": {"namespace": "default", "name": "hook", "port": 0, "path": "convert"}}}}),
        [("FieldValueInvalid", "spec.conversion.webhookClientConfig.service.port",
          "Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"),
         ("FieldValueInvalid", "spec.conversion.webhookClientConfig.service.path", "Invalid value: \"convert\": must start with a '/'")]),
    "preserveUnknownFields": (
        crd(preserveUnknownFields=True),
        [("FieldValueInvalid", "spec.preserveUnknownFields",
          "Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead")]),
    "a protected group without approval": (
        {**crd(group="things.k8s.io"), "metadata": {"name": "widgets.things.k8s.io"}},
        [("FieldValueRequired", "metadata.annotations[api-approved.kubernetes.io]",
          'Required value: protected groups must have approval annotation "api-approved.kubernetes.io", '
          "see https://github.com/kubernetes/enhancements/pull/1111")]),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
async def test_bad_crds_are_refused_with_kubernetes_causes(api, case):
    body, expected = BAD[case]
    status = await refused(api, body)
    assert status["reason"] == "Invalid" and status["details"]["kind"] == "CustomResourceDefinition"
    assert status["message"].startswith(f'CustomResourceDefinition.apiextensions.k8s.io "{body["metadata"]["name"]}" is invalid: ')
    causes = [(c["reason"], c["field"], c["message"]) for c in status["details"]["causes"]]
    for reason, field, message in expected:
        assert any(c[0] == reason and c[1] == field and (message is None or c[2] == message) for c in causes), (field, causes)
        if message is not None:
            assert f"{field}: {message}" in status["message"]


async def test_valid_crds_are_stored(api):
    approved = {**crd(group="things.k8s.io"), "metadata": {"name": "widgets.things.k8s.io",
                                                           "annotations": {"api-approved.kubernetes.io": "unapproved, testing only"}}}
    int_or_string = crd(schema(
        port={"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        ports={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
               "items": {"type": "object", "required": ["port"], "properties": {"port": {"type": "integer"}}}},
        tags={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        labels={"type": "object", "additionalProperties": {"type": "string"}},
        raw={"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
        size={"type": "integer", "default": 3}))
    int_or_string["metadata"]["name"] = "gadgets.example.com"
    int_or_string["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    for body in (approved, int_or_string):
        reply = await api.post(CRDS, body)
        assert reply.status == 201, reply
        assert reply.body["status"]["storedVersions"] == ["v1"]


async def test_unknown_schema_keys_follow_field_validation(api):
    body = crd({**schema(), "propertys": {"a": {"type": "string"}}})
    reply = await api.post(CRDS, body, params={"fieldValidation": "Strict"})
    assert reply.status == 400, reply
    assert (await api.get(f"{CRDS}/{NAME}")).status == 404
    status = reply.body
    assert status["reason"] == "BadRequest"
    assert status["message"] == ('CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: '
                                 'strict decoding error: unknown field "spec.versions[0].schema.openAPIV3Schema.propertys"')
    reply = await api.post(CRDS, body, params={"fieldValidation": "Warn"})
    assert reply.status == 201, reply
    assert reply.headers["Warning"] == '299 - "unknown field \\"spec.versions[0].schema.openAPIV3Schema.propertys\\""'
    assert "propertys" not in reply.body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


async def test_wrong_types_in_a_schema_are_bad_requests(api):
    status = await refused(api, crd(schema(size={"type": 5})), 400)
    assert status["details"]["causes"] == [{
        "reason": "FieldValueTypeInvalid", "field": "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.type",
        "message": "Invalid value: cannot unmarshal number into Go value of type string"}]


async def test_updates_keep_stored_versions_and_immutable_fields(api):
    body = crd(versions=two_versions(schema(), schema()))
    body["spec"]["versions"][1]["storage"], body["spec"]["versions"][0]["storage"] = True, False
    assert (await api.post(CRDS, body)).status == 201
    created = await established(api)  # the controllers are done writing its status: no 409 below
    moved = copy.deepcopy(created)
    moved["spec"]["versions"][0]["storage"], moved["spec"]["versions"][1]["storage"] = True, False
    moved = (await api.put(f"{CRDS}/{NAME}", moved)).body
    assert moved["status"]["storedVersions"] == ["v2", "v1"]
    dropped = copy.deepcopy(moved)
    dropped["spec"]["versions"] = dropped["spec"]["versions"][:1]
    dropped["spec"]["group"] = "example.org"
    reply = await api.put(f"{CRDS}/{NAME}", dropped)
    assert reply.status == 422, reply
    causes = {c["field"]: c["message"] for c in reply.body["details"]["causes"]}
    assert causes["status.storedVersions[0]"] == (
        'Invalid value: "v2": missing from spec.versions; v2 was previously a storage version, and must remain in spec.versions '
        "until a storage migration ensures no data remains persisted in v2 and removes v2 from status.storedVersions")
    assert causes["spec.group"] == 'Invalid value: "example.org": field is immutable'
    assert (await api.get(f"{CRDS}/{NAME}")).body["spec"]["versions"] == moved["spec"]["versions"]


async def established(api: Any) -> dict[str, Any]:
    """The CRD once the server's controllers have established it."""
    for _ in range(200):
        found = (await api.get(f"{CRDS}/{NAME}")).body
        if any(c["type"] == "Established" and c["status"] == "True" for c in found.get("status", {}).get("conditions") or []):
            return found
        await asyncio.sleep(0.02)
    raise AssertionError(f"{NAME} not established")


def deep(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object"}
    node = root
    for _ in range(levels):
        node["properties"] = {"a": {"type": "object"}}
        node = node["properties"]["a"]
    return root


async def test_hostile_schemas_are_bounded(api):
    # The body's own nesting limit (128 JSON levels) holds schemas to about 60 levels.
    status = await refused(api, crd(deep(200)), 400)
    assert status["reason"] == "BadRequest" and "exceeded max depth of 128" in status["message"]
    started = time.monotonic()
    reply = await api.post(CRDS, crd(deep(55)))
    assert reply.status == 201, reply
    await api.delete(f"{CRDS}/{NAME}")
    wide = crd(schema(**{f"field{i}": {"type": "string", "maxLength": 10} for i in range(10_000)}))
    wide["metadata"]["name"] = "gadgets.example.com"
    wide["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    reply = await api.post(CRDS, wide)
    assert reply.status == 201, reply
    assert time.monotonic() - started < 10
    huge = crd(schema(**{f"p{i}": {} for i in range(100_001)}))
    huge["metadata"]["name"] = "things.example.com"
    huge["spec"]["names"] = {"plural": "things", "kind": "Thing"}
    status = await refused(api, huge, 400)
    assert status["message"].endswith(
        "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.p99998: "
        "Invalid value: an openAPIV3Schema may not hold more than 100000 schemas")


def test_kubectl_apply_shows_kubernetes_errors(kubectl):
    bad = crd(schema(size={"description": "how big"}, tags={"type": "array"}))
    done = kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump(bad), check=False)
    assert done.returncode != 0
    assert ('The CustomResourceDefinition "widgets.example.com" is invalid: \n'
            "* spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Required value: "
            "must not be empty for specified object fields\n"
            "* spec.validation.openAPIV3Schema.properties[spec].properties[tags].items: Required value: must be specified") in done.stderr
    typo = crd({**schema(), "propertys": {}})
    done = kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump(typo), check=False)
    assert done.returncode != 0
    assert 'unknown field "spec.versions[0].schema.openAPIV3Schema.propertys"' in done.stderr
    assert kubectl.run("get", "crd", NAME, check=False).returncode != 0
