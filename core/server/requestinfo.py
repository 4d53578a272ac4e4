"""Parse a resource URL into what the request is about (k8s ``RequestInfoFactory``).

    /api/v1/namespaces/{ns}/pods/{name}/status
    /apis/{group}/{version}/namespaces/{ns}/{resource}[/{name}[/{subresource}]]
    /apis/{group}/{version}/{resource}[/{name}[/{subresource}]]   (cluster-scoped or all namespaces)

``namespaces/{name}/status`` and ``namespaces/{name}/finalize`` are subresources of a namespace,
not a namespaced resource called "status".
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(slots=True)
class RequestInfo:
    group: str
    version: str
    resource: str = ""
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    # Set when the path names a namespace before the resource (/namespaces/{ns}/{resource}).
    namespaced_path: bool = False
    # Set when segments follow the subresource: still about that resource for authorization, as
    # kube's RequestInfoFactory parses it, but nothing kplane serves.
    trailing: bool = False
    # What follows the subresource, for a connecter taking a subpath (``proxy``): "/a/b", "/"
    # when the path ends in a slash, "" when nothing follows (kube's ``getRequestOptions``).
    subpath: str = ""


def parse_resource_path(path: str) -> RequestInfo | None:
    """RequestInfo for a resource path, or None for discovery and unknown shapes."""
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if not rest:
        return None
    info = RequestInfo(group, version)
    if rest[0] == "namespaces" and len(rest) > 1:
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            info.namespace, info.namespaced_path, rest = rest[1], True, rest[2:]
    info.resource = rest[0]
    if len(rest) > 1:
        info.name = rest[1]
    if len(rest) > 2:
        info.subresource = rest[2]
    info.trailing = len(rest) > 3
    if info.subresource:
        info.subpath = "/" + "/".join(rest[3:]) if info.trailing else ""
        if path.endswith("/") and not info.subpath.endswith("/"):
            info.subpath += "/"
    return info


_INFO = web.RequestKey("kplane_request_info", object)


def of(request: web.Request) -> RequestInfo | None:
    """The request's RequestInfo (None for discovery and other shapes), parsed once per request
    however many filters and handlers ask, as kube-apiserver's ``WithRequestInfo`` does."""
    try:
        return request[_INFO]  # type: ignore[return-value]
    except KeyError:
        info = request[_INFO] = parse_resource_path(request.path)
        return info
