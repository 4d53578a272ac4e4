"""The Foo controller (the original's ``controller.go``): one Deployment per Foo.

Informers keep local copies of Foos and Deployments and call the handlers below on every change;
the handlers only put the key (``namespace/name``) of the Foo concerned on a work queue; workers
take keys off the queue and run :meth:`Controller.sync_handler`, which compares the Foo with its
Deployment, creates or updates the Deployment, and writes what it found into the Foo's status.
A key whose sync fails goes back on the queue with a growing delay. ``docs/controller-client-go.md``
of the original describes the same pieces; here they come from the client side of :mod:`kplane.api`.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from typing import Any

import aiohttp

from kplane.api import (
    NORMAL, WARNING, ApiError, BucketRateLimiter, EventRecorder, Handlers, Informer,
    ItemExponentialFailureRateLimiter, Lister, MaxOfRateLimiter, RESTClient, ShutDown, WorkQueue, controller_ref,
    controller_reference, object_key, uid,
)
from samplecontroller import API_VERSION, GROUP, KIND, PLURAL, VERSION

log = logging.getLogger(__name__)
Obj = dict[str, Any]

CONTROLLER_AGENT_NAME = "sample-controller"
# The reason of the Event recorded when a Foo synced successfully.
SUCCESS_SYNCED = "Synced"
# The reason of the Event recorded when a Foo fails to sync because a Deployment of that name
# exists and is not controlled by the Foo.
ERR_RESOURCE_EXISTS = "ErrResourceExists"
MESSAGE_RESOURCE_EXISTS = "Resource %s already exists and is not managed by Foo"  # the name, quoted as Go's %q
MESSAGE_RESOURCE_SYNCED = "Foo synced successfully"
# Tells this controller's writes apart from others' in managedFields.
FIELD_MANAGER = CONTROLLER_AGENT_NAME


class ResourceExistsError(Exception):
    """The Foo's Deployment exists but belongs to someone else: retried, in case they let it go."""


class CacheSyncError(Exception):
    """Asked to stop before the informers' caches were synced."""


def rate_limiter() -> MaxOfRateLimiter:
    """A failed key waits 5 ms, 10 ms, 20 ms ... up to 1000 s; and all retries together stay under
    50 per second (bursts of 300)."""
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(qps=50, burst=300))


class Controller:
    def __init__(self, kubeclient: RESTClient, sampleclient: RESTClient, deployment_informer: Informer,
                 foo_informer: Informer) -> None:
        """``kubeclient`` writes Deployments and Events, ``sampleclient`` writes Foos (one server
        may well answer both); the informers must come from factories the caller starts."""
        self.kubeclient = kubeclient
        self.sampleclient = sampleclient
        self.deployments_lister: Lister = deployment_informer.lister()
        self.deployments_synced = deployment_informer.synced
        self.foos_lister: Lister = foo_informer.lister()
        self.foos_synced = foo_informer.synced
        # A rate limited queue: a burst of changes to one Foo costs one sync, a Foo is never synced
        # by two workers at once, and failures back off.
        self.workqueue: WorkQueue[str] = WorkQueue(rate_limiter())
        self.recorder = EventRecorder(kubeclient, CONTROLLER_AGENT_NAME)

        log.info("Setting up event handlers")
        # A Foo that appears or changes is synced. A deleted one needs nothing: the garbage
        # collector deletes its Deployment, which names the Foo as its owner.
        foo_informer.add_handlers(Handlers(
            on_add=self.enqueue_foo,
            on_update=lambda old, new: self.enqueue_foo(new),
        ))
        # A change to a Deployment syncs the Foo that controls it, if any: no Deployment logic is
        # needed beyond finding the owner.
        deployment_informer.add_handlers(Handlers(
            on_add=self.handle_object,
            on_update=self._deployment_updated,
            on_delete=self.handle_object,
        ))

    def _deployment_updated(self, old: Obj, new: Obj) -> None:
        if new["metadata"].get("resourceVersion") == old["metadata"].get("resourceVersion"):
            # The periodic resync hands every known Deployment over again, unchanged: two
            # versions of one Deployment always differ in resourceVersion.
            return
        self.handle_object(new)

    async def run(self, stop: asyncio.Event, workers: int) -> None:
        """Wait for the informers' caches, then sync Foos with ``workers`` workers until ``stop`` is set.

        Raises CacheSyncError when ``stop`` is set before the caches are synced.
        """
        log.info("Starting Foo controller")
        self.recorder.start()
        tasks: list[asyncio.Task[None]] = []
        try:
            log.info("Waiting for informer caches to sync")
            if not await wait_for_cache_sync(stop, self.deployments_synced, self.foos_synced):
                raise CacheSyncError("failed to wait for caches to sync")
            log.info("Starting workers count=%d", workers)
            tasks = [asyncio.create_task(self.run_worker(), name=f"sample-controller-worker-{i}") for i in range(workers)]
            log.info("Started workers")
            await stop.wait()
            log.info("Shutting down workers")
        finally:
            self.workqueue.shutdown()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.recorder.stop(timeout=2.0)

    async def run_worker(self) -> None:
        """Process keys until the queue shuts down."""
        while await self.process_next_work_item():
            pass

    async def process_next_work_item(self) -> bool:
        """Sync one key: forget its failures on success, put it back rate limited on error.
        False once the queue is shut down."""
        try:
            key = await self.workqueue.get()
        except ShutDown:
            return False
        try:
            await self.sync_handler(key)
        except Exception as err:
            # Failures from the server, the network or a foreign Deployment are expected and need
            # no traceback; anything else is a bug, shown in full, and retried all the same.
            expected = isinstance(err, (ApiError, aiohttp.ClientError, ResourceExistsError))
            log.error("Error syncing; requeuing for later retry objectReference=%s: %s", key, err, exc_info=not expected)
            self.workqueue.add_rate_limited(key)
        else:
            self.workqueue.forget(key)
            log.info("Successfully synced objectName=%s", key)
        finally:
            self.workqueue.done(key)
        return True

    async def sync_handler(self, key: str) -> None:
        """Bring the Deployment of the Foo ``key`` to what the Foo asks, then report its available
        replicas in the Foo's status. Raises to have the key retried."""
        namespace, name = split_meta_namespace_key(key)
        foo = self.foos_lister.namespaced(namespace).get(name)
        if foo is None:
            # Deleted since it was queued: nothing to do (its Deployment goes with it).
            log.info("Foo referenced by item in work queue no longer exists objectReference=%s", key)
            return

        spec = foo.get("spec") or {}
        deployment_name = spec.get("deploymentName") or ""
        if not deployment_name:
            # Retrying cannot help; the next change to the Foo queues it again.
            log.error("Deployment name missing from object reference objectReference=%s", key)
            return

        deployments = self.kubeclient.resource("apps", "v1", "deployments", namespace=namespace)
        deployment = self.deployments_lister.namespaced(namespace).get(deployment_name)
        if deployment is None:
            deployment = await deployments.create(new_deployment(foo), fieldManager=FIELD_MANAGER)

        if not is_controlled_by(deployment, foo):
            message = MESSAGE_RESOURCE_EXISTS % json.dumps(deployment["metadata"]["name"])
            self.record(foo, WARNING, ERR_RESOURCE_EXISTS, message)
            raise ResourceExistsError(message)

        replicas = spec.get("replicas")
        deployment_replicas = (deployment.get("spec") or {}).get("replicas")
        if replicas is not None and replicas != deployment_replicas:
            log.debug("Update deployment resource currentReplicas=%s desiredReplicas=%s", deployment_replicas, replicas)
            # The Deployment as newly built, without a resourceVersion: an unconditional update.
            deployment = await deployments.update(new_deployment(foo), fieldManager=FIELD_MANAGER)

        await self.update_foo_status(foo, deployment)
        self.record(foo, NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    async def update_foo_status(self, foo: Obj, deployment: Obj) -> None:
        # Never modify objects from the informer's cache: it is shared, and read-only. Change a copy.
        foo_copy = copy.deepcopy(foo)
        foo_copy["status"] = {**(foo_copy.get("status") or {}),
                              "availableReplicas": (deployment.get("status") or {}).get("availableReplicas", 0)}
        # Through the status subresource, which changes the status and nothing else. The copy
        # carries the resourceVersion the cache had: a Foo changed meanwhile fails with 409 Conflict
        # and is synced again.
        foos = self.sampleclient.resource(GROUP, VERSION, PLURAL, namespace=foo["metadata"]["namespace"])
        await foos.update(foo_copy, subresource="status", fieldManager=FIELD_MANAGER)

    def record(self, foo: Obj, type: str, reason: str, message: str) -> None:
        """An Event about ``foo``, logged here and written to the server by the recorder."""
        log.info("Event occurred object=%s type=%s reason=%s message=%r", object_key(foo), type, reason, message)
        self.recorder.event(foo, type, reason, message)

    def enqueue_foo(self, foo: Obj) -> None:
        """Queue a Foo's key; never pass it anything but a Foo."""
        self.workqueue.add(object_key(foo))

    def handle_object(self, obj: Obj) -> None:
        """Queue the Foo that controls ``obj``, if its controller is a Foo we know; else ignore it.

        Deletions arrive with the last state the informer knew (kplane's informers need no
        ``DeletedFinalStateUnknown`` tombstones), so a deleted Deployment is handled like any other.
        """
        log.debug("Processing object %s", object_key(obj))
        owner = controller_ref(obj)
        if owner is None or owner.get("kind") != KIND:
            return
        foo = self.foos_lister.namespaced(obj["metadata"].get("namespace", "")).get(owner.get("name", ""))
        if foo is None:
            log.debug("Ignore orphaned object %s foo=%s", object_key(obj), owner.get("name"))
            return
        self.enqueue_foo(foo)


def new_deployment(foo: Obj) -> Obj:
    """The Deployment a Foo asks for: ``spec.replicas`` nginx pods, labelled app=nginx and
    controller=<the Foo's name>, and a controller ownerReference to the Foo, by which
    :meth:`Controller.handle_object` finds the Foo and the garbage collector deletes the Deployment
    after it."""
    labels = {"app": "nginx", "controller": foo["metadata"]["name"]}
    spec: Obj = {
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
        },
    }
    replicas = (foo.get("spec") or {}).get("replicas")
    if replicas is not None:
        spec = {"replicas": replicas, **spec}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": foo["spec"]["deploymentName"],
            "namespace": foo["metadata"]["namespace"],
            "ownerReferences": [controller_reference(foo, API_VERSION, KIND)],
        },
        "spec": spec,
    }


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    """metav1.IsControlledBy: ``obj``'s controller ownerReference names ``owner``'s uid."""
    ref = controller_ref(obj)
    return ref is not None and ref.get("uid") == uid(owner)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """``namespace/name`` (or ``name``, cluster-scoped) into its two parts."""
    namespace, _, name = key.rpartition("/")
    return namespace, name


async def wait_for_cache_sync(stop: asyncio.Event, *synced: asyncio.Event) -> bool:
    """True once every informer has listed; False if ``stop`` is set first."""
    stopping = asyncio.ensure_future(stop.wait())
    syncing = asyncio.ensure_future(asyncio.gather(*(s.wait() for s in synced)))
    try:
        await asyncio.wait([stopping, syncing], return_when=asyncio.FIRST_COMPLETED)
        return syncing.done()
    finally:
        stopping.cancel()
        syncing.cancel()
