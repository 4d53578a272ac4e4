"""Table columns of EndpointSlices, as ``kubectl get`` shows them on a cluster (``printEndpointSlice``)."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column

SHOWN = 3


def _listed(items: list[str]) -> str:
    """``listWithMoreString``: the first three, then how many more; ``<unset>`` for none."""
    text = ",".join(items[:SHOWN])
    if len(items) > SHOWN:
        return f"{text} + {len(items) - SHOWN} more..."
    return text or "<unset>"


def _port(port: dict[str, Any]) -> str:
    if port.get("port") is not None:
        return str(port["port"])
    return str(port["name"]) if port.get("name") is not None else "*"


def format_ports(slice_: dict[str, Any]) -> str:
    return _listed([_port(p) for p in slice_.get("ports") or []])


def format_endpoints(slice_: dict[str, Any]) -> str:
    return _listed([a for e in slice_.get("endpoints") or [] for a in e.get("addresses") or []])


ENDPOINT_SLICE_COLUMNS = (
    NAME,
    Column("AddressType", "string", lambda o: o.get("addressType", ""), description=(
        "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice "
        "must be the same type. This field is immutable after creation.")),
    Column("Ports", "string", format_ports, description=(
        "ports specifies the list of network ports exposed by each endpoint in this slice.")),
    Column("Endpoints", "string", format_endpoints, description=(
        "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.")),
    AGE,
)
