"""The webhooks of one kind of configuration, as the informers see them, compiled once."""

from __future__ import annotations

import dataclasses
from typing import Any

from kplane.api import Handlers, SharedInformerFactory
from kplane.plugins.admissionregistration.expressions import Declarations
from kplane.plugins.admissionregistration.matchconditions import Matcher
from kplane.plugins.admissionregistration.types import GROUP

#: Variables a webhook's matchConditions may use (no params, no variables of their own).
DECLARATIONS = Declarations(authorizer=True)


@dataclasses.dataclass(slots=True)
class Webhook:
    """One webhook of a configuration: its v1 wire dict and its compiled match conditions."""

    configuration: str
    spec: dict[str, Any]
    conditions: Matcher

    @property
    def name(self) -> str:
        return self.spec.get("name") or ""

    @property
    def failure_policy(self) -> str:
        return self.spec.get("failurePolicy") or "Fail"

    @property
    def timeout(self) -> float:
        return float(self.spec.get("timeoutSeconds") or 10)

    @property
    def reinvoked_if_needed(self) -> bool:
        return self.spec.get("reinvocationPolicy") == "IfNeeded"


class WebhookSource:
    """The webhooks of every configuration of ``plural`` (validating or mutating), configurations
    by name and each one's webhooks in their order, as kube-apiserver calls them."""

    def __init__(self, informers: SharedInformerFactory, plural: str) -> None:
        self.informer = informers.informer(GROUP, "v1", plural)
        self._configurations: dict[str, tuple[str, list[Webhook]]] = {}  # name -> (resourceVersion, webhooks)
        self.webhooks: list[Webhook] = []
        self.informer.add_handlers(Handlers(on_add=self._put, on_update=lambda _, new: self._put(new),
                                            on_delete=self._drop))

    def _put(self, configuration: dict[str, Any]) -> None:
        meta = configuration["metadata"]
        name, rv = meta["name"], meta.get("resourceVersion") or ""
        if self._configurations.get(name, ("",))[0] == rv and rv:
            return
        hooks = [Webhook(name, spec, Matcher(spec.get("matchConditions"), DECLARATIONS))
                 for spec in configuration.get("webhooks") or ()]
        self._configurations[name] = (rv, hooks)
        self._flatten()

    def _drop(self, configuration: dict[str, Any]) -> None:
        self._configurations.pop(configuration["metadata"]["name"], None)
        self._flatten()

    def _flatten(self) -> None:
        self.webhooks = [hook for name in sorted(self._configurations) for hook in self._configurations[name][1]]
