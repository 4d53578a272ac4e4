"""kube-apiserver's request metrics (``k8s.io/apiserver/pkg/endpoints/metrics``): what the HTTP
layer counts per request, and what it reads when scraped. The labels are decided by
:mod:`kplane.core.server.instrumentation`; this module only keeps the figures."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric

from kplane.core.metrics.families import REQUEST_BUCKETS, Collected, Durations, Labels, Tally, gauge

COMPONENT = "apiserver"
#: verb, dry_run, group, version, resource, subresource, scope, component: a request's labels.
REQUEST_LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
LONG_RUNNING_LABELS = ("verb", "group", "version", "resource", "subresource", "scope", "component")


class RequestMetrics:
    """One server's request figures. ``in_flight``: the max in-flight filter's live counts
    (read-only requests under True, mutating under False)."""

    def __init__(self, registry: CollectorRegistry, in_flight: Mapping[bool, int]) -> None:
        self.in_flight = in_flight
        self.requests = Tally("apiserver_request_total", "Counter of apiserver requests broken out for each verb, "
                              "dry run value, group, version, resource, scope, component, and HTTP response code.",
                              (*REQUEST_LABELS, "code"))
        self.long_running = Tally("apiserver_longrunning_requests", "Gauge of all active long-running apiserver "
                                  "requests broken out by verb, group, version, resource, scope and component.",
                                  LONG_RUNNING_LABELS, gauge=True)
        self.watch_events = Tally("apiserver_watch_events_total", "Number of events sent in watch clients",
                                  ("group", "version", "kind"))
        self.duration = Durations("apiserver_request_duration_seconds", "Response latency distribution in seconds "
                                  "for each verb, dry run value, group, version, resource, subresource, scope and "
                                  "component.", REQUEST_LABELS, REQUEST_BUCKETS)
        registry.register(Collected(self._families))

    def observe(self, labels: Labels, code: int, seconds: float) -> None:
        """One request answered ``code`` after ``seconds``."""
        self.requests.add((*labels, str(code)))
        self.duration.observe(labels, seconds)

    def _families(self) -> Iterator[Metric]:
        yield self.requests.family()
        yield self.duration.family()
        yield self.long_running.family()
        yield self.watch_events.family()
        yield gauge("apiserver_current_inflight_requests", "Number of requests the max in-flight filter counts now, "
                    "per request kind.", ("request_kind",),
                    [(("readOnly",), self.in_flight[True]), (("mutating",), self.in_flight[False])])
