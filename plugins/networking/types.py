"""Internal types of the networking.k8s.io group: Ingress, IngressClass and NetworkPolicy.

Their deep parts (rules, backends, peers) are kept as the wire dicts they arrive as: the
validation reads them as such and nothing else on the server looks inside."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import LabelSelector, ObjectMeta

Raw = dict[str, Any]


@dataclass(slots=True)
class IngressSpec:
    ingress_class_name: str | None = None
    default_backend: Raw | None = None
    tls: list[Raw] | None = None
    rules: list[Raw] | None = None


@dataclass(slots=True)
class IngressLoadBalancerStatus:
    ingress: list[Raw] | None = None


@dataclass(slots=True)
class IngressStatus:
    load_balancer: IngressLoadBalancerStatus = field(default_factory=IngressLoadBalancerStatus)


@dataclass(slots=True)
class Ingress:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: IngressSpec = field(default_factory=IngressSpec)
    status: IngressStatus = field(default_factory=IngressStatus)


@dataclass(slots=True)
class IngressClassSpec:
    controller: str | None = None
    parameters: Raw | None = None


@dataclass(slots=True)
class IngressClass:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: IngressClassSpec = field(default_factory=IngressClassSpec)


@dataclass(slots=True)
class NetworkPolicySpec:
    pod_selector: LabelSelector = field(default_factory=LabelSelector)
    ingress: list[Raw] | None = None
    egress: list[Raw] | None = None
    policy_types: list[str] | None = None


@dataclass(slots=True)
class NetworkPolicy:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: NetworkPolicySpec = field(default_factory=NetworkPolicySpec)
