"""CEL validation rules (``x-kubernetes-validations``) on CRDs, over real HTTP and kubectl:
rules refused at CRD creation with kube's paths and messages, and custom resources refused with
each failed rule's message, messageExpression, reason and fieldPath."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.conftest import Client, Reply
from tests.crds import CRDS, create_served, crd_body
from tests.kubectl_cli import Kubectl
from tests.servers import serving

from kplane.core.storage.sqlite import SQLiteStorage

WIDGETS = "/apis/cel.example.com/v1/namespaces/default/widgets"

SPEC: dict[str, Any] = {
    "type": "object",
    "x-kubernetes-validations": [
        {"rule": "self.replicas <= self.maxReplicas", "message": "replicas must not exceed maxReplicas",
         "fieldPath": ".replicas", "reason": "FieldValueForbidden"},
        {"rule": "!has(self.memory) || quantity(self.memory).isLessThan(quantity('1Gi'))",
         "messageExpression": "'memory ' + self.memory + ' is over 1Gi'"},
    ],
    "properties": {
        "replicas": {"type": "integer"},
        "maxReplicas": {"type": "integer"},
        "memory": {"type": "string", "maxLength": 32},
        "name": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [
            {"rule": "self == oldSelf", "message": "name is immutable"}]},
        "endpoint": {"type": "string", "maxLength": 256, "x-kubernetes-validations": [
            {"rule": "isURL(self) && url(self).getScheme() == 'https'", "message": "endpoint must be an https URL"}]},
        "address": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [
            {"rule": "cidr('10.0.0.0/8').containsIP(ip(self))"}]},
        "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 32,
                 "x-kubernetes-validations": [{"rule": "self.find('[0-9]+') != ''", "message": "tags need a number"}]}},
        "ratio": {"type": "number", "x-kubernetes-validations": [{"rule": "self <= 1.0"}]},
        "first": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [
            {"rule": "!oldSelf.hasValue() || oldSelf.value() == self", "optionalOldSelf": True,
             "message": "first may only be set once"}]},
    },
}


def crd(spec_schema: dict[str, Any]) -> dict[str, Any]:
    return crd_body("cel.example.com", "widgets", "Widget", {"type": "object", "properties": {"spec": spec_schema}})


def widget(object_name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "cel.example.com/v1", "kind": "Widget", "metadata": {"name": object_name}, "spec": spec}


async def served(api: Client, body: dict[str, Any]) -> None:
    await create_served(api, body, WIDGETS)


def causes(reply: Reply) -> list[tuple[str, str, str]]:
    return [(c["reason"], c.get("field", ""), c["message"]) for c in reply.body["details"]["causes"]]


async def test_rules_that_do_not_compile_refuse_the_crd(api: Client) -> None:
    schema = copy.deepcopy(SPEC)
    schema["x-kubernetes-validations"] = [{"rule": "self.replicas +"}, {"rule": "size(self) + 1"},
                                          {"rule": "true", "messageExpression": "1"}, {"rule": "true", "reason": "Nope"},
                                          {"rule": "true", "fieldPath": ".nope"}]
    reply = await api.post(CRDS, crd(schema))
    assert reply.status == 422, reply
    at = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations"  # one version: reported where kube-apiserver's internal form keeps its schema
    found = causes(reply)
    assert found[0][:2] == ("FieldValueInvalid", f"{at}[0].rule")
    assert "compilation failed: ERROR: <input>:1:16: Syntax error" in found[0][2]
    assert found[1][:2] == ("FieldValueInvalid", f"{at}[1].rule")
    assert found[1][2].endswith("cel expression must evaluate to a bool")
    assert found[2][:2] == ("FieldValueInvalid", f"{at}[2].messageExpression")
    assert found[2][2].endswith("messageExpression must evaluate to a string")
    assert found[3][:2] == ("FieldValueNotSupported", f"{at}[3].reason")
    assert found[4] == ("FieldValueInvalid", f"{at}[4].fieldPath", 'Invalid value: ".nope": fieldPath must be a valid path')
    assert (await api.get(f"{CRDS}/widgets.cel.example.com")).status == 404


async def test_rules_kube_s_validators_refuse_are_refused_with_the_crd(api: Client) -> None:
    """What type-checks but kube's environment refuses (cel-go's literal validators, a constant
    pattern RE2 cannot compile): the CRD is refused, with cel-go's position and wording."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 10}}, "x-kubernetes-validations": [
        {"rule": "self.s.matches(')')"}, {"rule": "duration('1us') < duration('1nns')"},
        {"rule": "timestamp('1000-00-00T00:00:00Z') < timestamp(0)"}, {"rule": "[1, 'a', false].filter(x, string(x) == 'a').size() > 0"},
        {"rule": "{'k1': 'a', 'k2': 1}.size() == 2"}, {"rule": "self.s.find(')') == ''"},
        {"rule": "true", "messageExpression": "self.s.findAll('a(') == [] ? 'x' : 'y'"},
        # what kube takes: a computed pattern, mixed arguments of format, literals that convert, a dyn element
        {"rule": "self.s.matches(self.s) && '%s-%d'.format(['a', 1]) == 'a-1' && duration('1h30m') > duration('0')"
                 " && timestamp('2020-01-01T00:00:00Z') > timestamp(0) && [self.s, 'b'].size() == 2 && [[1], []].size() == 2"}]}
    reply = await api.post(CRDS, crd(schema))
    assert reply.status == 422, reply
    at = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations"
    found = {field: message for _, field, message in causes(reply)}
    assert found.pop(f"{at}[0].rule").endswith("compilation failed: ERROR: <input>:1:16: invalid matches argument\n"
                                                " | self.s.matches(')')\n | ...............^")
    assert "compilation failed: ERROR: <input>:1:28: invalid duration argument" in found.pop(f"{at}[1].rule")
    assert "compilation failed: ERROR: <input>:1:11: invalid timestamp argument" in found.pop(f"{at}[2].rule")
    assert "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'" in found.pop(f"{at}[3].rule")
    assert "compilation failed: ERROR: <input>:1:19: expected type 'string' but found 'int'" in found.pop(f"{at}[4].rule")
    assert found.pop(f"{at}[5].rule").endswith("program instantiation failed: error parsing regexp: unexpected ): `)`")
    assert found.pop(f"{at}[6].messageExpression").endswith(
        "messageExpression instantiation failed: error parsing regexp: missing closing ): `a(`")
    assert not found, found  # the last rule is taken
    assert (await api.get(f"{CRDS}/widgets.cel.example.com")).status == 404


async def test_unbounded_comprehensions_are_refused_for_their_cost(api: Client) -> None:
    schema = {"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}},
              "x-kubernetes-validations": [{"rule": "self.names.all(x, self.names.exists_one(y, x == y))"}]}
    reply = await api.post(CRDS, crd(schema))
    assert reply.status == 422, reply
    assert ("FieldValueForbidden",
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
            "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, "
            "or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)") in causes(reply)
    bounded = copy.deepcopy(schema)
    bounded["properties"]["names"].update(maxItems=20)
    bounded["properties"]["names"]["items"]["maxLength"] = 20
    await served(api, crd(bounded))
    ok = await api.post(WIDGETS, widget("w", names=["a", "b"]))
    assert ok.status == 201, ok
    dup = await api.post(WIDGETS, widget("d", names=["a", "a"]))
    assert dup.status == 422 and "failed rule: self.names.all" in dup.body["message"], dup


async def test_custom_resources_are_checked_by_their_rules(api: Client) -> None:
    await served(api, crd(SPEC))
    good = widget("good", replicas=1, maxReplicas=3, memory="512Mi", name="a", endpoint="https://x.example/p",
                  address="10.1.2.3", tags=["v1"], ratio=1, first="one")
    assert (await api.post(WIDGETS, good)).status == 201
    bad = widget("bad", replicas=5, maxReplicas=3, memory="2Gi", endpoint="http://x", address="192.168.0.1",
                 tags=["ok1", "none"], ratio=1.5)
    reply = await api.post(WIDGETS, bad)
    assert reply.status == 422, reply
    assert causes(reply) == [
        ("FieldValueForbidden", "spec.replicas", "Forbidden: replicas must not exceed maxReplicas"),
        ("FieldValueInvalid", "spec", 'Invalid value: "object": memory 2Gi is over 1Gi'),
        ("FieldValueInvalid", "spec.endpoint", 'Invalid value: "string": endpoint must be an https URL'),
        ("FieldValueInvalid", "spec.address", 'Invalid value: "string": failed rule: cidr(\'10.0.0.0/8\').containsIP(ip(self))'),
        ("FieldValueInvalid", "spec.tags[1]", 'Invalid value: "string": tags need a number'),
        ("FieldValueInvalid", "spec.ratio", 'Invalid value: "number": failed rule: self <= 1.0'),
    ]
    assert reply.body["message"].startswith('Widget.cel.example.com "bad" is invalid: ')
    assert (await api.get(f"{WIDGETS}/bad")).status == 404


async def test_rules_are_not_evaluated_on_values_their_schema_refused(api: Client) -> None:
    """A wrong type, too long a value (kube's ``hasBlockingErr``): the rules are not run on it and
    one cause says so; a failure that does not block (a maximum) still lets them run."""
    await served(api, crd(SPEC))
    mistyped = await api.post(WIDGETS, widget("typed", replicas="five", maxReplicas=3, memory="x" * 40))
    assert mistyped.status == 422, mistyped
    assert [(t, f) for t, f, _ in causes(mistyped)] == [
        ("FieldValueTypeInvalid", "spec.replicas"), ("FieldValueTooLong", "spec.memory"), ("FieldValueInvalid", "<nil>")]
    assert causes(mistyped)[-1][2] == ('Invalid value: "null": some validation rules were not checked because the '
                                       "object was invalid; correct the existing errors to complete validation")


async def test_transition_rules_see_the_stored_object(api: Client) -> None:
    await served(api, crd(SPEC))
    assert (await api.post(WIDGETS, widget("w", name="a", replicas=1, maxReplicas=1))).status == 201  # no oldSelf on create
    renamed = await api.patch(f"{WIDGETS}/w", {"spec": {"name": "b"}})
    assert renamed.status == 422
    assert causes(renamed) == [("FieldValueInvalid", "spec.name", 'Invalid value: "string": name is immutable')]
    assert (await api.patch(f"{WIDGETS}/w", {"spec": {"first": "x"}})).status == 200  # optionalOldSelf: none before
    again = await api.patch(f"{WIDGETS}/w", {"spec": {"first": "y"}})
    assert causes(again) == [("FieldValueInvalid", "spec.first", 'Invalid value: "string": first may only be set once')]
    assert (await api.patch(f"{WIDGETS}/w", {"spec": {"replicas": 2, "maxReplicas": 2}})).status == 200


async def test_evaluation_errors_name_the_rule(api: Client) -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
              "x-kubernetes-validations": [{"rule": "self.count / self.divisor > 0"}]}
    await served(api, crd(schema))
    reply = await api.post(WIDGETS, widget("w", count=1, divisor=0))
    assert reply.status == 422, reply
    assert causes(reply) == [("FieldValueInvalid", "spec",
                              'Invalid value: "object": divide by zero evaluating rule: self.count / self.divisor > 0')]


def test_kubectl_shows_the_rules_messages(kubectl: Kubectl) -> None:
    kubectl.apply_file("apply", json.dumps(crd(SPEC)))
    kubectl.run("wait", "--for=condition=Established", "crd/widgets.cel.example.com", "--timeout=20s")
    kubectl.apply_file("apply", json.dumps(widget("k", replicas=1, maxReplicas=2, name="a")))
    done = kubectl.run("apply", "-f", "-", stdin=json.dumps(widget("k", replicas=3, maxReplicas=2, name="b")), check=False)
    assert done.returncode != 0
    assert 'The Widget "k" is invalid:' in done.stderr
    assert "spec.replicas: Forbidden: replicas must not exceed maxReplicas" in done.stderr
    assert 'spec.name: Invalid value: "string": name is immutable' in done.stderr
    bad = kubectl.run("apply", "-f", "-", check=False, stdin=json.dumps(crd({
        "type": "object", "x-kubernetes-validations": [{"rule": "self.x ==", "message": "m"}]})))
    assert "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule" in bad.stderr
    assert "compilation failed" in bad.stderr


@pytest.mark.parametrize("rule", ["self.all(k, self[k].matches('^a+$'))"])
async def test_preserve_unknown_values_are_dyn_and_unbounded(api: Client, rule: str) -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "x-kubernetes-validations": [{"rule": rule}]}
    reply = await api.post(CRDS, crd(schema))
    assert reply.status == 422 and "estimated rule cost exceeds budget" in reply.body["message"], reply


async def test_regex_functions_run_on_re2_in_linear_time(api: Client) -> None:
    # Patterns that backtrack exponentially in a backtracking engine, on a value that makes them fail.
    schema = {"type": "object", "properties": {
        "text": {"type": "string", "maxLength": 40_000, "x-kubernetes-validations": [
            {"rule": "self.find('^(a+)+$') == ''", "message": "find"},
            {"rule": "self.findAll('(a|aa)+c').size() == 0", "message": "findAll"},
            {"rule": "!self.matches('^(a|a)*$')", "message": "matches"}]},
        "probe": {"type": "string", "maxLength": 8, "x-kubernetes-validations": [
            # Go's FindAllString: empty matches count, capture groups do not narrow the match
            {"rule": "self.findAll('x*').size() == size(self) + 1", "message": "empty matches"},
            {"rule": "self.find('(b)(c)') == 'bc' && self.findAll('b|bc', 1) == ['b']", "message": "leftmost-first"},
            # matches in each form kplane compiles its constant pattern once for, and on a computed pattern
            {"rule": "matches(self, '^a') && ['x', self].exists(s, s.matches('c$')) == self.endsWith('c')"
                     " && {'k': self.matches('^[a-z]+$')}['k'] && self.matches(self.substring(0, 1))", "message": "forms"}]}}}
    await served(api, crd(schema))
    loop = asyncio.get_running_loop()
    began = loop.time()
    reply = await api.post(WIDGETS, widget("w", text="a" * 30_000 + "b", probe="abcd"))
    assert loop.time() - began < 2
    assert reply.status == 201, reply
    reply = await api.post(WIDGETS, widget("v", text="a" * 30_000, probe="axbc"))
    assert reply.status == 422, reply
    assert causes(reply) == [("FieldValueInvalid", "spec.text", 'Invalid value: "string": find'),
                             ("FieldValueInvalid", "spec.text", 'Invalid value: "string": matches'),
                             ("FieldValueInvalid", "spec.probe", 'Invalid value: "string": empty matches')]


async def test_root_rules_see_api_version_kind_and_name(api: Client) -> None:
    body = crd({"type": "object", "properties": {"size": {"type": "integer"}}})
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = [
        {"rule": "self.metadata.name.startsWith('x')", "message": "names start with x"},
        {"rule": "self.apiVersion == 'cel.example.com/v1' && self.kind == 'Widget' && has(self.spec)"},
        {"rule": "!has(self.metadata.namespace)", "message": "only name and generateName are visible"}]
    await served(api, body)
    assert (await api.post(WIDGETS, widget("xa", size=1))).status == 201
    reply = await api.post(WIDGETS, widget("ya", size=1))
    assert causes(reply) == [("FieldValueInvalid", "<nil>", 'Invalid value: "object": names start with x')], reply
    named = await api.post(WIDGETS, {**widget("", size=1), "metadata": {"generateName": "x-"}})
    assert named.status == 201, named


async def test_rules_ratchet_on_values_stored_before_they_were_added(api: Client) -> None:
    schema = {"type": "object", "properties": {
        "size": {"type": "integer"}, "count": {"type": "integer"},
        "items": {"type": "array", "maxItems": 4, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"], "properties": {
                      "name": {"type": "string", "maxLength": 8}, "weight": {"type": "integer"}}}}}}
    await served(api, crd(schema))
    assert (await api.post(WIDGETS, widget("w", size=50, count=1, items=[{"name": "a", "weight": 9}]))).status == 201
    current = (await api.get(f"{CRDS}/widgets.cel.example.com")).body
    spec = current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["size"]["x-kubernetes-validations"] = [{"rule": "self < 10", "message": "size below 10"}]
    spec["properties"]["count"]["x-kubernetes-validations"] = [
        {"rule": "self >= oldSelf", "message": "count may not go down"}]
    spec["properties"]["items"]["items"]["x-kubernetes-validations"] = [{"rule": "self.weight < 5", "message": "light"}]
    assert (await api.put(f"{CRDS}/widgets.cel.example.com", current)).status == 200
    for _ in range(100):
        probe = await api.post(f"{WIDGETS}?dryRun=All", widget("p", size=50))
        if probe.status == 422:
            break
        await asyncio.sleep(0.05)
    # another field changes: the stored size and item ratchet, as a warning (kube's)
    changed = await api.patch(f"{WIDGETS}/w", {"spec": {"count": 2, "items": [{"name": "b", "weight": 1}, {"name": "a", "weight": 9}]}})
    assert changed.status == 200, changed
    warnings = changed.headers.getall("Warning", [])
    assert warnings == ['299 - "spec.size: Invalid value: \\"integer\\": size below 10"',
                        '299 - "spec.items[1]: Invalid value: \\"object\\": light"'], warnings
    # the offending value changed to another invalid one fails; so does a changed item
    reply = await api.patch(f"{WIDGETS}/w", {"spec": {"size": 40}})
    assert causes(reply) == [("FieldValueInvalid", "spec.size", 'Invalid value: "integer": size below 10')], reply
    reply = await api.patch(f"{WIDGETS}/w", {"spec": {"items": [{"name": "b", "weight": 1}, {"name": "a", "weight": 8}]}})
    assert causes(reply) == [("FieldValueInvalid", "spec.items[1]", 'Invalid value: "object": light')], reply
    # rules reading oldSelf never ratchet
    reply = await api.patch(f"{WIDGETS}/w", {"spec": {"count": 1}})
    assert causes(reply) == [("FieldValueInvalid", "spec.count", 'Invalid value: "integer": count may not go down')], reply


async def test_a_stored_rule_that_no_longer_compiles_refuses_what_it_applies_to(tmp_path: Path) -> None:
    """A CRD stored before kplane refused its rule (here written into the storage directly) is
    served failing closed, as kube serves one: each value the rule applies to is refused with the
    compile error, none is let through unchecked."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 10, "x-kubernetes-validations": [
        {"rule": "self.find('[0-9]') == ''", "message": "no digits"}]}}}
    data = tmp_path / "data"
    with serving(data) as server:
        async with aiohttp.ClientSession(server.url) as session:
            async with session.post(CRDS, json=crd(schema)) as reply:
                assert reply.status == 201, await reply.text()
    storage = await SQLiteStorage.open(str(data / "state.db"))
    try:
        key = "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.cel.example.com"
        stored = await storage.get(key)
        assert stored is not None
        broken = stored.value.replace(b"self.find('[0-9]')", b"self.find(')')")
        assert broken != stored.value
        await storage.update(key, broken, expected_revision=stored.mod_revision)
    finally:
        await storage.close()
    with serving(data) as server:
        async with aiohttp.ClientSession(server.url) as session:
            for _ in range(200):  # until the CRD is served
                async with session.post(WIDGETS, json=widget("w", s="abc")) as reply:
                    status, body = reply.status, await reply.json()
                if status != 404:
                    break
                await asyncio.sleep(0.05)
            assert status == 422, body
            assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
                ("spec.s", 'Invalid value: "string": rule compile error: program instantiation failed: '
                           "error parsing regexp: unexpected ): `)`")]
            async with session.get(f"{WIDGETS}/w") as reply:
                assert reply.status == 404
            async with session.post(WIDGETS, json=widget("v")) as reply:
                assert reply.status == 201  # the rule's field is not set: nothing for it to refuse
