"""wardle.example.com (plugins/sample_api, the sample-apiserver mirror) over HTTP and through kubectl."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from kplane.core.client.informer import Informer
from kplane.core.client.rest import RESTClient
from kplane.core.meta.errors import APIError
from kplane.core.registry.admission import AdmissionRequest, Operation
from kplane.core.registry.strategy import RequestContext
from kplane.plugins.sample_api.admission import BanFlunder
from kplane.plugins.sample_api.types import Flunder
from tests.waiting import eventually

GROUP = "wardle.example.com"
ALPHA = f"/apis/{GROUP}/v1alpha1/namespaces/default/flunders"
BETA = f"/apis/{GROUP}/v1beta1/namespaces/default/flunders"
FISCHERS = f"/apis/{GROUP}/v1alpha1/fischers"
ARTIFACTS = Path(__file__).parent.parent / "plugins" / "sample_api" / "artifacts"
OBJECTS = ("-f", str(ARTIFACTS / "fischers"), "-f", str(ARTIFACTS / "flunders"))  # example/ runs the server itself
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
BANNED_MANIFEST = f"apiVersion: {GROUP}/v1alpha1\nkind: Flunder\nmetadata:\n  name: my-banned-flunder\n"
BANNED = 'flunders.wardle.example.com "{}" is forbidden: this name may not be used, please change the resource name'


def flunder(name: str, version: str = "v1alpha1", **spec: str) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Flunder", "metadata": {"name": name}, "spec": spec}


def fischer(name: str, *disallowed: str) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1alpha1", "kind": "Fischer", "metadata": {"name": name},
            "disallowedFlunders": list(disallowed)}


def causes(reply: Any) -> list[tuple[str, str, str]]:
    return [(c["field"], c["reason"], c["message"]) for c in reply.body["details"]["causes"]]


async def banned(api: Any, name: str) -> bool:
    """Whether BanFlunder refuses ``name`` now (a dry run: nothing is stored either way)."""
    reply = await api.post(ALPHA, flunder(name), params={"dryRun": "All"})
    return reply.status == 403


async def until_banned(api: Any, name: str, expected: bool = True, limit: float = 5.0) -> None:
    """Wait for BanFlunder's informer to see the Fischers just written."""
    async def settled() -> bool:
        return await banned(api, name) == expected
    await eventually(settled, limit, what=f"BanFlunder {'refusing' if expected else 'admitting'} {name!r}")


# -- discovery --------------------------------------------------------------------------------

async def test_discovery_prefers_v1beta1(api):
    group = (await api.get(f"/apis/{GROUP}")).body
    assert [v["version"] for v in group["versions"]] == ["v1beta1", "v1alpha1"]
    assert group["preferredVersion"] == {"groupVersion": f"{GROUP}/v1beta1", "version": "v1beta1"}

    alpha = {r["name"]: r for r in (await api.get(f"/apis/{GROUP}/v1alpha1")).body["resources"]}
    assert sorted(alpha) == ["fischers", "flunders"]
    assert alpha["flunders"]["kind"] == "Flunder" and alpha["flunders"]["namespaced"] is True
    assert alpha["fischers"]["kind"] == "Fischer" and alpha["fischers"]["namespaced"] is False
    beta = [r["name"] for r in (await api.get(f"/apis/{GROUP}/v1beta1")).body["resources"]]
    assert beta == ["flunders"]


# -- conversion and defaulting ----------------------------------------------------------------

async def test_v1alpha1_reference_defaults_to_flunder_and_reads_through_v1beta1(api):
    created = await api.post(ALPHA, flunder("f1", reference="other"))
    assert created.status == 201, created
    assert created.body["spec"] == {"reference": "other", "referenceType": "Flunder"}
    assert created.body["status"] == {}

    beta = (await api.get(f"{BETA}/f1")).body
    assert beta["apiVersion"] == f"{GROUP}/v1beta1" and beta["kind"] == "Flunder"
    assert beta["spec"] == {"flunderReference": "other", "referenceType": "Flunder"}

    # and back: an update through v1beta1 reads back through v1alpha1
    beta["spec"] = {"fischerReference": "fish", "referenceType": "Fischer"}
    assert (await api.put(f"{BETA}/f1", beta)).status == 200
    assert (await api.get(f"{ALPHA}/f1")).body["spec"] == {"reference": "fish", "referenceType": "Fischer"}


async def test_fischer_reference_round_trip(api):
    assert (await api.post(BETA, flunder("b", "v1beta1", fischerReference="fish", referenceType="Fischer"))).status == 201
    assert (await api.get(f"{ALPHA}/b")).body["spec"] == {"reference": "fish", "referenceType": "Fischer"}
    assert (await api.post(ALPHA, flunder("a", reference="fish", referenceType="Fischer"))).status == 201
    assert (await api.get(f"{BETA}/a")).body["spec"] == {"fischerReference": "fish", "referenceType": "Fischer"}


async def test_flunder_without_reference(api):
    created = await api.post(ALPHA, flunder("plain"))
    assert created.status == 201 and created.body["spec"] == {}
    assert (await api.get(f"{BETA}/plain")).body["spec"] == {}


async def test_v1alpha1_unknown_reference_type_converts_to_no_reference(api):
    """As in the original's conversion: a type other than Flunder/Fischer keeps no reference, so
    the validation rule on referenceType can only be hit through v1beta1."""
    created = await api.post(ALPHA, flunder("odd", reference="x", referenceType="Other"))
    assert created.status == 201 and created.body["spec"] == {}


# -- validation (ValidateFlunder) -------------------------------------------------------------

BOTH = "cannot be set with flunderReference at the same time"

VALIDATION = [
    # the if/else chain: only the first failing rule is reported
    ("v1beta1", {"flunderReference": "a", "fischerReference": "b", "referenceType": "Flunder"},
     [("spec.fischerReference", '"b"', BOTH)]),
    ("v1beta1", {"flunderReference": "a", "fischerReference": "b"}, [("spec.fischerReference", '"b"', BOTH)]),
    ("v1beta1", {"flunderReference": "a"}, [("spec.flunderReference", '"a"', "cannot be set if referenceType is not Flunder")]),
    ("v1beta1", {"flunderReference": "a", "referenceType": "Fischer"},
     [("spec.flunderReference", '"a"', "cannot be set if referenceType is not Flunder")]),
    ("v1beta1", {"fischerReference": "b", "referenceType": "Flunder"},
     [("spec.fischerReference", '"b"', "cannot be set if referenceType is not Fischer")]),
    ("v1beta1", {"referenceType": "Fischer"}, [("spec.fischerReference", '""', "cannot be empty if referenceType is Fischer")]),
    ("v1beta1", {"referenceType": "Flunder"}, [("spec.flunderReference", '""', "cannot be empty if referenceType is Flunder")]),
    # the referenceType rule is checked on its own, next to the chain
    ("v1beta1", {"referenceType": "Other"}, [("spec.referenceType", '"Other"', "must be Flunder or Fischer")]),
    ("v1beta1", {"fischerReference": "b", "referenceType": "Other"},
     [("spec.fischerReference", '"b"', "cannot be set if referenceType is not Fischer"),
      ("spec.referenceType", '"Other"', "must be Flunder or Fischer")]),
    # through v1alpha1 the paths are the internal ones, as in the original
    ("v1alpha1", {"referenceType": "Fischer"}, [("spec.fischerReference", '""', "cannot be empty if referenceType is Fischer")]),
    ("v1alpha1", {"reference": "", "referenceType": "Flunder"},
     [("spec.flunderReference", '""', "cannot be empty if referenceType is Flunder")]),
]


@pytest.mark.parametrize(("version", "spec", "expected"), VALIDATION)
async def test_validation(api, version, spec, expected):
    path = BETA if version == "v1beta1" else ALPHA
    reply = await api.post(path, flunder("f", version, **spec))
    assert reply.status == 422 and reply.body["reason"] == "Invalid", reply
    assert causes(reply) == [(field, "FieldValueInvalid", f"Invalid value: {value}: {why}") for field, value, why in expected]
    if len(expected) == 1:
        field, value, why = expected[0]
        assert reply.body["message"] == f'Flunder.{GROUP} "f" is invalid: {field}: Invalid value: {value}: {why}'
    assert (await api.get(f"{path}/f")).status == 404
    assert (await api.get(path)).body["items"] == []


async def test_updates_are_validated_too(api):
    """A deliberate difference from the original (see plugins/sample_api/strategy.py): the
    v1alpha1 storage version could not keep both references."""
    current = (await api.post(BETA, flunder("f", "v1beta1", flunderReference="a", referenceType="Flunder"))).body
    current["spec"]["fischerReference"] = "b"
    refused = await api.put(f"{BETA}/f", current)
    assert refused.status == 422 and [c[0] for c in causes(refused)] == ["spec.fischerReference"]
    assert (await api.get(f"{BETA}/f")).body["spec"] == {"flunderReference": "a", "referenceType": "Flunder"}


# -- Fischer, scope, updates ------------------------------------------------------------------

async def test_fischer_is_cluster_scoped_and_only_in_v1alpha1(api):
    created = await api.post(FISCHERS, fischer("fish", "x", "y"))
    assert created.status == 201, created
    assert "namespace" not in created.body["metadata"]
    got = (await api.get(f"{FISCHERS}/fish")).body
    assert got["apiVersion"] == f"{GROUP}/v1alpha1" and got["disallowedFlunders"] == ["x", "y"]

    assert (await api.get(f"/apis/{GROUP}/v1beta1/fischers")).status == 404
    assert (await api.get(f"/apis/{GROUP}/v1beta1/fischers/fish")).status == 404
    assert (await api.post(f"/apis/{GROUP}/v1beta1/fischers", fischer("other"))).status == 404
    assert (await api.get(f"/apis/{GROUP}/v1alpha1/namespaces/default/fischers")).status == 404


@pytest.mark.parametrize(("path", "body"), [(ALPHA, flunder("u")), (FISCHERS, fischer("u"))])
async def test_put_must_carry_the_resource_version(api, path, body):
    created = (await api.post(path, body)).body
    unconditional = await api.put(f"{path}/u", body)
    assert unconditional.status == 422
    assert [(c[0], c[1]) for c in causes(unconditional)] == [("metadata.resourceVersion", "FieldValueInvalid")]
    conditional = await api.put(f"{path}/u", {**body, "metadata": created["metadata"]})
    assert conditional.status == 200, conditional
    missing = await api.put(f"{path}/nobody", {**body, "metadata": {"name": "nobody", "resourceVersion": "1"}})
    assert missing.status == 404  # no create on update


async def test_default_table_columns(api):
    await api.post(ALPHA, flunder("t"))
    table = (await api.get(ALPHA, headers={"Accept": TABLE})).body
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert [row["cells"][0] for row in table["rows"]] == ["t"]


# -- BanFlunder -------------------------------------------------------------------------------

async def test_ban_flunder(api):
    assert (await api.post(FISCHERS, fischer("fish", "bad"))).status == 201
    await until_banned(api, "bad")

    refused = await api.post(ALPHA, flunder("bad"))
    assert refused.status == 403 and refused.body["reason"] == "Forbidden", refused
    assert refused.body["message"] == BANNED.format("bad")
    assert refused.body["details"] == {"name": "bad", "group": GROUP, "kind": "flunders"}
    assert (await api.get(f"{ALPHA}/bad")).status == 404
    # whatever the version, and before the spec is validated (BanFlunder admits in the mutating phase)
    invalid = await api.post(BETA, flunder("bad", "v1beta1", referenceType="Other"))
    assert invalid.status == 403 and invalid.body["message"] == BANNED.format("bad")

    assert (await api.post(ALPHA, flunder("good"))).status == 201
    assert (await api.post(FISCHERS, fischer("bad"))).status == 201  # only Flunders are checked


async def test_ban_flunder_checks_creates_only_and_follows_fischer_changes(api):
    assert (await api.post(ALPHA, flunder("late"))).status == 201
    fish = (await api.post(FISCHERS, fischer("fish"))).body
    await until_banned(api, "late", expected=False)

    fish["disallowedFlunders"] = ["late"]
    assert (await api.put(f"{FISCHERS}/fish", fish)).status == 200
    await until_banned(api, "late")
    late = (await api.get(f"{ALPHA}/late")).body
    late["metadata"]["labels"] = {"updated": "yes"}
    updated = await api.put(f"{ALPHA}/late", late)  # an update is not checked
    assert updated.status == 200 and updated.body["metadata"]["labels"] == {"updated": "yes"}

    assert (await api.delete(f"{FISCHERS}/fish")).status == 200
    await until_banned(api, "late", expected=False)


async def test_ban_flunder_is_not_ready_until_its_informer_synced(server, api):
    """The admission plugin itself, driven with a real request: its Fischer informer (on a real
    client of the running server) has not listed yet, so it refuses; once it ran, it decides."""
    assert (await api.post(FISCHERS, fischer("fish", "bad"))).status == 201
    flunders = server.scheme.get(GROUP, "flunders")

    def create(name: str) -> AdmissionRequest:
        obj = Flunder()
        obj.metadata.name, obj.metadata.namespace = name, "default"
        ctx = RequestContext(group=GROUP, version="v1alpha1", resource="flunders", namespace="default", name=name)
        return AdmissionRequest(Operation.CREATE, flunders, "", "default", name, obj, None, ctx)

    client = RESTClient(server.url)
    informer = Informer(client.resource(GROUP, "v1alpha1", "fischers"))
    try:
        ban = BanFlunder(informer, ready_timeout=0.2)
        with pytest.raises(APIError) as not_ready:
            await ban(create("good"))
        assert not_ready.value.code == 403
        assert not_ready.value.message == 'flunders.wardle.example.com "good" is forbidden: not yet ready to handle request'

        # A request that arrives while the informer lists waits for it (up to ready_timeout).
        waiting = BanFlunder(informer, ready_timeout=5.0)
        running = asyncio.create_task(informer.run())
        try:
            await waiting(create("good"))
            assert informer.synced.is_set()
            with pytest.raises(APIError) as refused:
                await ban(create("bad"))
            assert refused.value.code == 403 and refused.value.message == BANNED.format("bad")
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
    finally:
        await client.close()


# -- kubectl ----------------------------------------------------------------------------------

def test_kubectl_artifacts(kubectl):
    created = kubectl.run("create", *OBJECTS).stdout
    assert "fischer.wardle.example.com/my-first-fischer created" in created
    assert "flunder.wardle.example.com/my-first-flunder created" in created
    assert "flunder.wardle.example.com/my-second-flunder created" in created

    flunders = kubectl.run("get", "flunders").stdout.splitlines()
    assert flunders[0].split() == ["NAME", "AGE"]
    assert [line.split()[0] for line in flunders[1:]] == ["my-first-flunder", "my-second-flunder"]
    fischers = kubectl.run("get", "fischers").stdout.splitlines()
    assert fischers[0].split() == ["NAME", "AGE"] and fischers[1].split()[0] == "my-first-fischer"

    first = kubectl.json("get", "flunder", "my-first-flunder")
    assert first["apiVersion"] == f"{GROUP}/v1beta1"  # the preferred version
    assert first["metadata"]["labels"] == {"sample-label": "true"}
    second = kubectl.json("get", f"flunders.v1alpha1.{GROUP}", "my-second-flunder")
    assert second["spec"] == {"reference": "my-first-flunder", "referenceType": "Flunder"}
    labelled = kubectl.run("get", "flunders", "-l", "sample-label=true", "-o", "name").stdout.split()
    assert labelled == ["flunder.wardle.example.com/my-first-flunder"]

    deadline = time.monotonic() + 10
    while True:  # until the server's Fischer informer has seen the Fischer just created
        refused = kubectl.run("create", "--dry-run=server", "-f", "-", stdin=BANNED_MANIFEST, check=False)
        if refused.returncode != 0 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert refused.returncode != 0
    assert BANNED.format("my-banned-flunder") in refused.stderr

    deleted = kubectl.run("delete", *OBJECTS).stdout
    assert "flunder.wardle.example.com \"my-first-flunder\" deleted" in deleted
    assert "fischer.wardle.example.com \"my-first-fischer\" deleted" in deleted
    assert "No resources found" in kubectl.run("get", "flunders").stderr
    assert "No resources found" in kubectl.run("get", "fischers").stderr
