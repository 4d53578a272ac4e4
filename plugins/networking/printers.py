"""Table columns of the networking.k8s.io kinds, as ``kubectl get`` shows them (``printIngress`` ...)."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, dig, format_label_selector

SHOWN = 3
ADDRESS_WIDTH = 16


def format_hosts(ingress: dict[str, Any]) -> str:
    """``formatHosts``: the first three hosts of the rules, then how many more; ``*`` for none."""
    rules = dig(ingress, "spec.rules", []) or []
    hosts: list[str] = []
    more = False
    for rule in rules:
        more = more or len(hosts) == SHOWN
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - SHOWN} more..." if more else text


def _address(ingress: dict[str, Any], wide: bool = False) -> str:
    found = [i.get("ip") or i.get("hostname") or "" for i in dig(ingress, "status.loadBalancer.ingress", []) or []]
    text = ",".join(a for a in found if a)
    return text[:ADDRESS_WIDTH - 3] + "..." if not wide and len(text) > ADDRESS_WIDTH else text


def _parameters(ingress_class: dict[str, Any]) -> str:
    parameters = dig(ingress_class, "spec.parameters")
    if not parameters:
        return "<none>"
    kind = parameters.get("kind", "") + (f".{parameters['apiGroup']}" if parameters.get("apiGroup") else "")
    return f"{kind}/{parameters.get('name', '')}"


INGRESS_COLUMNS = (
    NAME,
    Column("Class", "string", lambda o: dig(o, "spec.ingressClassName") or "<none>", description="The name of the IngressClass resource that should be used for ingresses"),
    Column("Hosts", "string", format_hosts, description="Hosts that incoming requests are matched against before the ingress rule"),
    Column("Address", "string", _address, description="Address is a list containing ingress points for the load-balancer"),
    Column("Ports", "string", lambda o: "80, 443" if dig(o, "spec.tls") else "80", description="Ports of TLS configurations that open"),
    AGE,
)
INGRESS_CLASS_COLUMNS = (
    NAME,
    Column("Controller", "string", lambda o: dig(o, "spec.controller", ""), description="Controller that is responsible for handling this class"),
    Column("Parameters", "string", _parameters, description="A reference to a resource with additional parameters"),
    AGE,
)
NETWORK_POLICY_COLUMNS = (
    NAME,
    Column("Pod-Selector", "string", lambda o: format_label_selector(dig(o, "spec.podSelector")) or "<none>",
           description="podSelector selects the pods to which this NetworkPolicy object applies."),
    AGE,
)
