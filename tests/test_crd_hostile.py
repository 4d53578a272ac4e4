"""Hostile input against custom resources: what a CRD author or a client of its resource sends
to make the server fail, stall or grow. Each answer is a 4xx or a normal answer, in bounded time,
and nothing is stored by a refused request."""

from __future__ import annotations

import time
from typing import Any

from tests.conftest import Client
from tests.crds import CRDS, create_served, crd_body

TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def crd(plural: str, spec: dict[str, Any], **version: Any) -> dict[str, Any]:
    kind = plural.capitalize().removesuffix("s")
    return crd_body("hostile.example.com", plural, kind, {"type": "object", "properties": {"spec": spec}}, **version)


def obj(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "hostile.example.com/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}


async def test_defaults_cannot_grow_a_small_body_without_bound(api: Client) -> None:
    """5,000 nulls under a 100 KB default would be 500 MB: refused with a 413 before it is built."""
    path = await create_served(api, crd("fills", {"type": "object", "properties": {
        "l": {"type": "array", "items": {"type": "string", "default": "x" * 100_000}}}}))
    began = time.perf_counter()
    refused = await api.post(path, obj("Fill", "big", l=[None] * 5000))
    assert refused.status == 413 and refused.body["reason"] == "RequestEntityTooLarge", refused
    assert time.perf_counter() - began < 5
    assert (await api.get(f"{path}/big")).status == 404
    small = await api.post(path, obj("Fill", "small", l=[None, "y"]))
    assert small.status == 201 and small.body["spec"]["l"] == ["x" * 100_000, "y"], small


async def test_recursive_descent_columns_on_a_large_object_answer_quickly(api: Client) -> None:
    path = await create_served(api, crd("walks", {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                 additionalPrinterColumns=[{"name": "X", "type": "string", "jsonPath": ".spec..x"}]))
    created = await api.post(path, obj("Walk", "wide", l=[0] * 300_000, x="found"))
    assert created.status == 201, created
    began = time.perf_counter()
    table = await api.get(path, headers=TABLE)
    assert table.status == 200, table
    assert time.perf_counter() - began < 5
    assert table.body["rows"][0]["cells"][:2] == ["wide", None]  # more values than one evaluation may reach: no cell
    few = await api.post(path, obj("Walk", "narrow", a={"x": "deep"}))
    assert few.status == 201, few
    rows = {row["cells"][0]: row["cells"][1] for row in (await api.get(path, headers=TABLE)).body["rows"]}
    assert rows["narrow"] == "deep"


async def test_a_duration_of_thousands_of_digits_is_invalid_not_a_500(api: Client) -> None:
    path = await create_served(api, crd("waits", {"type": "object", "properties": {"d": {"type": "string", "format": "duration"}}}))
    refused = await api.post(path, obj("Wait", "long", d="1" * 5000 + "x"))
    assert refused.status == 422 and refused.body["reason"] == "Invalid", refused
    assert (await api.get(f"{path}/long")).status == 404
    assert (await api.post(path, obj("Wait", "ok", d="1h30m"))).status == 201


async def test_patterns_and_hostnames_cost_a_match_each_not_a_compilation(api: Client) -> None:
    """RE2 builds ``\\p{L}{0,60}`` and the hostname format's pattern in tens of milliseconds: done
    once per schema (a pattern, a format, a rule's ``matches`` or ``findAll`` on a constant), 2,000 values of each
    are checked in well under a second, not minutes."""
    letters = r"^\p{L}{0,60}$"
    path = await create_served(api, crd("names", {"type": "object", "properties": {
        "words": {"type": "array", "items": {"type": "string", "pattern": letters}},
        "hosts": {"type": "array", "items": {"type": "string", "format": "hostname"}},
        "tags": {"type": "array", "maxItems": 2000, "items": {"type": "string", "maxLength": 60,
                 "x-kubernetes-validations": [{"message": "letters only",
                                               "rule": f"self.matches(r'{letters}') && self.findAll(r'{letters}') == [self]"}]}}}}))
    began = time.perf_counter()
    created = await api.post(path, obj("Name", "many", words=["wörter"] * 2000, hosts=["node-1.example.com"] * 2000,
                                       tags=["étiquette"] * 2000))
    assert created.status == 201, created
    assert time.perf_counter() - began < 5
    refused = await api.post(path, obj("Name", "bad", words=["ok", "not 1"], hosts=["-x.example.com"]))
    assert refused.status == 422, refused
    assert [(c["field"], c["message"]) for c in refused.body["details"]["causes"]] == [
        ("spec.words[1]", 'Invalid value: "not 1": spec.words[1] in body should match \'^\\p{L}{0,60}$\''),
        ("spec.hosts[0]", 'Invalid value: "-x.example.com": spec.hosts[0] in body must be of type hostname: "-x.example.com"'),
        ("<nil>", 'Invalid value: "null": some validation rules were not checked because the object was invalid; '
                  "correct the existing errors to complete validation")]
    refused = await api.post(path, obj("Name", "bad", tags=["a", "b-"]))
    assert refused.status == 422, refused
    assert [(c["field"], c["message"]) for c in refused.body["details"]["causes"]] == [("spec.tags[1]", "Invalid value: \"string\": letters only")]
    assert (await api.get(f"{path}/bad")).status == 404


async def test_a_pattern_of_deeply_nested_groups_matches_in_linear_time(api: Client) -> None:
    """5,000 nested empty groups: RE2 tracking each group cost 0.7 s per 100 kB value matched."""
    path = await create_served(api, crd("nests", {"type": "object", "properties": {
        "l": {"type": "array", "items": {"type": "string", "pattern": "(" * 5000 + ")" * 5000 + "^x+$"}}}}))
    began = time.perf_counter()
    created = await api.post(path, obj("Nest", "deep", l=["x" * 100_000] * 20))
    assert created.status == 201, created
    assert time.perf_counter() - began < 3
    refused = await api.post(path, obj("Nest", "bad", l=["xy"]))
    assert refused.status == 422 and refused.body["details"]["causes"][0]["field"] == "spec.l[0]", refused
    assert (await api.get(f"{path}/bad")).status == 404


async def test_a_rule_growing_a_string_is_refused_for_what_it_builds(api: Client) -> None:
    """Each replace multiplies a 40-character string by 40: the estimate follows the growth
    (cel-go's replace), so the rule whose last step builds 100 MB never reaches a request."""
    def rule(steps: int) -> dict[str, Any]:
        return {"type": "object", "properties": {"s": {"type": "string", "maxLength": 40}},
                "x-kubernetes-validations": [{"rule": "self.s" + ".replace('a', self.s)" * steps + ".size() >= 0"}]}

    refused = await api.post(CRDS, crd("grows", rule(4)))
    assert refused.status == 422, refused
    assert "estimated rule cost exceeds budget" in refused.body["message"]
    assert (await api.get(f"{CRDS}/grows.hostile.example.com")).status == 404
    path = await create_served(api, crd("grows", rule(3)))
    began = time.perf_counter()
    created = await api.post(path, obj("Grow", "most", s="a" * 40))
    assert created.status == 201, created
    assert time.perf_counter() - began < 5
