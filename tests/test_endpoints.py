"""core/v1 Endpoints and discovery.k8s.io/v1 EndpointSlices, kept for Services by their
controllers from the Pods the Services select."""

from __future__ import annotations

import pytest

from tests.waiting import eventually, wait_until

NS = "/api/v1/namespaces/default"
SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def pod(name: str, labels: dict[str, str], *, port_name: str = "http", **spec: object) -> dict:
    """A Pod on a node no kubelet runs (its status is the test's to write)."""
    return {"metadata": {"name": name, "labels": labels},
            "spec": {"schedulerName": "nobody", "nodeName": "elsewhere",
                     "containers": [{"name": "c", "image": "nginx", "ports": [{"name": port_name, "containerPort": 8080}]}], **spec}}


async def set_status(api, name: str, ip: str, ready: bool) -> None:
    status = {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
              "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    assert (await api.patch(f"{NS}/pods/{name}/status", {"status": status})).status == 200


async def endpoints(api, name: str) -> dict | None:
    reply = await api.get(f"{NS}/endpoints/{name}")
    return reply.body if reply.status == 200 else None


async def slices(api, service: str) -> list[dict]:
    return (await api.get(SLICES, params={"labelSelector": f"kubernetes.io/service-name={service}"})).body["items"]


@pytest.mark.controllers
async def test_endpoints_and_slices_follow_the_pods(api):
    for name, ip, ready in (("a", "10.244.1.5", True), ("b", "10.244.1.6", False)):
        assert (await api.post(f"{NS}/pods", pod(name, {"app": "web"}))).status == 201
        await set_status(api, name, ip, ready)
    await api.post(f"{NS}/pods", pod("other", {"app": "db"}))
    await set_status(api, "other", "10.244.1.7", True)
    service = {"metadata": {"name": "web", "labels": {"tier": "front"}},
               "spec": {"selector": {"app": "web"}, "ports": [{"name": "web", "port": 80, "targetPort": "http"}]}}
    created = (await api.post(f"{NS}/services", service)).body

    def ref(name: str) -> dict:
        return {"kind": "Pod", "namespace": "default", "name": name, "uid": uids[name]}
    uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in (await api.get(f"{NS}/pods")).body["items"]}
    wanted = [{"addresses": [{"ip": "10.244.1.5", "nodeName": "elsewhere", "targetRef": ref("a")}],
               "notReadyAddresses": [{"ip": "10.244.1.6", "nodeName": "elsewhere", "targetRef": ref("b")}],
               "ports": [{"name": "web", "port": 8080, "protocol": "TCP"}]}]

    async def listed() -> dict | None:  # the informers may see the service before the pods' last status
        ep = await endpoints(api, "web")
        return ep if ep and ep.get("subsets") == wanted else None
    ep = await eventually(listed, what="the Endpoints")
    assert ep["metadata"]["labels"] == {"tier": "front"}

    async def sliced() -> list[dict] | None:
        found = await slices(api, "web")
        return found if len(found) == 1 and len(found[0]["endpoints"] or ()) == 2 and \
            any(e["conditions"]["ready"] for e in found[0]["endpoints"]) else None
    [slice_] = await eventually(sliced, what="the EndpointSlice")
    assert slice_["metadata"]["name"].startswith("web-") and slice_["addressType"] == "IPv4"
    assert slice_["metadata"]["labels"] == {"tier": "front", "kubernetes.io/service-name": "web",
                                            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}
    assert slice_["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Service", "name": "web", "uid": created["metadata"]["uid"],
                                                     "controller": True, "blockOwnerDeletion": True}]
    assert slice_["ports"] == [{"name": "web", "port": 8080, "protocol": "TCP"}]
    by_ip = {e["addresses"][0]: e for e in slice_["endpoints"]}
    assert by_ip["10.244.1.5"] == {"addresses": ["10.244.1.5"], "conditions": {"ready": True, "serving": True, "terminating": False},
                                   "targetRef": ref("a"), "nodeName": "elsewhere"}
    assert by_ip["10.244.1.6"]["conditions"] == {"ready": False, "serving": False, "terminating": False}

    await set_status(api, "b", "10.244.1.6", True)  # b turns ready; a is relabelled away
    await api.patch(f"{NS}/pods/a", {"metadata": {"labels": {"app": "gone"}}})

    async def settled() -> bool:
        ep = await endpoints(api, "web")
        found = await slices(api, "web")
        return bool(ep and [a["ip"] for a in ep["subsets"][0].get("addresses", [])] == ["10.244.1.6"]
                    and "notReadyAddresses" not in ep["subsets"][0]
                    and len(found) == 1 and [e["addresses"] for e in found[0]["endpoints"]] == [["10.244.1.6"]]
                    and found[0]["endpoints"][0]["conditions"]["ready"])
    await eventually(settled, what="the endpoints to follow the pods")
    kept = (await slices(api, "web"))[0]
    assert kept["metadata"]["name"] == slice_["metadata"]["name"]  # updated in place
    assert kept["metadata"]["generation"] > slice_["metadata"]["generation"]

    await api.delete(f"{NS}/pods/b")  # terminating (no kubelet ends it): out of the Endpoints, a terminating endpoint

    async def terminating() -> bool:
        found = await slices(api, "web")
        return bool((await endpoints(api, "web")).get("subsets") is None and len(found) == 1 and found[0]["endpoints"]
                    and found[0]["endpoints"][0]["conditions"] == {"ready": False, "serving": True, "terminating": True})
    await eventually(terminating, what="b to be a terminating endpoint")
    await api.delete(f"{NS}/pods/b", params={"gracePeriodSeconds": "0"})  # gone: no endpoints, a placeholder slice

    async def emptied() -> bool:
        found = await slices(api, "web")
        return bool((await endpoints(api, "web")).get("subsets") is None and len(found) == 1 and found[0]["endpoints"] is None
                    and "ports" not in found[0])
    await eventually(emptied, what="the placeholder slice")

    table = (await api.get(f"{NS}/endpoints", headers=TABLE)).body
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Endpoints", "Age"]
    slice_table = (await api.get(SLICES, headers=TABLE)).body
    assert [c["name"] for c in slice_table["columnDefinitions"]] == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    assert slice_table["rows"][0]["cells"][1:4] == ["IPv4", "<unset>", "<unset>"]

    await api.delete(f"{NS}/services/web")  # the Endpoints go with the Service, the slices with their owner

    async def gone() -> bool:
        return await endpoints(api, "web") is None and not await slices(api, "web")
    await eventually(gone, what="the Endpoints and slices to go with the Service")


@pytest.mark.controllers
async def test_headless_and_not_ready_publishing_services(api):
    spec = {"hostname": "web-0", "subdomain": "web"}
    await api.post(f"{NS}/pods", pod("web-0", {"app": "sts"}, **spec))
    await set_status(api, "web-0", "10.244.2.9", False)
    headless = {"metadata": {"name": "web"}, "spec": {"clusterIP": "None", "selector": {"app": "sts"}, "publishNotReadyAddresses": True}}
    assert (await api.post(f"{NS}/services", headless)).status == 201
    ep = await eventually(lambda: endpoints(api, "web"), what="the Endpoints")
    assert ep["metadata"]["labels"] == {"service.kubernetes.io/headless": ""}
    [subset] = ep["subsets"]
    assert "ports" not in subset and subset["addresses"][0]["hostname"] == "web-0"  # ready: not-ready addresses are published
    [slice_] = await eventually(lambda: slices(api, "web"), what="the slice")
    assert slice_["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
    assert slice_["endpoints"][0]["hostname"] == "web-0" and slice_["endpoints"][0]["conditions"]["ready"] is True
    external = {"metadata": {"name": "ext"}, "spec": {"type": "ExternalName", "externalName": "example.com", "selector": {"app": "sts"}}}
    await api.post(f"{NS}/services", external)
    manual = {"metadata": {"name": "manual"}, "spec": {"ports": [{"port": 80}]}}  # no selector: the user's Endpoints stay
    await api.post(f"{NS}/services", manual)
    mine = {"metadata": {"name": "manual"}, "subsets": [{"addresses": [{"ip": "192.0.2.1"}], "ports": [{"port": 80}]}]}
    assert (await api.post(f"{NS}/endpoints", mine)).body["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    assert await endpoints(api, "ext") is None and not await slices(api, "ext")
    assert (await endpoints(api, "manual"))["subsets"][0]["addresses"] == [{"ip": "192.0.2.1"}]


async def test_endpoints_validation(api):
    bad = {"metadata": {"name": "x"}, "subsets": [
        {"addresses": [{"ip": "127.0.0.1"}, {"ip": "nope", "hostname": "A_B"}], "ports": [{"port": 0, "protocol": "TCPX"}, {"port": 80}]},
        {"ports": [{"name": "a", "port": 1}]},
    ]}
    reply = await api.post(f"{NS}/endpoints", bad)
    assert reply.status == 422 and reply.body["reason"] == "Invalid"
    causes = {(c["field"], c["message"]) for c in reply.body["details"]["causes"]}
    assert causes == {
        ("subsets[0].addresses[0].ip", "Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"),
        ("subsets[0].addresses[1].ip", "Invalid value: \"nope\": must be a valid IP address"),
        ("subsets[0].addresses[1].hostname", "Invalid value: \"A_B\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
        ("subsets[0].ports[0].name", "Required value"),
        ("subsets[0].ports[0].port", "Invalid value: 0: must be between 1 and 65535, inclusive"),
        ("subsets[0].ports[0].protocol", "Unsupported value: \"TCPX\": supported values: \"SCTP\", \"TCP\", \"UDP\""),
        ("subsets[0].ports[1].name", "Required value"),
        ("subsets[1]", "Required value: must specify `addresses` or `notReadyAddresses`"),
    }
    assert (await api.get(f"{NS}/endpoints/x")).status == 404


async def test_endpoint_slice_validation_and_generation(api):
    body = {"metadata": {"name": "s"}, "addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"]}], "ports": [{"port": 80}]}
    created = (await api.post(SLICES, body)).body
    assert created["metadata"]["generation"] == 1 and created["ports"] == [{"name": "", "port": 80, "protocol": "TCP"}]
    assert created["endpoints"] == [{"addresses": ["10.0.0.1"], "conditions": {}}]
    relabelled = (await api.patch(f"{SLICES}/s", {"metadata": {"labels": {"a": "b"}}})).body
    annotated = (await api.patch(f"{SLICES}/s", {"metadata": {"annotations": {"a": "b"}}})).body
    assert relabelled["metadata"]["generation"] == 2 and annotated["metadata"]["generation"] == 2
    moved = await api.patch(f"{SLICES}/s", {"addressType": "IPv6"})
    assert moved.status == 422 and "addressType: Invalid value: \"IPv6\": field is immutable" in moved.body["message"]
    bad = {"metadata": {"name": "t"}, "addressType": "IPv4",
           "endpoints": [{"addresses": []}, {"addresses": ["::1"], "hostname": "-x"}],
           "ports": [{"name": "a"}, {"name": "a", "protocol": "ICMP"}]}
    reply = await api.post(SLICES, bad)
    causes = {(c["field"], c["message"].split(":")[0]) for c in reply.body["details"]["causes"]}
    assert reply.status == 422 and causes == {
        ("endpoints[0].addresses", "Required value"), ("endpoints[1].addresses[0]", "Invalid value"),
        ("endpoints[1].hostname", "Invalid value"), ("ports[1].name", "Duplicate value"), ("ports[1].protocol", "Unsupported value"),
    }
    missing = await api.post(SLICES, {"metadata": {"name": "u"}})
    assert missing.status == 422 and missing.body["details"]["causes"][0]["field"] == "addressType"
    many = {"metadata": {"name": "v"}, "addressType": "FQDN", "endpoints": [{"addresses": ["a.example.com"]}] * 1001}
    assert "must have at most 1000 items" in (await api.post(SLICES, many)).body["message"]


def test_kubectl_sees_a_deployments_endpoints(kubectl):
    kubectl.run("create", "deployment", "ep-web", "--image=nginx", "--replicas=2", "--port=80")
    kubectl.run("expose", "deployment", "ep-web", "--port=8080", "--target-port=80")

    def two_ready() -> list[str]:
        ips = kubectl.run("get", "endpoints", "ep-web", "-o", "jsonpath={.subsets[*].addresses[*].ip}").stdout.split()
        return ips if len(ips) == 2 else []
    ips = wait_until(two_ready, what="two ready addresses")
    listed = kubectl.run("get", "endpoints", "ep-web").stdout.splitlines()
    assert listed[0].split() == ["NAME", "ENDPOINTS", "AGE"]
    assert listed[1].split()[1] == ",".join(f"{ip}:80" for ip in sorted(ips))  # ordered as text, as kube orders them
    sliced = kubectl.run("get", "endpointslices", "-l", "kubernetes.io/service-name=ep-web").stdout.splitlines()
    assert sliced[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"] and sliced[1].split()[1:3] == ["IPv4", "80"]
    described = kubectl.run("describe", "service", "ep-web").stdout
    assert any(line.startswith("Endpoints:") and all(f"{ip}:80" in line for ip in ips) for line in described.splitlines()), described
    kubectl.run("delete", "service", "ep-web")
    wait_until(lambda: "NotFound" in kubectl.run("get", "endpoints", "ep-web", check=False).stderr, what="the Endpoints to go")
