"""Internal types of the apiregistration.k8s.io group: APIService (kube-aggregator's
``pkg/apis/apiregistration``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta


@dataclass(slots=True)
class ServiceReference:
    namespace: str | None = None
    name: str | None = None
    port: int | None = None  # defaulted to 443


@dataclass(slots=True)
class APIServiceSpec:
    service: ServiceReference | None = None  # None (and no url): served by this server itself
    url: str | None = None  # kplane: a backend outside any Service, e.g. http://127.0.0.1:8444
    group: str | None = None
    version: str | None = None
    insecure_skip_tls_verify: bool | None = None
    ca_bundle: str | None = None  # base64 on the wire, kept so
    group_priority_minimum: int | None = None
    version_priority: int | None = None


@dataclass(slots=True)
class APIServiceCondition:
    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class APIServiceStatus:
    conditions: list[APIServiceCondition] | None = None


@dataclass(slots=True)
class APIService:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: APIServiceSpec = field(default_factory=APIServiceSpec)
    status: APIServiceStatus = field(default_factory=APIServiceStatus)
