"""networking.k8s.io: Ingress, IngressClass and NetworkPolicy through the API and kubectl."""

from __future__ import annotations

NET = "/apis/networking.k8s.io/v1"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def ingress(name: str, **spec: object) -> dict:
    rules = [{"host": "web.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
                                                             "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]
    return {"metadata": {"name": name}, "spec": {"rules": rules, **spec}}


async def test_ingresses_classes_and_their_columns(api):
    plain = (await api.post(f"{NET}/namespaces/default/ingresses", ingress("before"))).body
    assert "ingressClassName" not in plain["spec"] and plain["metadata"]["generation"] == 1 and plain["status"] == {"loadBalancer": {}}
    default = {"metadata": {"name": "nginx", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
               "spec": {"controller": "k8s.io/ingress-nginx", "parameters": {"apiGroup": "k8s.example.com", "kind": "Params", "name": "p"}}}
    assert (await api.post(f"{NET}/ingressclasses", default)).status == 201
    made = (await api.post(f"{NET}/namespaces/default/ingresses", ingress("after", tls=[{"hosts": ["web.example.com"], "secretName": "tls"}]))).body
    assert made["spec"]["ingressClassName"] == "nginx"  # DefaultIngressClass
    status = await api.patch(f"{NET}/namespaces/default/ingresses/after/status", {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}})
    assert status.status == 200 and status.body["metadata"]["generation"] == 1
    table = (await api.get(f"{NET}/namespaces/default/ingresses", headers=TABLE)).body
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    rows = {r["cells"][0]: r["cells"][1:5] for r in table["rows"]}
    assert rows == {"before": ["<none>", "web.example.com", "", "80"], "after": ["nginx", "web.example.com", "192.0.2.10", "80, 443"]}
    classes = (await api.get(f"{NET}/ingressclasses", headers=TABLE)).body
    assert classes["rows"][0]["cells"][1:3] == ["k8s.io/ingress-nginx", "Params.k8s.example.com/p"]
    moved = await api.patch(f"{NET}/ingressclasses/nginx", {"spec": {"controller": "other"}})
    assert moved.status == 422 and "field is immutable" in moved.body["message"]


async def test_ingress_and_policy_validation(api):
    bad = {"metadata": {"name": "bad"}, "spec": {"rules": [
        {"host": "10.0.0.1", "http": {"paths": [{"path": "x", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {}}}},
                                                {"path": "/", "backend": {}}]}}]}}
    reply = await api.post(f"{NET}/namespaces/default/ingresses", bad)
    assert reply.status == 422
    assert {c["field"]: c["message"] for c in reply.body["details"]["causes"]} == {
        "spec.rules[0].host": 'Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
        "spec.rules[0].http.paths[0].path": 'Invalid value: "x": must be an absolute path',
        "spec.rules[0].http.paths[0].backend.service.port": "Required value: port name or number is required",
        "spec.rules[0].http.paths[1].pathType": "Required value: pathType must be specified",
        "spec.rules[0].http.paths[1].backend": 'Invalid value: "": resource or service backend is required',
    }
    empty = await api.post(f"{NET}/namespaces/default/ingresses", {"metadata": {"name": "e"}, "spec": {}})
    assert empty.status == 422 and "either `defaultBackend` or `rules` must be specified" in empty.body["message"]
    policy = {"metadata": {"name": "deny"}, "spec": {"podSelector": {"matchLabels": {"app": "db"}},
                                                     "ingress": [{"from": [{"podSelector": {}}], "ports": [{"port": 5432}]}]}}
    made = (await api.post(f"{NET}/namespaces/default/networkpolicies", policy)).body
    assert made["spec"]["policyTypes"] == ["Ingress"] and made["spec"]["ingress"][0]["ports"] == [{"port": 5432, "protocol": "TCP"}]
    table = (await api.get(f"{NET}/namespaces/default/networkpolicies", headers=TABLE)).body
    assert table["rows"][0]["cells"][1] == "app=db"
    wrong = {"metadata": {"name": "wrong"}, "spec": {"podSelector": {}, "egress": [{"to": [{}, {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}}],
                                                                                   "ports": [{"port": "http", "endPort": 90}]}]}}
    reply = await api.post(f"{NET}/namespaces/default/networkpolicies", wrong)
    assert {c["field"] for c in reply.body["details"]["causes"]} == {
        "spec.egress[0].to[0]", "spec.egress[0].to[1].ipBlock.except[0]", "spec.egress[0].ports[0].endPort"}


def test_kubectl_creates_an_ingress(kubectl):
    kubectl.run("create", "ingress", "kubectl-ing", "--rule=shop.example.com/cart*=cart:8080,tls=shop-tls")  # a protobuf body
    got = kubectl.json("get", "ingress", "kubectl-ing")
    assert got["spec"]["rules"] == [{"host": "shop.example.com", "http": {"paths": [
        {"path": "/cart", "pathType": "Prefix", "backend": {"service": {"name": "cart", "port": {"number": 8080}}}}]}}]
    assert got["spec"]["tls"] == [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}]
    assert kubectl.run("get", "ingress", "kubectl-ing").stdout.splitlines()[1].split()[:5] == ["kubectl-ing", "<none>", "shop.example.com", "80,", "443"]
    assert "cart:8080" in kubectl.run("describe", "ingress", "kubectl-ing").stdout
