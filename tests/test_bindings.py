"""The ``bindings`` resource: binding a pod by POSTing a Binding to its namespace's collection."""

from __future__ import annotations

import asyncio

import kubernetes

NS = "/api/v1/namespaces/default"


def pod(name: str) -> dict:
    return {"metadata": {"name": name}, "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "nginx"}]}}


async def test_a_binding_posted_to_the_collection_binds_its_pod(api):
    await api.post(f"{NS}/pods", pod("p"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    reply = await api.post(f"{NS}/bindings", binding)
    assert reply.status == 201 and reply.body["target"] == {"kind": "Node", "name": "n1"}
    bound = (await api.get(f"{NS}/pods/p")).body
    assert bound["spec"]["nodeName"] == "n1" and any(c["type"] == "PodScheduled" for c in bound["status"]["conditions"])
    again = await api.post(f"{NS}/bindings", binding)
    assert again.status == 409 and again.body["message"] == 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'
    assert (await api.post(f"{NS}/bindings", {**binding, "metadata": {"name": "missing"}})).status == 404
    unnamed = await api.post(f"{NS}/bindings", {**binding, "metadata": {}})
    assert unnamed.status == 422 and unnamed.body["details"]["causes"][0]["field"] == "metadata.name"
    resources = {r["name"]: r for r in (await api.get("/api/v1")).body["resources"]}
    assert resources["bindings"]["verbs"] == ["create"] and resources["bindings"]["namespaced"] is True
    assert (await api.get(f"{NS}/bindings")).status == 405


async def test_the_python_client_binds_through_bindings(server):
    def bind() -> str:  # the client blocks: it runs in a thread while the server serves
        config = kubernetes.client.Configuration(host=server.url)
        with kubernetes.client.ApiClient(config) as client:
            core = kubernetes.client.CoreV1Api(client)
            core.create_namespaced_pod("default", pod("q"))
            body = kubernetes.client.V1Binding(metadata=kubernetes.client.V1ObjectMeta(name="q"),
                                               target=kubernetes.client.V1ObjectReference(kind="Node", name="n2"))
            core.create_namespaced_binding("default", body)
            return str(core.read_namespaced_pod("q", "default").spec.node_name)
    assert await asyncio.to_thread(bind) == "n2"
