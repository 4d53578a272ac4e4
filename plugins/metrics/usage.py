"""What a simulated container uses: the figures the metrics API reports (``kubectl top``, the
horizontal pod autoscaler).

A simulated container uses what it declares. By default that is its requests (``cpu`` and
``memory``; 0 for one it does not request), so a pod is at 100% of its requests. A pod's
annotations say otherwise: ``kplane.io/usage: cpu=250m,memory=64Mi`` sets every container's
usage, ``kplane.io/usage.<container>: cpu=50m`` one container's (it wins over the pod-wide one);
a resource left out keeps its default, and an entry that is no ``name=quantity`` is ignored.
Changing the annotation of running pods (``kubectl annotate pods -l app=web
kplane.io/usage=cpu=400m --overwrite``) is how a test drives an autoscaler up or down.

Only running pods bound to a node have metrics, as only those have a kubelet reporting them; a
node uses what its running pods use."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kplane.api import quantity


USAGE_ANNOTATION = "kplane.io/usage"
RESOURCES = ("cpu", "memory")

Usage = dict[str, Fraction]


def parse_usage(text: str) -> Usage:
    """``cpu=250m,memory=64Mi`` as exact values; entries that do not parse are left out."""
    found: Usage = {}
    for entry in text.split(",")[:16]:
        name, sep, value = entry.partition("=")
        name = name.strip()
        if not sep or name not in RESOURCES:
            continue
        try:
            amount = quantity.parse(value.strip()).value
        except ValueError:
            continue
        if amount >= 0:
            found[name] = amount
    return found


def reported(pod: dict[str, Any]) -> bool:
    """Whether a pod has metrics: running on a node."""
    return (pod.get("status") or {}).get("phase") == "Running" and bool((pod.get("spec") or {}).get("nodeName"))


def container_usage(pod: dict[str, Any], container: dict[str, Any]) -> Usage:
    """One container's usage: its annotation, the pod's, else its requests."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    requests = (container.get("resources") or {}).get("requests") or {}
    usage: Usage = {}
    for name in RESOURCES:
        try:
            usage[name] = quantity.parse(requests[name]).value if name in requests else Fraction(0)
        except ValueError:
            usage[name] = Fraction(0)
    usage.update(parse_usage(annotations.get(USAGE_ANNOTATION, "")))
    usage.update(parse_usage(annotations.get(f"{USAGE_ANNOTATION}.{container.get('name', '')}", "")))
    return usage


def pod_usage(pod: dict[str, Any]) -> list[tuple[str, Usage]]:
    """Each regular container's name and usage (init containers have finished by the time a pod runs)."""
    return [(c.get("name", ""), container_usage(pod, c)) for c in (pod.get("spec") or {}).get("containers") or ()]


def wire(usage: Usage) -> dict[str, str]:
    """A usage as metrics-server writes it: cpu in nanocores' canonical form, memory in bytes'."""
    return {name: formatted(name, usage.get(name, Fraction(0))) for name in RESOURCES}


def formatted(resource: str, value: Fraction) -> str:
    """``value`` written as Kubernetes writes that resource: memory in BinarySI, the rest DecimalSI."""
    return quantity.canonical(value, quantity.BINARY_SI if resource == "memory" else quantity.DECIMAL_SI)
