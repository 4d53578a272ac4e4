"""``POST /api/v1/namespaces/{namespace}/bindings``: the older way to bind a pod, as kube-apiserver
still serves it (one ``BindingREST`` behind both): the Binding names the pod in its
``metadata.name`` and is applied as ``pods/{name}/binding`` applies it. The answer is the
Binding (kube answers a Success Status; clients read neither)."""

from __future__ import annotations

import dataclasses

from kplane.api import Creater, Registry, RequestContext, Served, errors, required
from kplane.plugins.core.types import Binding


class BindingsREST(Served):
    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def create(self, ctx: RequestContext, binding: Binding) -> Binding:
        name = binding.metadata.name
        if not name:
            raise errors.invalid_object("Binding", "", "", [required("metadata.name", "name or generateName is required")])
        rt = self.registry.scheme.get("", "bindings")
        pod_binding = self.registry.rest("", "pods", "binding")
        assert rt is not None and isinstance(pod_binding, Creater)
        await pod_binding.create(dataclasses.replace(ctx, resource="pods", subresource="binding", name=name), rt.encode(binding, "v1"))
        return binding
