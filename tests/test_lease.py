"""coordination.k8s.io/v1 Leases over HTTP: CRUD, validation, optimistic concurrency, table."""

from __future__ import annotations

from typing import Any

from tests.test_tables import TABLE_ACCEPT

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def lease(name: str = "lock", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": spec}


def causes(reply: Any) -> list[tuple[str, str]]:
    return [(c["field"], c["reason"]) for c in reply.body["details"]["causes"]]


async def test_discovery_names_leases(api):
    resources = (await api.get("/apis/coordination.k8s.io/v1")).body["resources"]
    (leases,) = [r for r in resources if r["name"] == "leases"]
    assert leases["kind"] == "Lease" and leases["namespaced"] is True and not leases.get("shortNames")


async def test_create_get_and_renew(api):
    created = await api.post(LEASES, lease(holderIdentity="a", leaseDurationSeconds=15, leaseTransitions=0,
                                           acquireTime="2026-11-29T14:00:00.123456Z",
                                           renewTime="2026-11-29T14:00:00.123456Z"))
    assert created.status == 201, created
    got = await api.get(f"{LEASES}/lock")
    assert got.status == 200 and got.body["kind"] == "Lease" and got.body["apiVersion"] == "coordination.k8s.io/v1"
    assert got.body["spec"] == {"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0,
                                "acquireTime": "2026-11-29T14:00:00.123456Z", "renewTime": "2026-11-29T14:00:00.123456Z"}

    body = got.body
    body["spec"]["renewTime"] = "2026-11-29T14:00:02.654321Z"
    renewed = await api.put(f"{LEASES}/lock", body)
    assert renewed.status == 200, renewed
    assert renewed.body["spec"]["renewTime"] == "2026-11-29T14:00:02.654321Z"
    assert renewed.body["metadata"]["resourceVersion"] != body["metadata"]["resourceVersion"]
    assert (await api.get(f"{LEASES}/lock")).body["spec"]["renewTime"] == "2026-11-29T14:00:02.654321Z"

    deleted = await api.delete(f"{LEASES}/lock")
    assert deleted.status == 200 and (await api.get(f"{LEASES}/lock")).status == 404


async def test_update_needs_the_resource_version_it_read(api):
    first = (await api.post(LEASES, lease(holderIdentity="a"))).body
    again = dict(first, spec={"holderIdentity": "b"})
    assert (await api.put(f"{LEASES}/lock", again)).status == 200
    stale = await api.put(f"{LEASES}/lock", dict(first, spec={"holderIdentity": "c"}))
    assert stale.status == 409 and stale.body["reason"] == "Conflict"
    unconditional = await api.put(f"{LEASES}/lock", lease(holderIdentity="c"))
    assert unconditional.status == 422 and causes(unconditional) == [("metadata.resourceVersion", "FieldValueInvalid")]
    assert (await api.get(f"{LEASES}/lock")).body["spec"]["holderIdentity"] == "b"


async def test_put_creates_a_missing_lease(api):
    reply = await api.put(f"{LEASES}/fresh", lease("fresh", holderIdentity="a"))
    assert reply.status == 201, reply
    assert (await api.get(f"{LEASES}/fresh")).body["spec"]["holderIdentity"] == "a"


async def test_validation(api):
    negative = await api.post(LEASES, lease(leaseDurationSeconds=-1, leaseTransitions=-2))
    assert negative.status == 422
    assert causes(negative) == [("spec.leaseDurationSeconds", "FieldValueInvalid"), ("spec.leaseTransitions", "FieldValueInvalid")]
    assert negative.body["message"] == ('Lease.coordination.k8s.io "lock" is invalid: [spec.leaseDurationSeconds: Invalid value: -1: '
                                        "must be greater than 0, spec.leaseTransitions: Invalid value: -2: must be greater than or equal to 0]")
    zero = await api.post(LEASES, lease(leaseDurationSeconds=0))
    assert zero.status == 422 and causes(zero) == [("spec.leaseDurationSeconds", "FieldValueInvalid")]

    orphan_preference = await api.post(LEASES, lease(holderIdentity="a", preferredHolder="b"))
    assert orphan_preference.status == 422 and causes(orphan_preference) == [("spec.preferredHolder", "FieldValueForbidden")]
    unknown_strategy = await api.post(LEASES, lease(strategy="Newest"))
    assert unknown_strategy.status == 422 and causes(unknown_strategy) == [("spec.strategy", "FieldValueNotSupported")]
    bad_custom = await api.post(LEASES, lease(strategy="example.com/bad name"))
    assert bad_custom.status == 422 and causes(bad_custom) == [("spec.strategy", "FieldValueInvalid")]
    coordinated = await api.post(LEASES, lease(strategy="OldestEmulationVersion", preferredHolder="b"))
    assert coordinated.status == 201, coordinated
    custom = await api.post(LEASES, lease("custom", strategy="example.com/round-robin"))
    assert custom.status == 201, custom

    not_micro = await api.post(LEASES, lease("t", renewTime="yesterday"))
    assert not_micro.status == 400 and causes(not_micro) == [("spec.renewTime", "FieldValueTypeInvalid")]
    existing = (await api.get(f"{LEASES}/lock")).body
    existing["spec"]["leaseDurationSeconds"] = -5
    update = await api.put(f"{LEASES}/lock", existing)
    assert update.status == 422 and causes(update) == [("spec.leaseDurationSeconds", "FieldValueInvalid")]


async def test_table_columns(api):
    await api.post(LEASES, lease("held", holderIdentity="node-a"))
    await api.post(LEASES, lease("free"))
    table = (await api.get(LEASES, headers={"Accept": TABLE_ACCEPT})).body
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [("Name", 0), ("Holder", 0), ("Age", 0)]
    rows = {row["cells"][0]: row["cells"] for row in table["rows"]}
    assert rows["held"][1] == "node-a" and rows["free"][1] == ""
    assert rows["held"][2].endswith("s")
