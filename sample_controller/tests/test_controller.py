"""The controller's own tests (the original's ``controller_test.go``), run with the package installed:

    pip install ./sample_controller && pytest sample_controller/tests

The wiring is tested without a server; the sync loop against a real kplane server from kplane's
``kplane`` pytest fixture (with its controllers and simulated nodes, so Deployments roll out and
pods become Ready; the server loads this package's Foo plugin like any installed plugin). The
controller runs in the test's own event loop, built as ``samplecontroller.main`` builds it.
"""

import asyncio
import contextlib
import time

import pytest
from kplane.api import BucketRateLimiter, Informer, RESTClient, SharedInformerFactory

from samplecontroller import API_VERSION, GROUP, KIND, PLURAL, VERSION
from samplecontroller.controller import Controller, new_deployment, rate_limiter
from samplecontroller.main import RESYNC, WORKERS


def foo(name, deployment_name, replicas=None):
    spec = {"deploymentName": deployment_name}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name}, "spec": spec}


@contextlib.asynccontextmanager
async def sample_controller(url):
    """The controller with its informers and WORKERS workers, in this event loop, until the block ends."""
    kube_client, example_client = RESTClient(url), RESTClient(url)
    kube_informer_factory = SharedInformerFactory(kube_client, resync=RESYNC)
    example_informer_factory = SharedInformerFactory(example_client, resync=RESYNC)
    controller = Controller(kube_client, example_client,
                            kube_informer_factory.informer("apps", "v1", "deployments"),
                            example_informer_factory.informer(GROUP, VERSION, PLURAL))
    kube_informer_factory.start()
    example_informer_factory.start()
    stop = asyncio.Event()
    running = asyncio.create_task(controller.run(stop, WORKERS))
    try:
        yield controller
    finally:
        stop.set()
        await running  # a failure of the controller itself fails the test
        await kube_informer_factory.stop()
        await example_informer_factory.stop()
        await kube_client.close()
        await example_client.close()


async def eventually(probe, what, timeout=30.0):
    """The first truthy result of ``probe`` (a blocking call, run in a thread), polled until ``timeout``."""
    deadline = time.monotonic() + timeout
    while not (found := await asyncio.to_thread(probe)):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)
    return found


def events_about(kplane, name, reason):
    return [e for e in kplane.list("v1", "Event")
            if e["involvedObject"].get("kind") == KIND and e["involvedObject"]["name"] == name and e["reason"] == reason]


@pytest.mark.asyncio
async def test_handlers_queue_the_foo_that_controls_a_changed_deployment():
    """Which changes queue which Foo, and the queue's rate limiter; no server."""
    client = RESTClient("http://127.0.0.1:9")  # never contacted
    try:
        deployments = Informer(client.resource("apps", "v1", "deployments"))
        foos = Informer(client.resource(GROUP, VERSION, PLURAL))
        example = foo("example", "example-web", 2)
        example["metadata"].update(namespace="default", uid="u-1", resourceVersion="1")
        foos.indexer.put(example)
        controller = Controller(client, client, deployments, foos)
        queue = controller.workqueue
        assert len(queue) == 1  # known Foos are handed to the new handler as additions

        async def drained():
            keys = []
            while len(queue):
                keys.append(await queue.get())
                queue.done(keys[-1])
            return keys

        assert await drained() == ["default/example"]
        owned = new_deployment(example)
        owned["metadata"]["resourceVersion"] = "5"
        assert owned["metadata"]["ownerReferences"][0]["uid"] == "u-1" and owned["spec"]["replicas"] == 2
        controller.handle_object(owned)
        assert await drained() == ["default/example"]
        controller._deployment_updated(owned, owned)  # a resync: same resourceVersion, ignored
        assert await drained() == []
        controller._deployment_updated(owned, {**owned, "metadata": {**owned["metadata"], "resourceVersion": "6"}})
        assert await drained() == ["default/example"]
        foreign = {**owned, "metadata": {**owned["metadata"], "ownerReferences": [{**owned["metadata"]["ownerReferences"][0], "kind": "Bar"}]}}
        orphan = {**owned, "metadata": {**owned["metadata"], "ownerReferences": [{**owned["metadata"]["ownerReferences"][0], "name": "gone"}]}}
        for ignored in (foreign, orphan, {**owned, "metadata": {"name": "plain", "namespace": "default"}}):
            controller.handle_object(ignored)
        assert await drained() == []
        unsized = foo("unsized", "web")
        unsized["metadata"].update(namespace="default", uid="u-2")
        assert "replicas" not in new_deployment(unsized)["spec"]  # the server's default (1) applies

        limiter = rate_limiter()  # per key 5 ms doubling to 1000 s, under 50 qps with bursts of 300
        assert [limiter.when("one") for _ in range(3)] == [0.005, 0.01, 0.02]
        assert {limiter.when(f"key-{i}") for i in range(297)} == {0.005}  # the rest of the burst: no wait but the key's own
        per_key, bucket = limiter.limiters
        assert (per_key.base, per_key.max, bucket.qps, bucket.burst) == (0.005, 1000.0, 50, 300)
        frozen = BucketRateLimiter(bucket.qps, bucket.burst, clock=lambda: 0.0)  # the bucket with time standing still
        assert {frozen.when(i) for i in range(300)} == {0.0} and [frozen.when("over") for _ in range(2)] == [0.02, 0.04]
    finally:
        await client.close()


@pytest.mark.asyncio
@pytest.mark.kplane(controllers=True)
async def test_a_foo_gets_a_deployment_it_controls_whose_available_replicas_it_reports(kplane):
    async with sample_controller(kplane.url):
        [created] = kplane.apply(foo("example-foo", "example-web", 2))
        synced = await kplane.wait_for_async(API_VERSION, KIND, "example-foo",
                                             until=lambda f: (f.get("status") or {}).get("availableReplicas") == 2)
        deployment = kplane.get("apps/v1", "Deployment", "example-web")
        assert deployment["metadata"]["ownerReferences"] == [{
            "apiVersion": API_VERSION, "kind": KIND, "name": "example-foo", "uid": created["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True,
        }]
        assert deployment["spec"]["replicas"] == 2 and deployment["status"]["availableReplicas"] == 2
        labels = {"app": "nginx", "controller": "example-foo"}
        assert deployment["spec"]["selector"] == {"matchLabels": labels}
        assert any(m["manager"] == "sample-controller" and m.get("subresource") == "status"
                   for m in synced["metadata"]["managedFields"])
        [event] = await eventually(lambda: events_about(kplane, "example-foo", "Synced"), "a Synced event")
        assert event["type"] == "Normal" and event["message"] == "Foo synced successfully"

        # Fewer replicas: the Deployment follows, and the status with it.
        kplane.apply(foo("example-foo", "example-web", 1))
        await kplane.wait_for_async(API_VERSION, KIND, "example-foo",
                                    until=lambda f: (f.get("status") or {}).get("availableReplicas") == 1)
        assert kplane.get("apps/v1", "Deployment", "example-web")["spec"]["replicas"] == 1


@pytest.mark.asyncio
@pytest.mark.kplane(controllers=True)
async def test_a_deployment_the_foo_does_not_control_is_an_err_resource_exists_warning(kplane):
    kplane.apply({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "taken"},
        "spec": {"selector": {"matchLabels": {"app": "taken"}},
                 "template": {"metadata": {"labels": {"app": "taken"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    })
    async with sample_controller(kplane.url):
        kplane.apply(foo("thief", "taken", 3))
        [warning, *_] = await eventually(lambda: events_about(kplane, "thief", "ErrResourceExists"), "an ErrResourceExists event")
        assert warning["type"] == "Warning"
        assert warning["message"] == 'Resource "taken" already exists and is not managed by Foo'
        assert warning["source"] == {"component": "sample-controller"}
    taken = kplane.get("apps/v1", "Deployment", "taken")
    assert not taken["metadata"].get("ownerReferences") and taken["spec"]["replicas"] == 1  # never touched
    assert not kplane.get(API_VERSION, KIND, "thief").get("status")
