"""Objects as PartialObjectMetadata, as client-go's metadata client asks for them (GET, LIST, WATCH)."""

from __future__ import annotations

import json

from tests.builders import configmap
from tests.conftest import Client

CMS = "/api/v1/namespaces/default/configmaps"
AS_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
AS_OBJECT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


async def test_list_and_get_as_metadata(api: Client) -> None:
    created = (await api.post(CMS, configmap("settings", data={"secret-ish": "value"}, labels={"app": "x"}))).body
    listed = await api.get(CMS, headers={"Accept": f"{AS_LIST},application/json"}, params={"labelSelector": "app=x"})
    assert listed.status == 200
    assert listed.headers["Content-Type"] == "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
    assert listed.body == {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                           "metadata": {"resourceVersion": listed.body["metadata"]["resourceVersion"]},
                           "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                      "metadata": created["metadata"]}]}
    got = await api.get(f"{CMS}/settings", headers={"Accept": AS_OBJECT})
    assert got.status == 200 and got.body == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                              "metadata": created["metadata"]}
    beta = await api.get(f"{CMS}/settings", headers={"Accept": AS_OBJECT.replace("v=v1", "v=v1beta1")})
    assert beta.body["apiVersion"] == "meta.k8s.io/v1beta1" and "data" not in beta.body
    paged = await api.get(CMS, headers={"Accept": AS_LIST}, params={"limit": "1"})
    assert len(paged.body["items"]) == 1


async def test_the_wrong_one_for_the_endpoint_is_406(api: Client) -> None:
    await api.post(CMS, configmap("one"))
    on_list = await api.get(CMS, headers={"Accept": AS_OBJECT})
    assert (on_list.status, on_list.body["reason"]) == (406, "NotAcceptable")
    assert on_list.body["message"].startswith("you requested PartialObjectMetadata, but the requested object is a list")
    on_object = await api.get(f"{CMS}/one", headers={"Accept": AS_LIST})
    assert (on_object.status, on_object.body["reason"]) == (406, "NotAcceptable")


async def test_watch_events_carry_metadata_only(api: Client) -> None:
    created = (await api.post(CMS, configmap("w", data={"k": "v"}))).body
    await api.patch(f"{CMS}/w", {"data": {"k": "changed"}})
    params = {"watch": "1", "resourceVersion": created["metadata"]["resourceVersion"], "timeoutSeconds": "1"}
    async with api.session.get(CMS, params=params, headers={"Accept": AS_OBJECT}) as response:
        assert response.headers["Content-Type"] == "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
        event = json.loads(await response.content.readline())
    assert event["type"] == "MODIFIED"
    assert set(event["object"]) == {"kind", "apiVersion", "metadata"} and event["object"]["kind"] == "PartialObjectMetadata"
