"""CRDs with several versions: ``None`` conversion, and ``Webhook`` conversion through a real
HTTPS webhook (ConversionReview v1, caBundle) reached by ``url`` and by ``service``, on every
read and write path, over real HTTP and with kubectl."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from cryptography.x509.oid import ExtendedKeyUsageOID

from kplane.core.server.discovery import storage_version_hash
from kplane.core.serving.apiserver import APIServer
from tests.certs import Issued, issue, new_ca
from tests.conftest import Client
from tests.kubectl_cli import kubectl_async as kubectl

GROUP = "conversion.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NAME = f"websites.{GROUP}"
V1 = f"/apis/{GROUP}/v1/namespaces/default/websites"
V2 = f"/apis/{GROUP}/v2/namespaces/default/websites"
SERVICE_NAME = "convert"

V1_SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "host": {"type": "string"}, "port": {"type": "integer"}}}}}
V2_SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "url": {"type": "string"}, "replicas": {"type": "integer", "default": 1}}}}}


#: Each version's columns read its own fields.
COLUMNS = {"v1": [{"name": "Host", "type": "string", "jsonPath": ".spec.host"},
                  {"name": "Port", "type": "integer", "jsonPath": ".spec.port"}],
           "v2": [{"name": "URL", "type": "string", "jsonPath": ".spec.url"},
                  {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}]}
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def crd(conversion: dict[str, Any] | None = None, storage: str = "v1") -> dict[str, Any]:
    """Two served versions of one kind whose shapes differ: v1 ``spec.host`` and ``spec.port``,
    v2 ``spec.url`` (and ``spec.replicas``, defaulted), each with columns of its fields."""
    versions = [{"name": name, "served": True, "storage": name == storage, "schema": {"openAPIV3Schema": schema},
                 "additionalPrinterColumns": COLUMNS[name]}
                for name, schema in (("v1", V1_SCHEMA), ("v2", V2_SCHEMA))]
    spec: dict[str, Any] = {"group": GROUP, "scope": "Namespaced", "versions": versions,
                            "names": {"plural": "websites", "singular": "website", "kind": "WebSite", "listKind": "WebSiteList"}}
    if conversion is not None:
        spec["conversion"] = conversion
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": NAME}, "spec": spec}


def site(name: str, version: str = "v1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "WebSite", "metadata": {"name": name}, "spec": spec}


async def eventually(check: Any, timeout: float = 10.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await check()
        if found:
            return found
        assert asyncio.get_running_loop().time() < deadline, "not within the time limit"
        await asyncio.sleep(0.05)


async def install(api: Client, definition: dict[str, Any], version: str = "v2") -> None:
    """Create (or replace) the CRD and wait until ``version`` serves it as the CRD now says."""
    current = await api.get(f"{CRDS}/{NAME}")
    if current.status == 200:
        definition = {**definition, "metadata": {**definition["metadata"], "resourceVersion": current.body["metadata"]["resourceVersion"]}}
        assert (reply := await api.put(f"{CRDS}/{NAME}", definition)).status == 200, reply
    else:
        assert (reply := await api.post(CRDS, definition)).status == 201, reply

    async def served() -> bool:
        return (await api.get(f"/apis/{GROUP}/{version}/websites")).status == 200

    await eventually(served)


# -- a conversion webhook --------------------------------------------------------------------------
def to_v2(obj: dict[str, Any]) -> dict[str, Any]:
    spec = dict(obj.get("spec") or {})
    host, port = spec.pop("host", None), spec.pop("port", None)
    if host is not None:
        spec["url"] = f"https://{host}:{port or 443}"
    return {**obj, "apiVersion": f"{GROUP}/v2", "spec": spec}


def to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    spec = dict(obj.get("spec") or {})
    url = spec.pop("url", None)
    spec.pop("replicas", None)
    if url is not None:
        host, _, port = url.removeprefix("https://").partition(":")
        spec.update(host=host, port=int(port or 443))
    return {**obj, "apiVersion": f"{GROUP}/v1", "spec": spec}


class ConversionWebhook:
    """A conversion webhook over HTTPS as the sample one (agnhost's crd-conversion-webhook):
    it converts between the shapes, records every review, and can be told to misbehave."""

    def __init__(self, ca: Issued, folder: Path) -> None:
        serving = issue(ca, "localhost", usage=ExtendedKeyUsageOID.SERVER_AUTH,
                        hosts=["localhost", f"{SERVICE_NAME}.default.svc"])
        self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.tls.load_cert_chain(*serving.write(folder, "webhook"))
        self.reviews: list[dict[str, Any]] = []
        self.answer: Any = None  # when set: called with the review, its result is the answer
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/convert", self.convert)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site_ = web.TCPSite(self._runner, "127.0.0.1", self.port, ssl_context=self.tls)
        await site_.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def convert(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.reviews.append(review)
        if self.answer is not None:
            return web.json_response(self.answer(review))
        wanted = review["request"]["desiredAPIVersion"]
        change = to_v2 if wanted.endswith("/v2") else to_v1
        converted = [change(obj) for obj in review["request"]["objects"]]
        return web.json_response({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {
            "uid": review["request"]["uid"], "convertedObjects": converted, "result": {"status": "Success"}}})


@pytest.fixture
def ca() -> Issued:
    return new_ca("webhook-ca")


@pytest.fixture
async def webhook(ca: Issued, tmp_path: Path) -> AsyncIterator[ConversionWebhook]:
    made = ConversionWebhook(ca, tmp_path)
    await made.start()
    try:
        yield made
    finally:
        await made.stop()


def by_url(webhook: ConversionWebhook, ca: Issued) -> dict[str, Any]:
    return {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1", "v1beta1"], "clientConfig": {
        "url": f"https://localhost:{webhook.port}/convert", "caBundle": base64.b64encode(ca.pem).decode()}}}


def by_service(webhook: ConversionWebhook, ca: Issued) -> dict[str, Any]:
    return {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {
        "service": {"namespace": "default", "name": SERVICE_NAME, "port": webhook.port, "path": "/convert"},
        "caBundle": base64.b64encode(ca.pem).decode()}}}


def service(port: int) -> dict[str, Any]:
    """The webhook's Service: kplane dials its cluster IP as written, here loopback."""
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": SERVICE_NAME},
            "spec": {"clusterIP": "127.0.0.1", "ports": [{"port": port, "protocol": "TCP"}]}}


async def watch_lines(api: Client, path: str, count: int, headers: dict[str, str] | None = None,
                      **params: str) -> list[dict[str, Any]]:
    """The first ``count`` events of a watch."""
    found: list[dict[str, Any]] = []
    async with api.session.get(path, params={"watch": "true", **params}, headers=headers) as reply:
        assert reply.status == 200
        async with asyncio.timeout(10):
            while len(found) < count:
                line = await reply.content.readline()
                assert line, f"the watch ended after {found}"
                found.append(json.loads(line))
    return found


# -- None ------------------------------------------------------------------------------------------
async def test_none_conversion_rewrites_only_the_api_version(api: Client) -> None:
    schemaless = crd()
    for version in schemaless["spec"]["versions"]:  # same shape in both: None only relabels
        version["schema"] = {"openAPIV3Schema": V1_SCHEMA}
    await install(api, schemaless)
    made = await api.post(V1, site("a", host="example.com", port=80))
    assert made.status == 201, made
    got = await api.get(f"{V2}/a")
    assert got.status == 200, got
    assert got.body["apiVersion"] == f"{GROUP}/v2" and got.body["spec"] == {"host": "example.com", "port": 80}
    assert (await api.get(f"{V1}/a")).body["apiVersion"] == f"{GROUP}/v1"

    for path, version in ((V1, "v1"), (V2, "v2")):
        listed = (await api.get(path)).body
        assert listed["apiVersion"] == f"{GROUP}/{version}" and listed["kind"] == "WebSiteList"
        assert [i["apiVersion"] for i in listed["items"]] == [f"{GROUP}/{version}"]
        events = await watch_lines(api, path, 1)
        assert events[0]["type"] == "ADDED" and events[0]["object"]["apiVersion"] == f"{GROUP}/{version}"

    # server-side apply in the version that is not stored: answered in it, stored in v1
    applied = await api.patch(f"{V2}/a?fieldManager=tester&force=true", site("a", "v2", host="example.org"),
                              content_type="application/apply-patch+yaml")
    assert applied.status == 200, applied
    assert applied.body["apiVersion"] == f"{GROUP}/v2" and applied.body["spec"]["host"] == "example.org"
    assert (await api.get(f"{V1}/a")).body["spec"] == {"host": "example.org", "port": 80}
    created = await api.patch(f"{V2}/b?fieldManager=tester", site("b", "v2", host="b.example"),
                              content_type="application/apply-patch+yaml")
    assert created.status == 201 and created.body["apiVersion"] == f"{GROUP}/v2", created


# -- Webhook ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("reached", ["url", "service"])
async def test_webhook_conversion_on_every_read_and_write(api: Client, webhook: ConversionWebhook, ca: Issued,
                                                          reached: str) -> None:
    if reached == "service":
        assert (await api.post("/api/v1/namespaces/default/services", service(webhook.port))).status == 201
        conversion = by_service(webhook, ca)
    else:
        conversion = by_url(webhook, ca)
    await install(api, crd(conversion))

    # create in v2: converted to v1 to be stored, answered in v2 (defaulted)
    made = await api.post(V2, site("a", "v2", url="https://a.example:8443"))
    assert made.status == 201, made
    assert made.body["apiVersion"] == f"{GROUP}/v2"
    assert made.body["spec"] == {"url": "https://a.example:8443", "replicas": 1}
    assert (await api.get(f"{V1}/a")).body["spec"] == {"host": "a.example", "port": 8443}
    review = webhook.reviews[0]
    assert review["apiVersion"] == "apiextensions.k8s.io/v1" and review["kind"] == "ConversionReview"
    assert review["request"]["desiredAPIVersion"] == f"{GROUP}/v1" and review["request"]["uid"]

    # create in v1, read in v2
    assert (await api.post(V1, site("b", host="b.example", port=80))).status == 201
    got = await api.get(f"{V2}/b")
    assert got.status == 200, got
    assert got.body["apiVersion"] == f"{GROUP}/v2" and got.body["spec"] == {"url": "https://b.example:80", "replicas": 1}
    assert got.body["metadata"]["name"] == "b" and got.body["metadata"]["resourceVersion"]

    # a list page is one review; objects already in the version asked for are not sent
    webhook.reviews.clear()
    listed = await api.get(V2)
    assert listed.status == 200, listed
    assert listed.body["apiVersion"] == f"{GROUP}/v2"
    assert {i["metadata"]["name"]: i["spec"]["url"] for i in listed.body["items"]} == {
        "a": "https://a.example:8443", "b": "https://b.example:80"}
    assert len(webhook.reviews) == 1 and len(webhook.reviews[0]["request"]["objects"]) == 2
    webhook.reviews.clear()
    assert [i["spec"]["port"] for i in (await api.get(V1)).body["items"]] == [8443, 80]
    assert webhook.reviews == []  # the storage version's list reads the stored bytes

    # update (PUT) in v2: the old object is converted to v2 for the strategy, the new one to v1
    current = (await api.get(f"{V2}/b")).body
    current["spec"]["url"] = "https://b.example:81"
    updated = await api.put(f"{V2}/b", current)
    assert updated.status == 200, updated
    assert updated.body["spec"]["url"] == "https://b.example:81" and updated.body["metadata"]["generation"] == 2
    assert (await api.get(f"{V1}/b")).body["spec"] == {"host": "b.example", "port": 81}

    # patches in v2: merge patch, JSON patch and server-side apply
    merged = await api.patch(f"{V2}/b", {"spec": {"url": "https://c.example:82"}})
    assert merged.status == 200 and merged.body["spec"]["url"] == "https://c.example:82", merged
    json_patched = await api.patch(f"{V2}/b", [{"op": "replace", "path": "/spec/url", "value": "https://d.example:83"}],
                                   content_type="application/json-patch+json")
    assert json_patched.status == 200 and json_patched.body["spec"]["url"] == "https://d.example:83", json_patched
    applied = await api.patch(f"{V2}/c?fieldManager=tester", site("c", "v2", url="https://e.example:84"),
                              content_type="application/apply-patch+yaml")
    assert applied.status == 201 and applied.body["spec"] == {"url": "https://e.example:84", "replicas": 1}, applied
    assert (await api.get(f"{V1}/c")).body["spec"] == {"host": "e.example", "port": 84}
    # and in v1, where nothing needs converting
    assert (await api.patch(f"{V1}/c", {"spec": {"port": 85}})).body["spec"] == {"host": "e.example", "port": 85}
    assert (await api.get(f"{V2}/c")).body["spec"]["url"] == "https://e.example:85"

    # watches in both versions; two watchers of v2 share one conversion of each event
    webhook.reviews.clear()
    first, second, v1 = await asyncio.gather(watch_lines(api, V2, 3), watch_lines(api, V2, 3), watch_lines(api, V1, 3))
    for events in (first, second):
        assert {e["object"]["metadata"]["name"]: e["object"]["spec"]["url"] for e in events} == {
            "a": "https://a.example:8443", "b": "https://d.example:83", "c": "https://e.example:85"}
        assert {e["object"]["apiVersion"] for e in events} == {f"{GROUP}/v2"}
    assert {e["object"]["spec"]["port"] for e in v1} == {8443, 83, 85}
    rv = (await api.get(V2)).body["metadata"]["resourceVersion"]
    webhook.reviews.clear()

    async def modified() -> list[dict[str, Any]]:
        return await watch_lines(api, V2, 1, resourceVersion=rv)

    watchers = [asyncio.create_task(modified()) for _ in range(3)]
    await asyncio.sleep(0.3)  # the watches are open
    assert (await api.patch(f"{V1}/a", {"spec": {"port": 9000}})).status == 200
    for events in await asyncio.gather(*watchers):
        assert events[0]["type"] == "MODIFIED" and events[0]["object"]["spec"]["url"] == "https://a.example:9000"
    assert len(webhook.reviews) == 1  # once for all three watchers

    # a Table with the objects in the version asked for (kubectl get -o wide, custom columns)
    table = await api.get(f"{V2}?includeObject=Object", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert table.status == 200, table
    assert {r["object"]["apiVersion"] for r in table.body["rows"]} == {f"{GROUP}/v2"}

    # delete in v2 answers the object as it was, in v2
    deleted = await api.delete(f"{V2}/c")
    assert deleted.status == 200, deleted
    assert (await api.get(f"{V2}/c")).status == 404


async def test_webhook_failures_are_internal_error_statuses(api: Client, webhook: ConversionWebhook, ca: Issued) -> None:
    await install(api, crd(by_url(webhook, ca)))
    assert (await api.post(V1, site("a", host="a.example", port=1))).status == 201

    uid_of = lambda review: review["request"]["uid"]  # noqa: E731
    cases = [
        (lambda r: {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                    "response": {"uid": uid_of(r), "result": {"status": "Failure", "message": "I cannot"}}}, "failed: I cannot"),
        (lambda r: {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                    "response": {"uid": "other", "result": {"status": "Success"}, "convertedObjects": []}},
         'failed: expected response.uid="'),
        (lambda r: {"apiVersion": "v1", "kind": "Status"},
         "failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got v1, Kind=Status"),
        (lambda r: {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                    "response": {"uid": uid_of(r), "result": {"status": "Success"}, "convertedObjects": []}},
         "returned 0 objects, expected 1"),
        (lambda r: {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {
            "uid": uid_of(r), "result": {"status": "Success"},
            "convertedObjects": [{**to_v2(o), "metadata": {**o["metadata"], "name": "other"}} for o in r["request"]["objects"]]}},
         "returned invalid object at index 0: must have the same name: a != other"),
        (lambda r: {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {
            "uid": uid_of(r), "result": {"status": "Success"},
            "convertedObjects": [{**o, "apiVersion": f"{GROUP}/v1"} for o in r["request"]["objects"]]}},
         f"returned invalid object at index 0: invalid groupVersion (expected {GROUP}/v2, received {GROUP}/v1)"),
    ]
    for answer, message in cases:
        webhook.answer = answer
        reply = await api.get(f"{V2}/a")
        assert reply.status == 500, reply
        assert reply.body["kind"] == "Status" and reply.body["reason"] == "InternalError", reply
        assert reply.body["message"].startswith(f"Internal error occurred: conversion webhook for {GROUP}/v1, Kind=WebSite")
        assert message in reply.body["message"], reply

    # labels and annotations are the webhook's to change; the rest of metadata is the original's
    webhook.answer = lambda r: {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {
        "uid": uid_of(r), "result": {"status": "Success"}, "convertedObjects": [
            {**to_v2(o), "metadata": {**o["metadata"], "labels": {"converted": "yes"}, "generation": 99}}
            for o in r["request"]["objects"]]}}
    got = (await api.get(f"{V2}/a")).body
    assert got["metadata"]["labels"] == {"converted": "yes"} and got["metadata"]["generation"] == 1
    webhook.answer = lambda r: {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {
        "uid": uid_of(r), "result": {"status": "Success"}, "convertedObjects": [
            {**to_v2(o), "metadata": {**o["metadata"], "labels": {"bad key!": "x"}}} for o in r["request"]["objects"]]}}
    bad = await api.get(f"{V2}/a")
    assert bad.status == 500 and "returned invalid metadata: metadata.labels: Invalid value: \"bad key!\"" in bad.body["message"], bad
    webhook.answer = None

    # the webhook down: reads, lists, writes and watches in v2 answer an InternalError Status
    await webhook.stop()
    for reply in (await api.get(f"{V2}/a"), await api.get(V2), await api.post(V2, site("n", "v2", url="https://n:1")),
                  await api.patch(f"{V2}/a", {"spec": {"url": "https://x:2"}})):
        assert reply.status == 500 and reply.body["reason"] == "InternalError", reply
        assert f'failed: Post "https://localhost:{webhook.port}/convert": dial tcp' in reply.body["message"], reply
        assert "connect: connection refused" in reply.body["message"], reply
    events = await watch_lines(api, V2, 1)
    assert events[0]["type"] == "ERROR" and events[0]["object"]["reason"] == "InternalError", events
    assert (await api.get(f"{V2}/n")).status == 404  # nothing stored by the refused create
    assert (await api.get(f"{V1}/a")).status == 200  # the storage version needs no webhook

    # back up: conversion works again, watches included (a failed conversion is not remembered)
    await webhook.start()
    assert (await api.get(f"{V2}/a")).body["spec"]["url"] == "https://a.example:1"
    events = await watch_lines(api, V2, 1)
    assert events[0]["type"] == "ADDED" and events[0]["object"]["spec"]["url"] == "https://a.example:1"


async def test_webhook_certificate_is_verified_with_the_ca_bundle(api: Client, webhook: ConversionWebhook) -> None:
    other = new_ca("someone-else")
    await install(api, crd(by_url(webhook, other)))
    assert (await api.post(V1, site("a", host="a.example", port=1))).status == 201
    reply = await api.get(f"{V2}/a")
    assert reply.status == 500, reply
    assert "tls: failed to verify certificate: x509: certificate signed by unknown authority" in reply.body["message"], reply


async def test_missing_service_is_an_internal_error(api: Client, webhook: ConversionWebhook, ca: Issued) -> None:
    await install(api, crd(by_service(webhook, ca)))
    assert (await api.post(V1, site("a", host="a.example", port=1))).status == 201
    reply = await api.get(f"{V2}/a")
    assert reply.status == 500, reply
    assert f'failed: service/{SERVICE_NAME} in "default" is not present' in reply.body["message"], reply


# -- the storage version changes: storedVersions and migration --------------------------------------
async def test_storage_version_migration(api: Client, webhook: ConversionWebhook, ca: Issued) -> None:
    await install(api, crd(by_url(webhook, ca)))
    for name in ("a", "b"):
        assert (await api.post(V1, site(name, host=f"{name}.example", port=1))).status == 201

    # v2 becomes the storage version: objects stored in v1 stay so, and storedVersions says it
    await install(api, crd(by_url(webhook, ca), storage="v2"))
    assert (await api.get(f"{CRDS}/{NAME}")).body["status"]["storedVersions"] == ["v1", "v2"]
    wanted = storage_version_hash(GROUP, "v2", "WebSite")

    async def storing_v2() -> bool:
        resources = (await api.get(f"/apis/{GROUP}/v2")).body["resources"]
        return any(r["name"] == "websites" and r.get("storageVersionHash") == wanted for r in resources)

    await eventually(storing_v2)
    assert (await api.post(V2, site("c", "v2", url="https://c.example:3"))).status == 201
    webhook.reviews.clear()
    listed = (await api.get(V2)).body["items"]  # in the storage version, yet a and b need converting
    assert {i["metadata"]["name"]: i["spec"]["url"] for i in listed} == {
        "a": "https://a.example:1", "b": "https://b.example:1", "c": "https://c.example:3"}
    assert [len(r["request"]["objects"]) for r in webhook.reviews] == [2]

    # migrate: rewrite every object (an empty patch stores it in the storage version), then
    # drop v1 from storedVersions through the status subresource
    for item in listed:
        assert (await api.patch(f"{V2}/{item['metadata']['name']}", {})).status == 200
    patched = await api.patch(f"{CRDS}/{NAME}/status", [{"op": "replace", "path": "/status/storedVersions", "value": ["v2"]}],
                              content_type="application/json-patch+json")
    assert patched.status == 200 and patched.body["status"]["storedVersions"] == ["v2"], patched

    async def migrated() -> bool:
        webhook.reviews.clear()
        found = (await api.get(V2)).body["items"]
        return len(found) == 3 and not webhook.reviews  # the stored bytes, as they are

    await eventually(migrated)
    assert (await api.get(f"{V1}/a")).body["spec"] == {"host": "a.example", "port": 1}


# -- Tables ----------------------------------------------------------------------------------------
def cells(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Table rows by name: the cells after Name."""
    return {row["cells"][0]: row["cells"][1:] for row in rows}


@pytest.mark.parametrize("strategy", ["None", "Webhook"])
async def test_tables_are_made_from_the_object_in_the_version_asked_for(api: Client, webhook: ConversionWebhook,
                                                                        ca: Issued, strategy: str) -> None:
    await install(api, crd(by_url(webhook, ca) if strategy == "Webhook" else None))
    assert (await api.post(V1, site("a", host="a.example", port=80))).status == 201
    assert (await api.post(V1, site("b", host="b.example", port=81))).status == 201
    # None keeps the fields (v2 prunes v1's and defaults its own); the webhook reshapes them
    url = {"a": "https://a.example:80", "b": "https://b.example:81"} if strategy == "Webhook" else {"a": None, "b": None}
    in_v1, in_v2 = {"a": ["a.example", 80], "b": ["b.example", 81]}, {n: [u, 1] for n, u in url.items()}

    for path, names, expected in ((V1, ["Name", "Host", "Port"], in_v1), (V2, ["Name", "URL", "Replicas"], in_v2)):
        webhook.reviews.clear()
        listed = await api.get(path, headers=TABLE)
        assert listed.status == 200, listed
        assert [c["name"] for c in listed.body["columnDefinitions"]] == names
        assert cells(listed.body["rows"]) == expected
        assert listed.body["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
        got = await api.get(f"{path}/b?includeObject=None", headers=TABLE)
        assert got.status == 200 and cells(got.body["rows"]) == {"b": expected["b"]}, got
        assert "object" not in got.body["rows"][0]
        events = await watch_lines(api, path, 2, headers=TABLE)
        assert [e["object"]["kind"] for e in events] == ["Table", "Table"]
        assert cells([row for e in events for row in e["object"]["rows"]]) == expected
        # the storage version needs no webhook; v2's list page is one review, its GET and the watch's batch one each
        sent = [len(r["request"]["objects"]) for r in webhook.reviews]
        assert sent == ([2, 1] if path == V2 and strategy == "Webhook" else []) + sent[2:] and len(sent) <= 4, sent

    # a change is shown in v2's columns to the watchers of v2
    async def modified() -> list[dict[str, Any]]:
        return await watch_lines(api, V2, 1, headers=TABLE, resourceVersion=listed.body["metadata"]["resourceVersion"])

    watcher = asyncio.create_task(modified())
    await asyncio.sleep(0.3)
    assert (await api.patch(f"{V1}/a", {"spec": {"port": 9000}})).status == 200
    event, = await watcher
    assert event["type"] == "MODIFIED"
    assert cells(event["object"]["rows"]) == {"a": ["https://a.example:9000" if strategy == "Webhook" else None, 1]}


# -- kubectl ---------------------------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
async def test_kubectl_reads_and_writes_each_version(server: APIServer, api: Client, webhook: ConversionWebhook,
                                                     ca: Issued, tmp_path: Path) -> None:
    env = {**os.environ, "KUBECONFIG": str(server.kubeconfig_path), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    await install(api, crd(by_url(webhook, ca)))
    v2, v1 = f"websites.v2.{GROUP}", f"websites.v1.{GROUP}"
    manifest = json.dumps(site("web", "v2", url="https://web.example:8080"))
    code, out, err = await kubectl(env, "apply", "-f", "-", stdin=manifest)
    assert code == 0, err
    code, out, err = await kubectl(env, "get", v1, "web", "-o", "json")
    assert code == 0 and json.loads(out)["spec"] == {"host": "web.example", "port": 8080}, err
    code, out, err = await kubectl(env, "patch", v2, "web", "--type=merge", "-p", '{"spec": {"url": "https://web.example:9090"}}')
    assert code == 0, err
    code, out, err = await kubectl(env, "get", v2, "-o", "json")
    assert code == 0, err
    assert [(i["apiVersion"], i["spec"]["url"]) for i in json.loads(out)["items"]] == [(f"{GROUP}/v2", "https://web.example:9090")]
    code, out, err = await kubectl(env, "apply", "--server-side", "--force-conflicts", "-f", "-", stdin=json.dumps(site("web", "v2", url="https://web.example:1")))
    assert code == 0, err
    code, out, err = await kubectl(env, "get", v2, "web", "-o", "jsonpath={.spec.url}")
    assert (code, out) == (0, "https://web.example:1"), err
    code, out, err = await kubectl(env, "get", v2)  # a Table in v2's columns, from the object converted to v2
    assert code == 0, err
    assert [line.split() for line in out.split("\n")[:2]] == [["NAME", "URL", "REPLICAS"], ["web", "https://web.example:1", "1"]], out
    code, out, err = await kubectl(env, "get", v1)
    assert code == 0 and out.split("\n")[1].split() == ["web", "web.example", "1"], out

    await webhook.stop()
    for args in ((v2,), (v2, "web"), (v2, "-o", "wide")):  # Tables need the webhook too, as in Kubernetes
        code, out, err = await kubectl(env, "get", *args)
        assert code == 1, out
        assert f"Error from server (InternalError): Internal error occurred: conversion webhook for {GROUP}/v1, Kind=WebSite failed" in err, err
    code, out, err = await kubectl(env, "get", v1)
    assert code == 0 and "web.example" in out, err
    code, out, err = await kubectl(env, "get", v2, "web", "-o", "yaml")
    assert code == 1
    assert f"Error from server (InternalError): Internal error occurred: conversion webhook for {GROUP}/v1, Kind=WebSite failed" in err, err
    code, out, err = await kubectl(env, "get", v1, "web", "-o", "jsonpath={.spec.port}")
    assert (code, out) == (0, "1"), err


async def test_review_version_is_the_first_the_webhook_accepts(api: Client, webhook: ConversionWebhook, ca: Issued) -> None:
    conversion = by_url(webhook, ca)
    conversion["webhook"]["conversionReviewVersions"] = ["v2", "v1beta1", "v1"]
    await install(api, crd(conversion))
    assert (await api.post(V1, site("a", host="a.example", port=1))).status == 201
    # a v1beta1 answer is not checked for its kind or uid, as Kubernetes never checked them
    webhook.answer = lambda r: {"response": {"result": {"status": "Success"},
                                             "convertedObjects": [to_v2(o) for o in r["request"]["objects"]]}}
    got = await api.get(f"{V2}/a")
    assert got.status == 200 and got.body["spec"]["url"] == "https://a.example:1", got
    assert webhook.reviews[-1]["apiVersion"] == "apiextensions.k8s.io/v1beta1"
