"""The ``Available`` condition of proxied APIServices (kube-aggregator's AvailableConditionController).

For every APIService with a backend, the server asks the backend for its group/version's
discovery document (``GET /apis/<group>/<version>``, anonymously and not following redirects: see
"Identity headers" in :mod:`kplane.plugins.apiregistration.aggregator`) whenever the APIService or its Service
changes, every :attr:`Settings.probe_interval` seconds while it answers, soon after a proxied
request found it unreachable, and with a backoff of at most :attr:`Settings.probe_max_backoff`
seconds while it does not. A Local APIService (served here) is ``True`` with reason ``Local``. For the others the
condition is

* ``True``, reason ``Passed``, message ``all checks passed``: any 2xx answer;
* ``False``, reason ``FailedDiscoveryCheck``: a non-2xx status (``bad status from URL: 503``; a
  redirect is one too, as for kube-aggregator's check, which never follows one), no
  answer (``failing or missing response from URL: ...``) or none in time (``timed out waiting for URL``);
* ``False``, reason ``ServiceNotFound`` / ``ServicePortError`` / ``MissingEndpoints``, or
  ``Unknown`` with ``ServiceAccessError``: ``spec.service`` names no usable Service;
* ``False``, reason ``BackendsDisabled``: the server was started with
  ``--no-enable-apiservice-backends``, so it asks (and proxies to) no backend at all.

The status is written (``PUT .../status``) only when the condition changes, and
``lastTransitionTime`` moves only when its status does.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp

from kplane.api import (
    ApiError, Handlers, ItemExponentialFailureRateLimiter, RESTClient, UnreachableError, WorkQueue, Workers, clock, describe_error,
)
from kplane.plugins.apiregistration.aggregator import Aggregator
from kplane.plugins.apiregistration.apiservices import AVAILABLE, GROUP, RESOURCE, VERSION, condition, group_version, is_local

log = logging.getLogger(__name__)


class ProbeFailed(Exception):
    """The backend failed its check; the key is retried with backoff."""


class AvailabilityController:
    def __init__(self, aggregator: Aggregator, client: RESTClient, *, workers: int = 2) -> None:
        self.aggregator = aggregator
        self.client = client
        self.settings = aggregator.settings
        self.workers = workers
        self.queue: WorkQueue[str] = WorkQueue(ItemExponentialFailureRateLimiter(0.005, self.settings.probe_max_backoff))
        self.informer = aggregator.api_services
        self.informer.add_handlers(Handlers.for_any(self._enqueue))
        if aggregator.services is not None:
            aggregator.services.add_handlers(Handlers.for_any(self._service_changed))
        aggregator.on_backend_failure = self.queue.add

    def _enqueue(self, obj: dict[str, Any]) -> None:
        self.queue.add(obj["metadata"]["name"])

    def _service_changed(self, service: dict[str, Any]) -> None:
        """A Service appeared, changed or went: re-check the APIServices pointing at it."""
        meta = service.get("metadata") or {}
        for api_service in self.informer.indexer.list():
            ref = (api_service.get("spec") or {}).get("service") or {}
            if (ref.get("namespace"), ref.get("name")) == (meta.get("namespace"), meta.get("name")):
                self._enqueue(api_service)

    async def run(self) -> None:
        async with Workers(self.queue) as workers:
            await self.informer.synced.wait()
            workers.start(self.workers, self.sync, name="apiservice availability", retryable=(ProbeFailed,))
            await workers.wait()

    async def sync(self, name: str) -> None:
        api_service = self.informer.indexer.get(name)
        if api_service is None:
            return
        if is_local(api_service):  # served here (kube-aggregator's local availability controller)
            await self._record(api_service, "True", "Local", "Local APIServices are always available")
            return
        try:
            self.aggregator.backends.backend(api_service)
        except UnreachableError as err:  # nothing to probe until the Service changes
            status = "Unknown" if err.reason == "ServiceAccessError" else "False"
            await self._record(api_service, status, err.reason, err.message)
            return
        failure = await self.probe(api_service)
        if failure is None:
            await self._record(api_service, "True", "Passed", "all checks passed")
            self.queue.add_after(name, self.settings.probe_interval)
            return
        await self._record(api_service, "False", "FailedDiscoveryCheck", failure)
        raise ProbeFailed(failure)

    async def probe(self, api_service: dict[str, Any]) -> str | None:
        """None when the backend answers its discovery URL with a 2xx, else why not."""
        group, version = group_version(api_service)
        path = f"/apis/{group}/{version}"
        url = self.aggregator.backends.backend(api_service).url(path)
        try:
            status, _, _ = await self.aggregator.fetch(api_service, path, "application/json", self.settings.probe_timeout)
            if not 200 <= status < 300:
                return f"bad status from {url}: {status}"
        except TimeoutError:
            return f"timed out waiting for {url}"
        except (aiohttp.ClientError, OSError) as err:
            return f"failing or missing response from {url}: {describe_error(err)}"
        return None

    async def _record(self, api_service: dict[str, Any], status: str, reason: str, message: str) -> None:
        """Write the Available condition, if it differs from the one recorded."""
        current = condition(api_service)
        if current is not None and (current.get("status"), current.get("reason"), current.get("message")) == (status, reason, message):
            return
        name = api_service["metadata"]["name"]
        wanted = {
            "type": AVAILABLE,
            "status": status,
            "lastTransitionTime": current.get("lastTransitionTime") if current and current.get("status") == status else clock.now(),
            "reason": reason,
            "message": message,
        }
        conditions = [c for c in (api_service.get("status") or {}).get("conditions") or [] if c.get("type") != AVAILABLE]
        updated = {**api_service, "status": {**(api_service.get("status") or {}), "conditions": [*conditions, wanted]}}
        if current is None or current.get("status") != status:
            log.info("APIService %s: Available %s -> %s (%s: %s)", name, current.get("status") if current else "Unknown",
                     status, reason, message)
        try:
            await self.client.resource(GROUP, VERSION, RESOURCE).update_status(updated)
        except ApiError as err:
            if err.code == 404:
                return  # deleted meanwhile
            raise
