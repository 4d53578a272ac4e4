"""A CustomResourceDefinition's life over real HTTP: names accepted or in conflict as Kubernetes
reports them, Established and served in discovery and OpenAPI within a second, changed versions,
deletion through Terminating and the cleanup finalizer, the Local APIService of its group, and a
restart of ``kplane serve`` that serves it again before it says it is ready."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.conftest import Client
from tests.kubectl_cli import Kubectl
from tests.servers import serving
from tests.waiting import eventually, wait_until

FIXTURES = Path(__file__).parent / "fixtures" / "crds"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "stable.example.com"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                           "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}


def version(name: str, *, served: bool = True, storage: bool = False) -> dict[str, Any]:
    return {"name": name, "served": served, "storage": storage, "schema": {"openAPIV3Schema": SCHEMA}}


def crd(plural: str, kind: str, *, group: str = GROUP, versions: list[dict[str, Any]] | None = None,
        scope: str = "Namespaced", **names: Any) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope, "names": {"plural": plural, "kind": kind, **names},
                     "versions": versions or [version("v1", storage=True)]}}


def cr(kind: str, name: str, *, api_version: str = f"{GROUP}/v1", **meta: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, **meta}, "spec": {"n": 1}}


def conditions(obj: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in (obj.get("status") or {}).get("conditions") or []}


async def condition_is(api: Client, name: str, kind: str, status: str, reason: str) -> dict[str, Any] | None:
    reply = await api.get(f"{CRDS}/{name}")
    if reply.status != 200:
        return None
    found = conditions(reply.body).get(kind)
    return reply.body if found is not None and found[:2] == (status, reason) else None


async def established(api: Client, name: str) -> dict[str, Any]:
    return await eventually(lambda: condition_is(api, name, "Established", "True", "InitialNamesAccepted"),
                            what=f"{name} Established")


async def gone(api: Client, path: str) -> bool:
    return (await api.get(path)).status == 404


def resources(discovery: dict[str, Any]) -> list[str]:
    return [r["name"] for r in discovery.get("resources") or []]


async def served_everywhere(api: Client, group: str, version_: str, plural: str) -> bool:
    """In /apis, /apis/<group>, /apis/<group>/<version>, aggregated discovery and OpenAPI v3."""
    apis = (await api.get("/apis")).body
    if not any(g["name"] == group and version_ in [v["version"] for v in g["versions"]] for g in apis["groups"]):
        return False
    if (await api.get(f"/apis/{group}")).status != 200:
        return False
    listed = await api.get(f"/apis/{group}/{version_}")
    if listed.status != 200 or plural not in resources(listed.body):
        return False
    aggregated = (await api.get("/apis", headers={"Accept": AGGREGATED})).body
    entry = next((g for g in aggregated["items"] if g["metadata"]["name"] == group), None)
    if entry is None or not any(v["version"] == version_ and plural in [r["resource"] for r in v["resources"]]
                                for v in entry["versions"]):
        return False
    index = (await api.get("/openapi/v3")).body
    return f"apis/{group}/{version_}" in index["paths"]


async def not_served_anywhere(api: Client, group: str, version_: str, plural: str) -> bool:
    listed = await api.get(f"/apis/{group}/{version_}")
    if listed.status == 200 and plural in resources(listed.body):
        return False
    aggregated = (await api.get("/apis", headers={"Accept": AGGREGATED})).body
    entry = next((g for g in aggregated["items"] if g["metadata"]["name"] == group), None)
    if entry is not None and any(v["version"] == version_ and plural in [r["resource"] for r in v["resources"]]
                                 for v in entry["versions"]):
        return False
    return f"apis/{group}/{version_}" not in (await api.get("/openapi/v3")).body["paths"]


async def test_a_crd_is_established_and_served_everywhere_within_a_second(api: Client) -> None:
    began = time.monotonic()
    reply = await api.post(CRDS, crd("widgets", "Widget", shortNames=["wd"], categories=["all"]))
    assert reply.status == 201, reply
    # well within a second on an idle machine; the bound leaves room for the suite's second worker
    await eventually(lambda: served_everywhere(api, GROUP, "v1", "widgets"), timeout=3.0, every=0.01,
                     what="widgets served in discovery and OpenAPI")
    assert time.monotonic() - began < 3.0
    body = await established(api, f"widgets.{GROUP}")
    assert conditions(body) == {"NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
                                "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted")}
    assert body["status"]["acceptedNames"] == {"plural": "widgets", "singular": "widget", "shortNames": ["wd"],
                                               "kind": "Widget", "listKind": "WidgetList", "categories": ["all"]}
    assert body["status"]["storedVersions"] == ["v1"]
    assert (await api.post(f"/apis/{GROUP}/v1/namespaces/default/widgets", cr("Widget", "w1"))).status == 201


# A holds plural "as", singular "a", short name "aa", kind A (list AList); each other CRD wants one of them.
CONFLICTS = {
    "PluralConflict": crd("aa", "Pc", singular="pc"),
    "SingularConflict": crd("scs", "Sc", singular="a"),
    "ShortNamesConflict": crd("sns", "Sn", singular="sn", shortNames=["sn1", "as"]),
    "KindConflict": crd("kcs", "A", singular="kc", listKind="KcList"),
    "ListKindConflict": crd("lcs", "Lc", singular="lc", listKind="AList"),
}
MESSAGES = {"PluralConflict": '"aa" is already in use', "SingularConflict": '"a" is already in use',
            "ShortNamesConflict": '"as" is already in use', "KindConflict": '"A" is already in use',
            "ListKindConflict": '"AList" is already in use'}


async def test_every_kind_of_name_conflict_is_reported_and_resolves_when_the_holder_goes(api: Client) -> None:
    assert (await api.post(CRDS, crd("as", "A", singular="a", shortNames=["aa"]))).status == 201
    await established(api, f"as.{GROUP}")
    for body in CONFLICTS.values():
        assert (await api.post(CRDS, body)).status == 201
    for reason, body in CONFLICTS.items():
        name = body["metadata"]["name"]
        found = await eventually(lambda: condition_is(api, name, "NamesAccepted", "False", reason), what=f"{name} {reason}")
        assert conditions(found)["NamesAccepted"] == ("False", reason, MESSAGES[reason])
        assert conditions(found)["Established"] == ("False", "NotAccepted", "not all names are accepted")
        plural = body["spec"]["names"]["plural"]
        assert (await api.get(f"/apis/{GROUP}/v1/namespaces/default/{plural}")).status == 404
    # The names that did not conflict are accepted all the same.
    found = (await api.get(f"{CRDS}/scs.{GROUP}")).body
    assert found["status"]["acceptedNames"] == {"plural": "scs", "kind": "Sc", "listKind": "ScList"}

    assert (await api.delete(f"{CRDS}/as.{GROUP}")).status == 200
    for body in CONFLICTS.values():
        await established(api, body["metadata"]["name"])
    found = (await api.get(f"{CRDS}/sns.{GROUP}")).body
    assert found["status"]["acceptedNames"]["shortNames"] == ["sn1", "as"]
    assert conditions(found)["NamesAccepted"] == ("True", "NoConflicts", "no conflicts found")


async def test_a_conflicting_rename_keeps_the_accepted_names_served(api: Client) -> None:
    assert (await api.post(CRDS, crd("bs", "B", shortNames=["bb"]))).status == 201
    assert (await api.post(CRDS, crd("cs", "C"))).status == 201
    await established(api, f"bs.{GROUP}")
    current = (await established(api, f"cs.{GROUP}"))
    current["spec"]["names"]["shortNames"] = ["bb", "cc"]
    assert (await api.put(f"{CRDS}/cs.{GROUP}", current)).status == 200
    found = await eventually(lambda: condition_is(api, f"cs.{GROUP}", "NamesAccepted", "False", "ShortNamesConflict"))
    assert conditions(found)["NamesAccepted"][2] == '"bb" is already in use'
    assert conditions(found)["Established"][0] == "True"
    assert "shortNames" not in found["status"]["acceptedNames"]
    assert (await api.post(f"/apis/{GROUP}/v1/namespaces/default/cs", cr("C", "c1"))).status == 201


async def test_a_crd_cannot_take_the_names_of_a_plugins_kind(api: Client) -> None:
    """coordination.k8s.io's Lease is a plugin's kind: a CRD for leases, or of kind Lease, is
    never served and says which name is in use."""
    annotations = {"api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/1"}
    plural = crd("leases", "MyLease", group="coordination.k8s.io", singular="mylease")
    kind = crd("mines", "Lease", group="coordination.k8s.io", singular="mine", listKind="MineList")
    for body in (plural, kind):
        body["metadata"]["annotations"] = annotations
        assert (await api.post(CRDS, body)).status == 201, body
    found = await eventually(lambda: condition_is(api, "leases.coordination.k8s.io", "NamesAccepted", "False", "PluralConflict"))
    assert conditions(found)["NamesAccepted"][2] == '"leases" is already in use'
    assert conditions(found)["Established"] == ("False", "NotAccepted", "not all names are accepted")
    found = await eventually(lambda: condition_is(api, "mines.coordination.k8s.io", "NamesAccepted", "False", "KindConflict"))
    assert conditions(found)["NamesAccepted"][2] == '"Lease" is already in use'
    # The plugin's leases are served as before; mines never.
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}
    assert (await api.post("/apis/coordination.k8s.io/v1/namespaces/default/leases", lease)).status == 201
    assert (await api.get("/apis/coordination.k8s.io/v1/namespaces/default/mines")).status == 404
    # Deleting them removes nothing of the plugin's.
    for name in ("leases.coordination.k8s.io", "mines.coordination.k8s.io"):
        assert (await api.delete(f"{CRDS}/{name}")).status == 200
        await eventually(lambda: gone(api, f"{CRDS}/{name}"), what=f"{name} gone")
    assert (await api.get("/apis/coordination.k8s.io/v1/namespaces/default/leases/l")).status == 200


async def test_versions_added_unserved_and_the_storage_version_moved(api: Client) -> None:
    assert (await api.post(CRDS, crd("gadgets", "Gadget"))).status == 201
    current = await established(api, f"gadgets.{GROUP}")
    assert (await api.post(f"/apis/{GROUP}/v1/namespaces/default/gadgets", cr("Gadget", "g1"))).status == 201

    current["spec"]["versions"].append(version("v2"))
    reply = await api.put(f"{CRDS}/gadgets.{GROUP}", current)
    assert reply.status == 200, reply
    began = time.monotonic()
    await eventually(lambda: served_everywhere(api, GROUP, "v2", "gadgets"), timeout=1.0, every=0.01, what="v2 served")
    assert time.monotonic() - began < 1.0
    read = (await api.get(f"/apis/{GROUP}/v2/namespaces/default/gadgets/g1")).body
    assert read["apiVersion"] == f"{GROUP}/v2" and read["spec"] == {"n": 1}

    current = reply.body
    current["spec"]["versions"] = [version("v1", served=False), version("v2", storage=True)]
    reply = await api.put(f"{CRDS}/gadgets.{GROUP}", current)
    assert reply.status == 200, reply
    assert reply.body["status"]["storedVersions"] == ["v1", "v2"]
    await eventually(lambda: not_served_anywhere(api, GROUP, "v1", "gadgets"), timeout=1.0, every=0.01, what="v1 unserved")
    assert (await api.get(f"/apis/{GROUP}/v1/namespaces/default/gadgets/g1")).status == 404
    assert (await api.get(f"/apis/{GROUP}/v2/namespaces/default/gadgets/g1")).status == 200
    assert (await api.post(f"/apis/{GROUP}/v2/namespaces/default/gadgets",
                           cr("Gadget", "g2", api_version=f"{GROUP}/v2"))).status == 201


async def test_deletion_terminates_deletes_every_instance_and_waits_for_their_finalizers(api: Client) -> None:
    assert (await api.post(CRDS, crd("gizmos", "Gizmo"))).status == 201
    await established(api, f"gizmos.{GROUP}")
    assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "other"}})).status == 201
    path = f"/apis/{GROUP}/v1/namespaces/{{}}/gizmos"
    for namespace, name in (("default", "a"), ("default", "b"), ("other", "c")):
        assert (await api.post(path.format(namespace), cr("Gizmo", name))).status == 201
    assert (await api.post(path.format("other"), cr("Gizmo", "held", finalizers=["example.com/hold"]))).status == 201

    reply = await api.delete(f"{CRDS}/gizmos.{GROUP}")
    assert reply.status == 200, reply
    assert reply.body["metadata"]["deletionTimestamp"]
    assert "customresourcecleanup.apiextensions.k8s.io" in reply.body["metadata"]["finalizers"]
    assert conditions(reply.body)["Terminating"] == (
        "True", "InstanceDeletionPending", "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon")
    found = await eventually(lambda: condition_is(api, f"gizmos.{GROUP}", "Terminating", "True", "InstanceDeletionCheck"),
                             timeout=20, what="InstanceDeletionCheck")
    assert conditions(found)["Terminating"][2] == "could not confirm zero CustomResources remaining: timed out waiting for the condition"
    listed = (await api.get(f"/apis/{GROUP}/v1/gizmos")).body["items"]
    assert [(i["metadata"]["name"], bool(i["metadata"].get("deletionTimestamp"))) for i in listed] == [("held", True)]
    assert await served_everywhere(api, GROUP, "v1", "gizmos")  # served while Terminating

    held = (await api.get(f"{path.format('other')}/held")).body
    held["metadata"]["finalizers"] = []
    assert (await api.put(f"{path.format('other')}/held", held)).status == 200
    await eventually(lambda: gone(api, f"{CRDS}/gizmos.{GROUP}"), timeout=20, what="the CRD gone")
    await eventually(lambda: not_served_anywhere(api, GROUP, "v1", "gizmos"), timeout=1.0, what="gizmos unserved")
    assert (await api.get(f"/apis/{GROUP}/v1/gizmos")).status == 404


async def test_the_finalizer_deletes_objects_no_version_serves_any_more(api: Client) -> None:
    body = crd("relics", "Relic")
    assert (await api.post(CRDS, body)).status == 201
    current = await established(api, f"relics.{GROUP}")
    assert (await api.post(f"/apis/{GROUP}/v1/namespaces/default/relics", cr("Relic", "r1"))).status == 201
    current["spec"]["versions"][0]["served"] = False
    assert (await api.put(f"{CRDS}/relics.{GROUP}", current)).status == 200
    await eventually(lambda: gone(api, f"/apis/{GROUP}/v1/namespaces/default/relics/r1"), what="v1 unserved")
    assert (await api.delete(f"{CRDS}/relics.{GROUP}")).status == 200
    await eventually(lambda: gone(api, f"{CRDS}/relics.{GROUP}"), timeout=20, what="the CRD gone")
    # Made again, the CRD finds nothing of the objects before.
    assert (await api.post(CRDS, body)).status == 201
    await established(api, f"relics.{GROUP}")
    await eventually(lambda: served_everywhere(api, GROUP, "v1", "relics"))
    assert (await api.get(f"/apis/{GROUP}/v1/relics")).body["items"] == []


async def test_crd_groups_get_apiservices_as_crdregistration_makes_them(api: Client) -> None:
    """Each served version: automanaged "true", groupPriorityMinimum 1000, versionPriority 100
    (the versions then rank as Kubernetes versions); built-in groups keep their own."""
    versions = [version("v1beta1"), version("v1", storage=True), version("v2alpha1"), version("v0", served=False)]
    assert (await api.post(CRDS, crd("tools", "Tool", versions=versions))).status == 201

    async def api_services() -> dict[str, dict[str, Any]] | None:
        items = (await api.get("/apis/apiregistration.k8s.io/v1/apiservices")).body["items"]
        found = {i["metadata"]["name"]: i for i in items if i["spec"].get("group") == GROUP}
        return found if len(found) == 3 else None

    found = await eventually(api_services, what="the CRD group's APIServices")
    assert set(found) == {f"v1beta1.{GROUP}", f"v1.{GROUP}", f"v2alpha1.{GROUP}"}
    for name, made in found.items():
        assert made["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}, name
        assert made["spec"] == {"group": GROUP, "version": name.split(".")[0], "groupPriorityMinimum": 1000,
                                "versionPriority": 100}, name
    group = (await api.get(f"/apis/{GROUP}")).body
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1", "v2alpha1"]
    assert group["preferredVersion"]["version"] == "v1"
    apps = (await api.get("/apis/apiregistration.k8s.io/v1/apiservices/v1.apps")).body
    assert apps["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    assert (apps["spec"]["groupPriorityMinimum"], apps["spec"]["versionPriority"]) == (17800, 15)


def test_kubectl_lists_the_local_apiservice_of_a_crd_group_while_it_exists(kubectl: Kubectl) -> None:
    manifest = (FIXTURES / "crd.yaml").read_text()
    kubectl.apply_file("apply", manifest)

    def listed() -> str:
        out = kubectl.run("get", "apiservices").stdout
        return out if "v1alpha1.samplecontroller.k8s.io" in out else ""

    row = next(line for line in wait_until(listed).splitlines() if line.startswith("v1alpha1.samplecontroller.k8s.io"))
    assert row.split()[1:3] == ["Local", "True"]
    made = json.loads(kubectl.run("get", "apiservice", "v1alpha1.samplecontroller.k8s.io", "-o", "json").stdout)
    assert made["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    assert (made["spec"]["groupPriorityMinimum"], made["spec"]["versionPriority"]) == (1000, 100)
    kubectl.run("delete", "crd", "foos.samplecontroller.k8s.io")
    wait_until(lambda: "v1alpha1.samplecontroller.k8s.io" not in kubectl.run("get", "apiservices").stdout,
               what="the APIService gone")


def test_crds_and_their_objects_are_served_right_after_a_restart_says_ready(tmp_path: Path) -> None:
    async def create(url: str) -> None:
        async with aiohttp.ClientSession(base_url=url) as session:
            api = Client(session)
            for plural, kind in (("alphas", "Alpha"), ("betas", "Beta")):
                assert (await api.post(CRDS, crd(plural, kind))).status == 201
                await established(api, f"{plural}.{GROUP}")
                await eventually(lambda: served_everywhere(api, GROUP, "v1", plural))
                assert (await api.post(f"/apis/{GROUP}/v1/namespaces/default/{plural}", cr(kind, "one"))).status == 201

    async def read(url: str) -> None:
        async with aiohttp.ClientSession(base_url=url) as session:
            api = Client(session)
            for plural in ("alphas", "betas"):  # no waiting: ready means served
                reply = await api.get(f"/apis/{GROUP}/v1/namespaces/default/{plural}/one")
                assert reply.status == 200, reply
                assert await served_everywhere(api, GROUP, "v1", plural)

    with serving(tmp_path / "data", "--no-controllers") as served:
        asyncio.run(create(served.url))
    with serving(tmp_path / "data", "--no-controllers") as served:
        asyncio.run(read(served.url))




# -- everything else a resource has, on custom resources ---------------------------------------------
LISTED = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
        "n": {"type": "integer"}}}}}
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


async def ports_crd(api: Client) -> str:
    body = crd("ports", "Port", versions=[{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": LISTED}}])
    assert (await api.post(CRDS, body)).status == 201
    await established(api, f"ports.{GROUP}")
    await eventually(lambda: served_everywhere(api, GROUP, "v1", "ports"))
    return f"/apis/{GROUP}/v1/namespaces/default/ports"


async def test_custom_resources_list_and_watch_with_selectors_and_pages(api: Client) -> None:
    path = await ports_crd(api)
    for i in range(5):
        body = cr("Port", f"p{i}", labels={"team": "a" if i % 2 == 0 else "b"})
        assert (await api.post(path, body)).status == 201
    listed = (await api.get(path, params={"labelSelector": "team=a"})).body
    assert [i["metadata"]["name"] for i in listed["items"]] == ["p0", "p2", "p4"]
    names, token = [], ""
    while True:
        page = (await api.get(path, params={"limit": "2", **({"continue": token} if token else {})})).body
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue", "")
        assert len(page["items"]) <= 2
        if not token:
            break
    assert names == ["p0", "p1", "p2", "p3", "p4"]

    since = listed["metadata"]["resourceVersion"]
    async with api.session.get(path, params={"watch": "1", "resourceVersion": since, "labelSelector": "team=b"},
                               timeout=aiohttp.ClientTimeout(total=None, sock_read=10)) as stream:
        assert (await api.post(path, cr("Port", "a9", labels={"team": "a"}))).status == 201
        assert (await api.post(path, cr("Port", "b9", labels={"team": "b"}))).status == 201
        event = json.loads(await asyncio.wait_for(stream.content.readline(), 10))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "b9")


async def test_custom_resources_take_json_merge_and_apply_patches_but_not_strategic_ones(api: Client) -> None:
    path = await ports_crd(api)
    body = cr("Port", "web") | {"spec": {"ports": [{"name": "http", "port": 80}]}}
    assert (await api.post(path, body)).status == 201
    reply = await api.patch(f"{path}/web", [{"op": "replace", "path": "/spec/n", "value": 2}], "application/json-patch+json")
    assert reply.status == 200 and reply.body["spec"]["n"] == 2, reply
    reply = await api.patch(f"{path}/web", {"metadata": {"labels": {"x": "y"}}}, "application/merge-patch+json")
    assert reply.status == 200 and reply.body["metadata"]["labels"] == {"x": "y"}
    applied = {"apiVersion": f"{GROUP}/v1", "kind": "Port", "metadata": {"name": "web"},
               "spec": {"ports": [{"name": "https", "port": 443}]}}
    reply = await api.patch(f"{path}/web", applied, "application/apply-patch+yaml", params={"fieldManager": "other"})
    assert reply.status == 200, reply
    assert reply.body["spec"]["ports"] == [{"name": "http", "port": 80}, {"name": "https", "port": 443}]  # merged by name
    reply = await api.patch(f"{path}/web", {"spec": {"n": 3}}, "application/strategic-merge-patch+json")
    assert reply.status == 415, reply
    assert reply.body["reason"] == "UnsupportedMediaType"
    assert reply.body["message"] == ("the body of the request was in an unknown format - accepted media types include: "
                                     "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")


async def test_custom_resources_dry_run_tables_and_finalizers(api: Client) -> None:
    path = await ports_crd(api)
    reply = await api.post(path, cr("Port", "dry"), params={"dryRun": "All"})
    assert reply.status == 201 and reply.body["metadata"]["name"] == "dry"
    assert (await api.get(f"{path}/dry")).status == 404
    assert (await api.post(path, cr("Port", "kept", finalizers=["example.com/keep"]))).status == 201
    table = (await api.get(path, headers={"Accept": TABLE})).body
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert [r["cells"][0] for r in table["rows"]] == ["kept"]
    reply = await api.delete(f"{path}/kept", params={"dryRun": "All"})
    assert reply.status == 200 and not (await api.get(f"{path}/kept")).body["metadata"].get("deletionTimestamp")
    assert (await api.delete(f"{path}/kept")).status == 200
    held = (await api.get(f"{path}/kept")).body
    assert held["metadata"]["deletionTimestamp"]
    assert (await api.patch(f"{path}/kept", {"metadata": {"finalizers": None}})).status == 200
    await eventually(lambda: gone(api, f"{path}/kept"), what="the finalized object gone")


@pytest.mark.controllers
async def test_custom_resources_are_garbage_collected_and_go_with_their_namespace(api: Client) -> None:
    await ports_crd(api)
    assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})).status == 201
    path = f"/apis/{GROUP}/v1/namespaces/team/ports"

    async def owner_and_dependents(name: str) -> None:
        owner = (await api.post(path, cr("Port", name))).body
        ref = {"apiVersion": f"{GROUP}/v1", "kind": "Port", "name": name, "uid": owner["metadata"]["uid"]}
        assert (await api.post(path, cr("Port", f"{name}-owned", ownerReferences=[ref]))).status == 201
        cm = {"metadata": {"name": f"{name}-cm", "ownerReferences": [ref]}, "data": {}}
        assert (await api.post("/api/v1/namespaces/team/configmaps", cm)).status == 201
        assert (await api.delete(f"{path}/{name}")).status == 200

    # The collector discovers again soon after a CRD changes, not only every 30 s as kube's: the
    # new kind's objects are collected well within that period.
    await owner_and_dependents("owner")
    await eventually(lambda: gone(api, f"{path}/owner-owned"), timeout=10, what="the owned custom resource collected")
    await eventually(lambda: gone(api, "/api/v1/namespaces/team/configmaps/owner-cm"), timeout=5,
                     what="the owned ConfigMap collected")

    assert (await api.post(path, cr("Port", "left"))).status == 201
    assert (await api.delete("/api/v1/namespaces/team")).status == 200
    await eventually(lambda: gone(api, "/api/v1/namespaces/team"), timeout=30, what="the namespace gone")
    assert (await api.get(f"/apis/{GROUP}/v1/ports")).body["items"] == []


@pytest.mark.kplane(secure=True)
def test_rbac_decides_on_custom_resources(kplane: Any, tmp_path: Path) -> None:
    """A ServiceAccount is refused the custom resources until a Role grants them (real kubectl, HTTPS)."""
    kplane.request("POST", CRDS, crd("ports", "Port"))
    wait_until(lambda: kplane.server.scheme.resource(GROUP, "v1", "ports") is not None, what="ports served")
    kplane.request("POST", f"/apis/{GROUP}/v1/namespaces/default/ports", cr("Port", "p1"))
    env = {**os.environ, "KUBECONFIG": str(kplane.service_account_kubeconfig("robot")), "HOME": str(tmp_path),
           "KUBECACHEDIR": str(tmp_path / "cache")}

    def get() -> subprocess.CompletedProcess[str]:
        return subprocess.run(["kubectl", "get", f"ports.{GROUP}", "p1", "-o", "name", "-v=6"],
                              capture_output=True, text=True, env=env, timeout=30)

    refused = get()
    assert refused.returncode != 0 and "403 Forbidden" in refused.stderr, refused.stderr
    assert f'ports.{GROUP} "p1" is forbidden: User "system:serviceaccount:default:robot" cannot get resource "ports"' \
        in refused.stderr
    kplane.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {
        "metadata": {"name": "ports-reader"}, "rules": [{"apiGroups": [GROUP], "resources": ["ports"], "verbs": ["get", "list"]}]})
    kplane.request("POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", {
        "metadata": {"name": "robot-reads-ports"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ports-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}]})
    allowed = wait_until(lambda: (done := get()).returncode == 0 and done, what="the Role in force")
    assert allowed.stdout.strip() == f"port.{GROUP}/p1" and "200 OK" in allowed.stderr
