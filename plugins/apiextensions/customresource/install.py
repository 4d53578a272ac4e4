"""A CRD's resource put into, and taken out of, one server's Scheme and Registry.

The names served are the CRD's ``status.acceptedNames`` (what the naming controller accepted),
the versions its ``served`` ones; the storage version is kept for conversion even when it is not
served. Serving again after a change replaces the kind and its strategies whole, so every
request after it sees the CRD as it is now (Stores are rebuilt when the scheme changes).
"""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Registry, ScaleAdapter
from kplane.plugins.apiextensions.customresource.conversion import WebhookConverter, Webhooks
from kplane.plugins.apiextensions.customresource.resourcetype import CustomResourceType
from kplane.plugins.apiextensions.schema.cel import RuleValidator
from kplane.plugins.apiextensions.schema.validation import SchemaValidator
from kplane.plugins.apiextensions.customresource.strategy import (
    CustomResourceStatusStrategy, CustomResourceStrategy, Definition, column,
)

PLUGIN = "apiextensions"  # what the Scheme says registered a custom resource's kind


def resource_type(crd: dict[str, Any], webhooks: Webhooks) -> CustomResourceType:
    spec, status = crd["spec"], crd.get("status") or {}
    names = status.get("acceptedNames") or {}
    conversion = spec.get("conversion") or {}
    webhook = None
    if conversion.get("strategy") == "Webhook":
        webhook = WebhookConverter(webhooks, spec["group"], names["kind"], conversion.get("webhook") or {})
    versions = spec.get("versions") or []
    storage = next(v["name"] for v in versions if v.get("storage"))
    schemas = {v["name"]: (v.get("schema") or {}).get("openAPIV3Schema") for v in versions}
    served = frozenset(v["name"] for v in versions if v.get("served"))
    return CustomResourceType.of(
        group=spec["group"], kind=names["kind"], plural=names["plural"],
        singular=names.get("singular") or names["kind"].lower(), namespaced=spec.get("scope") == "Namespaced",
        schemas=schemas, served=served, storage_version=storage, short_names=names.get("shortNames") or (),
        categories=names.get("categories") or (), uid=crd["metadata"].get("uid", ""), plugin=PLUGIN,
        stored_versions=status.get("storedVersions") or (), webhook=webhook,
    )


def definition(crd: dict[str, Any], rt: CustomResourceType) -> Definition:
    versions = crd["spec"].get("versions") or []
    storage = next(v for v in versions if v.get("storage"))
    subresources = storage.get("subresources") or {}
    printed = storage.get("additionalPrinterColumns") or []
    columns = (NAME, *map(column, printed)) if printed else (NAME, AGE)
    selectable = {"metadata.name": "metadata.name"}
    if rt.namespaced:
        selectable["metadata.namespace"] = "metadata.namespace"
    for selectable_field in storage.get("selectableFields") or []:
        path = (selectable_field.get("jsonPath") or "").lstrip(".")
        selectable[path] = path
    return Definition(schemas=dict(rt.schemas), validators={v: SchemaValidator(s) for v, s in rt.schemas.items()},
                      rules={v: RuleValidator(s) for v, s in rt.schemas.items()}, status="status" in subresources, columns=columns,
                      selectable_fields=selectable, storage_version=rt.storage_version)


def serve(registry: Registry, crd: dict[str, Any], webhooks: Webhooks) -> CustomResourceType:
    """Serve ``crd``'s resource (again): the kind, its strategies, ``status`` and ``scale``;
    ``webhooks`` is what its conversion webhook, if it has one, is called with."""
    rt = resource_type(crd, webhooks)
    unserve(registry, rt.group, rt.plural)
    registry.scheme.add_type(rt)
    found = definition(crd, rt)
    registry.add_strategy(rt.group, rt.plural, CustomResourceStrategy(found))
    if found.status:
        registry.add_strategy(rt.group, rt.plural, CustomResourceStatusStrategy(found), subresource="status")
    storage = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    scale = (storage.get("subresources") or {}).get("scale")
    if scale is not None:
        registry.add_scale(rt.group, rt.plural, ScaleAdapter(
            spec_replicas=scale.get("specReplicasPath", "").lstrip("."),
            status_replicas=scale.get("statusReplicasPath", "").lstrip("."),
            selector=(scale.get("labelSelectorPath") or "").lstrip("."),
        ))
    return rt


def unserve(registry: Registry, group: str, plural: str) -> None:
    """Stop serving ``plural.group`` if a CRD's resource is served under that name."""
    current = registry.scheme.get(group, plural)
    if isinstance(current, CustomResourceType):
        registry.scheme.remove_type(group, plural)
        registry.remove(group, plural)
