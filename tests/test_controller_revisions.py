"""apps/v1 ControllerRevision and core/v1 PersistentVolumeClaim as plain API objects, and the
ControllerRevision history the StatefulSet and DaemonSet controllers keep."""

from __future__ import annotations

from kplane.plugins.apps.controllers.history import (
    HASH_LABEL, History, equal_revision, new_revision, next_revision, revision_hash, sort_revisions,
)
from kplane.api import RESTClient

REVISIONS = "/apis/apps/v1/namespaces/default/controllerrevisions"
CLAIMS = "/api/v1/namespaces/default/persistentvolumeclaims"


def _owner(image: str = "nginx") -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default", "uid": "u-1", "annotations": {"a": "b"}},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}}}}


async def test_controller_revision_round_trip_and_rules(api):
    body = {"metadata": {"name": "r1"}, "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 1}
    created = await api.post(REVISIONS, body)
    assert created.status == 201 and created.body["data"] == body["data"] and created.body["revision"] == 1
    renumbered = await api.patch(f"{REVISIONS}/r1", {"revision": 3})
    assert renumbered.status == 200 and renumbered.body["revision"] == 3
    changed = await api.patch(f"{REVISIONS}/r1", {"data": {"x": 1}})
    assert changed.status == 422 and "data: Invalid value" in changed.body["message"] and "field is immutable" in changed.body["message"]
    missing = await api.post(REVISIONS, {"metadata": {"name": "r2"}, "revision": 1})
    assert missing.status == 422 and changed.body["reason"] == "Invalid"
    assert missing.body["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value: data is mandatory", "field": "data"}]
    negative = await api.post(REVISIONS, {"metadata": {"name": "r3"}, "data": {}, "revision": -1})
    assert negative.status == 422
    assert (await api.get(f"{REVISIONS}/r2")).status == 404 and (await api.get(f"{REVISIONS}/r3")).status == 404


async def test_controller_revision_table_names_its_controller(api):
    revision = new_revision(_owner(), api_version="apps/v1", kind="StatefulSet", revision=2)
    await api.post(REVISIONS, revision)
    table = await api.get(REVISIONS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [c["name"] for c in table.body["columnDefinitions"]] == ["Name", "Controller", "Revision", "Age"]
    assert table.body["rows"][0]["cells"][:3] == [revision["metadata"]["name"], "statefulset.apps/web", 2]


async def test_persistent_volume_claim_starts_pending(api):
    claim = {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    created = await api.post(CLAIMS, claim)
    assert created.status == 201 and created.body["status"] == {"phase": "Pending"}
    assert created.body["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    bound = await api.patch(f"{CLAIMS}/data/status", {"status": {"phase": "Bound"}, "spec": {"volumeName": "x"}})
    assert bound.body["status"]["phase"] == "Bound" and "volumeName" not in bound.body["spec"]


def test_revision_naming_and_ordering():
    first = new_revision(_owner(), api_version="apps/v1", kind="StatefulSet", revision=1)
    assert first["metadata"]["name"] == f"web-{first['metadata']['labels'][HASH_LABEL]}"
    assert first["metadata"]["labels"]["app"] == "web" and first["metadata"]["annotations"] == {"a": "b"}
    assert first["data"]["spec"]["template"]["$patch"] == "replace"
    assert first["metadata"]["ownerReferences"][0]["controller"] is True
    again = new_revision(_owner(), api_version="apps/v1", kind="StatefulSet", revision=5)
    other = new_revision(_owner("nginx:2"), api_version="apps/v1", kind="StatefulSet", revision=2)
    assert equal_revision(first, again) and not equal_revision(first, other)
    assert revision_hash(first["data"]) != revision_hash(first["data"], 1)
    assert next_revision([first, other]) == 3 and next_revision([]) == 1
    assert [r["revision"] for r in sort_revisions([again, first, other])] == [1, 2, 5]


async def test_history_retries_collisions_and_truncates(server):
    client = RESTClient(server.url)
    try:
        history = History(client.resource("apps", "v1", "controllerrevisions", "default"))
        owner = _owner()
        revision = new_revision(owner, api_version="apps/v1", kind="StatefulSet", revision=1)
        made, collisions = await history.create(owner, revision, 0)
        assert collisions == 0 and made["metadata"]["name"] == f"web-{revision_hash(revision['data'], 0)}"
        same, collisions = await history.create(owner, revision, 0)  # an equal revision exists: it is the answer
        assert same["metadata"]["uid"] == made["metadata"]["uid"] and collisions == 0
        squatter = {**revision, "metadata": {**revision["metadata"], "name": f"web-{revision_hash(revision['data'], 1)}"}, "data": {"other": True}}
        await client.resource("apps", "v1", "controllerrevisions", "default").create(squatter)
        changed = new_revision(_owner("nginx:2"), api_version="apps/v1", kind="StatefulSet", revision=2)
        squatter["metadata"]["name"] = f"web-{revision_hash(changed['data'], 0)}"
        await client.resource("apps", "v1", "controllerrevisions", "default").create(squatter)
        collided, collisions = await history.create(owner, changed, 0)
        assert collisions == 1 and collided["metadata"]["name"] == f"web-{revision_hash(changed['data'], 1)}"
        assert (await history.renumber(made, 7))["revision"] == 7
        listed = (await client.resource("apps", "v1", "controllerrevisions", "default").list())["items"]
        await history.truncate(listed, live={collided["metadata"]["name"]}, limit=1)
        left = (await client.resource("apps", "v1", "controllerrevisions", "default").list())["items"]
        assert sorted(r["metadata"]["name"] for r in left) == sorted([collided["metadata"]["name"], made["metadata"]["name"]])
    finally:
        await client.close()
