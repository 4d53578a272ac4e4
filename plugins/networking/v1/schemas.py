"""Wire schemas of networking.k8s.io/v1 and their defaulting (``pkg/apis/networking/v1/defaults.go``)."""

from __future__ import annotations

from typing import Any

from kplane.api import LabelSelectorSchema, ObjectMetaSchema, Schema, fields

_META = "Standard object metadata: name, namespace, labels, annotations, and what the server records about the object."


class IngressSpecSchema(Schema):
    """How an Ingress routes HTTP to Services."""

    ingress_class_name = fields.Str(metadata={"description": (
        "The IngressClass whose controller implements this Ingress; the default class when unset."
    )})
    default_backend = fields.Dict(metadata={"description": "Where requests no rule matches go."})
    tls = fields.List(fields.Dict(), metadata={"list_type": "atomic", "description": (
        "TLS: the hosts and the Secret holding their certificate."
    )})
    rules = fields.List(fields.Dict(), metadata={"list_type": "atomic", "description": (
        "Host rules: for each host, the paths and the backend each goes to."
    )})


class IngressLoadBalancerStatusSchema(Schema):
    """Where an Ingress is reachable."""

    ingress = fields.List(fields.Dict(), metadata={"list_type": "atomic", "description": (
        "The load balancer's ingress points: an ip or a hostname, and their ports."
    )})


class IngressStatusSchema(Schema):
    """The Ingress's observed state."""

    load_balancer = fields.Nested(IngressLoadBalancerStatusSchema, metadata={"description": "The addresses the Ingress is reachable at."})


class IngressSchema(Schema):
    """Ingress is a collection of rules that allow inbound connections to reach the endpoints defined by a backend.
    An Ingress can be configured to give services externally-reachable urls, load balance traffic, terminate SSL,
    offer name based virtual hosting etc.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(IngressSpecSchema, metadata={"description": "The routing wanted."})
    status = fields.Nested(IngressStatusSchema, metadata={"description": "The Ingress's observed state."})


class IngressClassSpecSchema(Schema):
    """Which controller implements the class."""

    controller = fields.Str(metadata={"description": (
        "The controller that implements Ingresses of this class, such as example.com/ingress-controller. Cannot change."
    )})
    parameters = fields.Dict(metadata={"description": "A reference to an object with the controller's settings."})


class IngressClassSchema(Schema):
    """IngressClass represents the class of the Ingress, referenced by the Ingress Spec. The
    `ingressclass.kubernetes.io/is-default-class` annotation can be used to indicate that an IngressClass should be
    considered default.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(IngressClassSpecSchema, metadata={"description": "Which controller implements the class."})


class NetworkPolicySpecSchema(Schema):
    """Which Pods the policy covers, and the traffic it allows them."""

    pod_selector = fields.Nested(LabelSelectorSchema, metadata={"omitempty": False, "description": (
        "The Pods of the namespace the policy applies to; empty selects them all."
    )})
    ingress = fields.List(fields.Dict(), metadata={"list_type": "atomic", "description": "Incoming traffic allowed."})
    egress = fields.List(fields.Dict(), metadata={"list_type": "atomic", "description": "Outgoing traffic allowed."})
    policy_types = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "Ingress and/or Egress: the directions the policy restricts."
    )})


class NetworkPolicySchema(Schema):
    """NetworkPolicy describes what network traffic is allowed for a set of Pods."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(NetworkPolicySpecSchema, metadata={"description": "The traffic the policy allows."})


def _default_peers(rules: list[Any] | None) -> None:
    for rule in rules or ():
        for port in (rule or {}).get("ports") or ():
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"


def default_network_policy(policy: dict[str, Any]) -> None:
    """``SetDefaults_NetworkPolicy``: ports TCP; policyTypes from the rules given (Ingress always)."""
    spec = policy.get("spec")
    if spec is None:
        spec = policy["spec"] = {}
    _default_peers(spec.get("ingress"))
    _default_peers(spec.get("egress"))
    if not spec.get("policy_types"):
        spec["policy_types"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]
