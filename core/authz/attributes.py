"""What a request asks, as authorizers see it (kube's ``authorizer.Attributes`` from the
``RequestInfo`` its ``WithRequestInfo`` filter parses)."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from kplane.core.authn.user import UserInfo
from kplane.core.meta import errors
from kplane.core.meta.selectors import exact_name, parse_field_selector
from kplane.core.meta.validation import is_path_segment_name
from kplane.core.server import params, requestinfo

# The verb of a resource request by method and whether the path names an object.
_VERBS = {
    ("GET", True): "get", ("HEAD", True): "get", ("GET", False): "list", ("HEAD", False): "list",
    ("POST", True): "create", ("POST", False): "create", ("PUT", True): "update", ("PUT", False): "update",
    ("PATCH", True): "patch", ("PATCH", False): "patch", ("DELETE", True): "delete", ("DELETE", False): "deletecollection",
}


@dataclass(frozen=True, slots=True)
class Attributes:
    """A request for a resource (``resource_request``) or for a path (``/healthz``, discovery)."""

    user: UserInfo
    verb: str
    resource_request: bool
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""


def attributes_of(request: web.Request, user: UserInfo) -> Attributes:
    """The attributes of ``request`` made by ``user``: a resource request's verb follows kube's
    ``RequestInfoFactory`` (``list`` with ``?watch`` is ``watch``; a DELETE of a collection is
    ``deletecollection``); any other request's verb is its method, lower-cased."""
    info = requestinfo.of(request)
    if info is None:
        return Attributes(user, request.method.lower(), False, path=request.path)
    verb = _VERBS.get((request.method, bool(info.name)), request.method.lower())
    name = info.name
    if verb == "list":
        if _watch(request):
            verb = "watch"
        # A list or watch of one name is about that object: resourceNames may allow it (kube does this).
        name = _selected_name(request)
    # A namespace is the namespace of its own requests: a Role in "team" may grant "get namespaces".
    namespace = info.name if info.resource == "namespaces" and not info.namespaced_path else info.namespace
    return Attributes(user, verb, True, namespace, info.group, info.version, info.resource, info.subresource,
                      name, request.path)


def _selected_name(request: web.Request) -> str:
    """The name a ``fieldSelector`` of ``metadata.name=X`` pins (a valid path segment), else ""."""
    text = request.query.get("fieldSelector", "")
    if "metadata.name" not in text:
        return ""
    try:
        name = exact_name(parse_field_selector(text)) or ""
    except errors.APIError:  # a malformed selector is the handler's 400
        return ""
    return name if name and not is_path_segment_name(name) else ""


def _watch(request: web.Request) -> bool:
    try:
        return params.flag(request.query, "watch")
    except Exception:  # noqa: BLE001  # a malformed ?watch= is the handler's 400; here it is a list
        return False
