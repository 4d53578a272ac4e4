"""The ResourceQuota admission plugin (``k8s.io/apiserver/pkg/admission/plugin/resourcequota``).

On every create (and update, by the difference it makes) of a namespaced object, each quota of
its namespace that counts it (:func:`.usage.quota_matches`) is checked against what the object
adds, for the resources in the quota's ``status.hard``, with kube's messages (403)::

    exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2
    failed quota: compute: must specify limits.cpu for: main
    status unknown for quota: compute, resources: pods

and, unless the request is a dry run, charged: ``status.used`` is raised at once through the
quota's ``/status`` store, re-checked inside that guarded write against the stored quota, so two
racing creates never both take the last unit. The resource-quota controller later recounts
``used`` from what exists (it also gives back what deletions free). A quota whose status the
controller has not written yet holds back nothing, as in kube. Quotas are read from the
loopback informer (:mod:`kplane.plugins.core.lookup`)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kplane.api import AdmissionRequest, Informer, Operation, Registry, RequestContext, deny, quantity
from kplane.plugins.core import lookup
from kplane.plugins.core.limits import ResourceQuota
from kplane.plugins.core.quota import usage as quota_usage

Obj = dict[str, Any]


def _pretty(values: dict[str, Any]) -> str:
    """``prettyPrint``: ``name=value`` pairs sorted by name, joined by commas."""
    return ",".join(f"{name}={values[name]}" for name in sorted(values))


def _hard_of(status: dict[str, Any] | None) -> dict[str, quantity.Quantity]:
    found: dict[str, quantity.Quantity] = {}
    for name, value in ((status or {}).get("hard") or {}).items():
        try:
            found[name] = quantity.parse(value)
        except ValueError:
            continue
    return found


def _used_of(status: dict[str, Any] | None, name: str) -> Fraction:
    value = ((status or {}).get("used") or {}).get(name, "0")
    try:
        return quantity.parse(value).value
    except ValueError:
        return Fraction(0)


class ResourceQuotaAdmission:
    """``quotas`` is the loopback informer of resourcequotas (None in ``kplane plugins``)."""

    def __init__(self, registry: Registry, quotas: Informer | None) -> None:
        self.registry = registry
        self.quotas = quotas

    async def __call__(self, request: AdmissionRequest) -> None:
        rt = request.resource
        if request.operation not in (Operation.CREATE, Operation.UPDATE) or not rt.namespaced or request.subresource:
            return
        quotas = await lookup.objects(self.registry, self.quotas, "", "resourcequotas", request.namespace)
        if not quotas:
            return
        obj = rt.encode(request.obj, rt.storage_version)
        delta = quota_usage.usage(rt.plural, rt.group, obj)
        if request.operation == Operation.UPDATE:
            before = quota_usage.usage(rt.plural, rt.group, rt.encode(request.old, rt.storage_version))
            delta = {name: value - before.get(name, Fraction(0)) for name, value in delta.items()}
        charges: list[tuple[str, dict[str, Fraction]]] = []
        for q in sorted(quotas, key=lambda q: q["metadata"]["name"]):
            if not quota_usage.quota_matches(q, rt.plural, rt.group, obj):
                continue
            name, status = q["metadata"]["name"], q.get("status") or {}
            hard = _hard_of(status)
            if (rt.group, rt.plural) == ("", "pods") and request.operation == Operation.CREATE:
                missing = quota_usage.missing_requests(obj, hard)
                if missing:
                    raise deny(request, f"failed quota: {name}: {missing}")
            tracked = [n for n in hard if n in delta]
            unknown = sorted(n for n in tracked if n not in (status.get("used") or {}))
            if unknown:
                raise deny(request, f"status unknown for quota: {name}, resources: {','.join(unknown)}")
            requested = {n: delta[n] for n in tracked if delta[n] > 0}
            if requested:
                self._check(request, name, status, requested)
                charges.append((name, requested))
        if request.dry_run:
            return
        for name, requested in charges:
            await self._charge(request, name, requested)

    def _check(self, request: AdmissionRequest, name: str, status: dict[str, Any], requested: dict[str, Fraction]) -> None:
        hard = _hard_of(status)
        exceeded = sorted(n for n, value in requested.items() if _used_of(status, n) + value > hard[n].value)
        if not exceeded:
            return
        like = {n: str(hard[n]) for n in exceeded}
        asked = quota_usage.format_usage({n: requested[n] for n in exceeded}, like)
        used = quota_usage.format_usage({n: _used_of(status, n) for n in exceeded}, like)
        raise deny(request, f"exceeded quota: {name}, requested: {_pretty(asked)}, used: {_pretty(used)}, "
                            f"limited: {_pretty(like)}")

    async def _charge(self, request: AdmissionRequest, name: str, requested: dict[str, Fraction]) -> None:
        """Raise the stored quota's ``used``, checking it again there (a racing charge is seen)."""
        store = self.registry.store("", "resourcequotas", "status")
        if store is None:
            return

        async def charge(stored: ResourceQuota | None) -> ResourceQuota:
            if stored is None:
                raise deny(request, f"status unknown for quota: {name}, resources: {','.join(sorted(requested))}")
            status = {"hard": stored.status.hard or {}, "used": stored.status.used or {}}
            self._check(request, name, status, {n: v for n, v in requested.items() if n in status["hard"]})
            used = dict(stored.status.used or {})
            grown = {n: _used_of(status, n) + v for n, v in requested.items() if n in status["hard"]}
            used.update(quota_usage.format_usage(grown, {n: status["hard"][n] for n in grown}))
            stored.status.used = used
            return stored

        ctx = RequestContext(resource="resourcequotas", subresource="status", namespace=request.namespace, name=name)
        await store.update(ctx, name, charge)
