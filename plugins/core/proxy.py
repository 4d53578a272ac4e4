"""``pods/proxy``, ``services/proxy`` and ``nodes/proxy``: kube-apiserver's proxy subresources,
answered by the simulated endpoint of a pod (:mod:`kplane.plugins.core.containers.endpoint`) or
by a small simulated kubelet, never by a connection off this process.

The names are kube's ``[scheme:]name[:port]`` (``pods/web:8080/proxy/path``, ``https:web:443``);
the rest of the URL is the path asked of the target, and a GET or HEAD of the bare
``.../proxy`` is redirected to ``.../proxy/`` as kube's proxy handler does. A Service is reached
through one of its ready endpoints, chosen at random: a ready, running pod its selector matches
with the port the Service's ``targetPort`` names (``ServiceREST.ResourceLocation``).
"""

from __future__ import annotations

import ipaddress
import json
import random
from typing import Any, cast

from kplane.api import (
    Exchange, Getter, GroupVersionKind, LabelSelector, ListOptions, Registry, RequestContext, Served, errors,
    label_selector_from_internal,
)
from kplane.plugins.core.containers.endpoint import Answer, http_answer
from kplane.plugins.core.controllers import podendpoints as pe

Obj = dict[str, Any]

#: The methods kube's proxy subresources take (``proxyMethods``).
PROXY_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
#: The simulated kubelet's port (registrar.py's daemonEndpoints).
KUBELET_PORT = 10250


def split_scheme_name_port(id_: str) -> tuple[str, str, str]:
    """``[scheme:]name[:port]`` as kube's ``SplitSchemeNamePort``; ValueError when malformed."""
    parts = id_.split(":")
    if len(parts) == 1:
        scheme, name, port = "", parts[0], ""
    elif len(parts) == 2:
        scheme, name, port = "", parts[0], parts[1]
    elif len(parts) == 3:
        scheme, name, port = parts
    else:
        raise ValueError(id_)
    if not name or scheme not in ("", "http", "https"):
        raise ValueError(id_)
    return scheme, name, port


def unreachable(host: str, port: str, why: str) -> errors.APIError:
    """What kube's proxy answers when it cannot connect (a 503 with Go's dial error)."""
    return errors.unavailable(f"error trying to reach service: dial tcp {host}:{port}: {why}")


class _Proxy(Served):
    connect_methods = PROXY_METHODS
    connect_subpath = True

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def getter(self, plural: str) -> Getter:
        return cast(Getter, self.registry.rest("", plural))

    async def answer(self, exchange: Exchange, answer: Answer) -> None:
        await exchange.read()  # a body is taken whole, within the server's limit, and then dropped
        content_type = answer.headers.pop("Content-Type", "text/plain; charset=utf-8")
        await exchange.start(content_type, answer.status, answer.headers)
        await exchange.write(answer.body)

    @staticmethod
    def redirected(exchange: Exchange) -> Answer | None:
        """kube's ``proxyRedirectsforRootPath``: the bare ``.../proxy`` is the root, ``.../proxy/``."""
        if exchange.path or exchange.method not in ("GET", "HEAD"):
            return None
        query = f"?{exchange.query_string}" if exchange.query_string else ""
        return Answer(301, b"", {"Location": f"proxy/{query}"})

    @staticmethod
    def target(exchange: Exchange) -> str:
        path = exchange.path or "/"
        return f"{path}?{exchange.query_string}" if exchange.query_string else path


def pod_answer(pod: Obj, port: str, exchange: Exchange) -> Answer:
    """The endpoint's answer from ``port`` of ``pod``, as a proxy dialing its IP would get it."""
    ip = (pod.get("status") or {}).get("podIP") or ""
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise unreachable(ip, port, "unknown port")
    if (pod.get("status") or {}).get("phase") != "Running":
        raise unreachable(ip, port, "connect: connection refused")
    return http_answer(pod, int(port), exchange.method, _Proxy.target(exchange))


class PodProxyREST(_Proxy):
    kind = GroupVersionKind("", "v1", "PodProxyOptions")  # kube's connect options, as discovery names them

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None:
        try:
            scheme, pod_name, port = split_scheme_name_port(name)
        except ValueError:
            raise errors.bad_request(f"invalid pod request {name!r}") from None
        pod = (await self.getter("pods").get(ctx, pod_name)).obj
        if not port:  # the first port a container declares, else the scheme's
            declared = [p.get("containerPort") for c in (pod.get("spec") or {}).get("containers") or [] for p in c.get("ports") or []]
            port = str(declared[0]) if declared else ("443" if scheme == "https" else "80")
        try:
            address = ipaddress.ip_address((pod.get("status") or {}).get("podIP") or "")
        except ValueError:
            address = None
        if address is None or address.is_loopback or address.is_link_local or address.is_multicast or address.is_unspecified:
            raise errors.bad_request("address not allowed")
        await self.answer(exchange, self.redirected(exchange) or pod_answer(pod, port, exchange))


class ServiceProxyREST(_Proxy):
    kind = GroupVersionKind("", "v1", "ServiceProxyOptions")

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None:
        try:
            _, service_name, port = split_scheme_name_port(name)
        except ValueError:
            raise errors.bad_request(f"invalid service request {name!r}") from None
        service = (await self.getter("services").get(ctx, service_name)).obj
        ports = (service.get("spec") or {}).get("ports") or []
        if port.isdigit():  # a port number names the Service's port of that number
            named = next((p for p in ports if str(p.get("port")) == port), None)
            if named is None:
                raise errors.unavailable(f'no service port {port} found for service "{service_name}"')
            port = named.get("name") or ""
        service_port = next((p for p in ports if (p.get("name") or "") == port), None)
        endpoints = await self.ready_endpoints(ctx, service, service_port) if service_port else []
        if not endpoints:
            raise errors.unavailable(f'no endpoints available for service "{service_name if service_port else name}"')
        pod, target = random.choice(endpoints)
        await self.answer(exchange, self.redirected(exchange) or pod_answer(pod, str(target), exchange))

    async def ready_endpoints(self, ctx: RequestContext, service: Obj, port: Obj) -> list[tuple[Obj, int]]:
        """The ready pods behind ``port`` of ``service`` and the port each serves it on, as the
        endpoints controller lists them (:mod:`.controllers.podendpoints`)."""
        if not (service.get("spec") or {}).get("selector"):
            return []  # a Service without a selector has the endpoints someone else writes
        selector = (service.get("spec") or {}).get("selector")
        pods = self.registry.store("", "pods")
        page = await pods.list(RequestContext(namespace=ctx.namespace, resource="pods"), ListOptions(label_selector=label_selector_from_internal(LabelSelector(match_labels=selector))))
        found = []
        for stored in page.items:
            pod = stored.obj
            if not pe.included(pod, terminating=False) or not pe.ready(pod):
                continue
            target = pe.find_port(pod, port)
            if target is not None:
                found.append((pod, target))
        return found


class NodeProxyREST(_Proxy):
    """The simulated kubelet's HTTP server: ``/healthz``, ``/configz``, else Go's 404."""

    kind = GroupVersionKind("", "v1", "NodeProxyOptions")

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None:
        try:
            _, node_name, port = split_scheme_name_port(name)
        except ValueError:
            raise errors.bad_request(f"invalid node request {name!r}") from None
        node = (await self.getter("nodes").get(ctx, node_name)).obj
        addresses = (node.get("status") or {}).get("addresses") or []
        host = next((a.get("address") for a in addresses if a.get("type") == "InternalIP"), node_name)
        if port and port != str(KUBELET_PORT):
            raise unreachable(host, port, "connect: connection refused")
        await self.answer(exchange, self.redirected(exchange) or kubelet_answer(node, exchange.path))


def kubelet_answer(node: Obj, path: str) -> Answer:
    if path.rstrip("/") == "/healthz":
        return Answer(200, b"ok")
    if path.rstrip("/") == "/configz":
        capacity = (node.get("status") or {}).get("capacity") or {}
        config = {"kubeletconfig": {"enableServer": True, "port": KUBELET_PORT, "maxPods": int(capacity.get("pods", 110)),
                                    "podCIDR": (node.get("spec") or {}).get("podCIDR", ""), "syncFrequency": "1m0s"}}
        return Answer(200, json.dumps(config).encode(), {"Content-Type": "application/json"})
    return Answer(404, b"404 page not found\n")
