"""core/v1 Service: defaulting, the allocated cluster IP, validation and kubectl's columns."""

from __future__ import annotations

import ipaddress

from tests.conftest import Client

SERVICES = "/api/v1/namespaces/default/services"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def service(name: str, **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}


async def test_defaults_and_an_allocated_cluster_ip(api: Client) -> None:
    created = await api.post(SERVICES, service("web", selector={"app": "web"}, ports=[{"port": 80}]))
    assert created.status == 201, created
    spec = created.body["spec"]
    assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None" and spec["internalTrafficPolicy"] == "Cluster"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert ipaddress.ip_address(spec["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
    assert spec["clusterIPs"] == [spec["clusterIP"]] and spec["ipFamilies"] == ["IPv4"]
    assert created.body["status"] == {"loadBalancer": {}}  # a Go struct value: always written
    assert (await api.get(f"{SERVICES}/web")).body["status"] == {"loadBalancer": {}}

    moved = dict(created.body, spec={**spec, "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"]})
    reply = await api.put(f"{SERVICES}/web", moved)
    assert reply.status == 422 and reply.body["details"]["causes"][0]["field"] == "spec.clusterIPs[0]"
    kept = dict(created.body, spec={k: v for k, v in spec.items() if k not in ("clusterIP", "clusterIPs")})
    kept["metadata"]["labels"] = {"tier": "front"}
    reply = await api.put(f"{SERVICES}/web", kept)
    assert reply.status == 200 and reply.body["spec"]["clusterIP"] == spec["clusterIP"]  # an update keeps it


async def test_validation(api: Client) -> None:
    reply = await api.post(SERVICES, service("Bad", type="ExternalName", clusterIP="1.2.3.4"))
    assert reply.status == 422
    assert {(c["field"], c["reason"]) for c in reply.body["details"]["causes"]} == {
        ("metadata.name", "FieldValueInvalid"), ("spec.clusterIPs", "FieldValueForbidden"),
        ("spec.externalName", "FieldValueRequired")}
    reply = await api.post(SERVICES, service("two", ports=[{"port": 80}, {"port": 70000, "protocol": "ICMP"}]))
    assert {(c["field"], c["reason"]) for c in reply.body["details"]["causes"]} == {
        ("spec.ports[0].name", "FieldValueRequired"), ("spec.ports[1].name", "FieldValueRequired"),
        ("spec.ports[1].port", "FieldValueInvalid"), ("spec.ports[1].protocol", "FieldValueNotSupported"),
        ("spec.ports[1].targetPort", "FieldValueInvalid")}
    reply = await api.post(SERVICES, service("none"))
    assert reply.status == 422 and reply.body["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.ports"}]
    assert (await api.post(SERVICES, service("headless", clusterIP="None"))).status == 201


async def test_table_columns(api: Client) -> None:
    await api.post(SERVICES, service("ext", type="ExternalName", externalName="api.example.com"))
    await api.post(SERVICES, service("np", type="NodePort", selector={"a": "b"}, ports=[{"name": "h", "port": 80, "nodePort": 30080},
                                                                                      {"name": "d", "port": 53, "protocol": "UDP"}]))
    table = (await api.get(SERVICES, headers={"Accept": TABLE})).body
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
    rows = {r["cells"][0]: r["cells"] for r in table["rows"]}
    assert rows["ext"][1:5] == ["ExternalName", "<none>", "api.example.com", "<none>"]
    assert rows["ext"][6] == "<none>"
    np = rows["np"]
    assert np[1] == "NodePort" and np[3] == "<none>" and np[6] == "a=b"
    assert np[4].startswith("80:30080/TCP,53:") and np[4].endswith("/UDP")
