"""A CRD's resource put into, and taken out of, one server's Scheme and Registry.

The names served are the CRD's ``status.acceptedNames`` (what the naming controller accepted),
the versions its ``served`` ones; the storage version is kept for conversion even when it is not
served. Serving again after a change replaces the kind and its strategies whole, so every
request after it sees the CRD as it is now (Stores are rebuilt when the scheme changes).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kplane.api import FieldPath, Registry, WebhookClient
from kplane.plugins.apiextensions.customresource import deprecation
from kplane.plugins.apiextensions.customresource.columns import columns
from kplane.plugins.apiextensions.customresource.conversion import WebhookConverter
from kplane.plugins.apiextensions.customresource.jsonpath import JSONPath, JSONPathError
from kplane.plugins.apiextensions.customresource.resourcetype import CustomResourceType
from kplane.plugins.apiextensions.customresource.scale import CustomResourceScale
from kplane.plugins.apiextensions.customresource.strategy import (
    Behaviour, CustomResourceStatusStrategy, CustomResourceStrategy, Definition, ScalePaths,
)
from kplane.plugins.apiextensions.schema.cel import RuleValidator
from kplane.plugins.apiextensions.schema.validation import SchemaValidator

PLUGIN = "apiextensions"  # what the Scheme says registered a custom resource's kind


def resource_type(crd: dict[str, Any], webhooks: WebhookClient) -> CustomResourceType:
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
        selectable_fields={v["name"]: [(f.get("jsonPath") or "").removeprefix(".") for f in v.get("selectableFields") or ()]
                           for v in versions},
    )


def definition(crd: dict[str, Any], rt: CustomResourceType) -> Definition:
    """What the CRD says of its resource in every version (the validators made once here)."""
    return Definition(validators={v: SchemaValidator(s) for v, s in rt.schemas.items()},
                      rules={v: RuleValidator(s) for v, s in rt.schemas.items()}, storage_version=rt.storage_version,
                      plural=rt.plural, group=rt.group, kind=rt.kind,
                      terminating=terminating(crd))


def terminating(crd: dict[str, Any]) -> bool:
    """Being deleted: a deletionTimestamp, or the Terminating condition."""
    conditions = (crd.get("status") or {}).get("conditions") or []
    return bool(crd["metadata"].get("deletionTimestamp")) or any(
        c.get("type") == "Terminating" and c.get("status") == "True" for c in conditions)


def behaviour(spec: dict[str, Any], version: dict[str, Any], namespaced: bool) -> Behaviour:
    """One CRD version's subresources, columns, selectable fields and deprecation warning."""
    subresources = version.get("subresources") or {}
    scale = subresources.get("scale")
    return Behaviour(status="status" in subresources, scale=ScalePaths.of(scale) if scale is not None else None,
                     columns=columns(version.get("additionalPrinterColumns") or ()),
                     selectable_fields=selectable_fields(version.get("selectableFields") or (), namespaced),
                     warnings=deprecation.warnings(spec, version))


def selectable_fields(declared: Any, namespaced: bool) -> dict[str, FieldPath]:
    """metadata.name (and metadata.namespace for a namespaced kind), then each declared field,
    read with its JSONPath (its label is the path without the leading dot)."""
    found: dict[str, FieldPath] = {"metadata.name": "metadata.name"}
    if namespaced:
        found["metadata.namespace"] = "metadata.namespace"
    for field in declared:
        path = field.get("jsonPath") or ""
        try:
            parsed = JSONPath.parse(path)
        except JSONPathError:
            continue  # the CRD's validation refuses such paths; one stored before is not selectable
        found[path.lstrip(".")] = lambda obj, parsed=parsed: parsed.first(obj)[1]
    return found


@dataclasses.dataclass(frozen=True, slots=True)
class Prepared:
    """What serving a CRD takes, made without touching the server (:func:`prepare`), so the work
    of a large schema (its validators, patterns, rules and classes) can run off the event loop."""

    rt: CustomResourceType
    definition: Definition
    versions: dict[str, Behaviour]


def prepare(crd: dict[str, Any], webhooks: WebhookClient) -> Prepared:
    """The kind, its definition and each version's behaviour, from ``crd``: CPU only, no server state."""
    rt = resource_type(crd, webhooks)
    versions = {v["name"]: behaviour(crd["spec"], v, rt.namespaced) for v in crd["spec"].get("versions") or []}
    return Prepared(rt, definition(crd, rt), versions)


def serve(registry: Registry, prepared: Prepared) -> CustomResourceType:
    """Serve a prepared CRD's resource (again): the kind, and per served version its strategies,
    ``status`` and ``scale``. Each is registered for its version (so a version without
    ``status`` does not serve it); the resource's, and a subresource every served version has,
    for every version too (the storage version's: what writes made in code and readers that name
    no version see)."""
    rt, found, versions = prepared.rt, prepared.definition, prepared.versions
    unserve(registry, rt.group, rt.plural)
    registry.scheme.add_type(rt)
    served = [name for name in versions if rt.serves(name)]
    registry.add_strategy(rt.group, rt.plural, CustomResourceStrategy(found, versions[rt.storage_version]))
    for name in served:
        registry.add_strategy(rt.group, rt.plural, CustomResourceStrategy(found, versions[name]), version=name)
    storage = versions[rt.storage_version]
    with_status = [name for name in served if versions[name].status]
    for name in with_status:
        registry.add_strategy(rt.group, rt.plural, CustomResourceStatusStrategy(found, versions[name]),
                              subresource="status", version=name)
    if with_status and len(with_status) == len(served):
        every = storage if storage.status else versions[with_status[0]]
        registry.add_strategy(rt.group, rt.plural, CustomResourceStatusStrategy(found, every), subresource="status")
    scales = {name: paths for name in served if (paths := versions[name].scale) is not None}
    for name, paths in scales.items():
        registry.add_scale(rt.group, rt.plural, CustomResourceScale.of(paths), version=name)
    if scales and len(scales) == len(served):
        registry.add_scale(rt.group, rt.plural, CustomResourceScale.of(storage.scale or next(iter(scales.values()))))
    return rt


def unserve(registry: Registry, group: str, plural: str) -> None:
    """Stop serving ``plural.group`` if a CRD's resource is served under that name."""
    current = registry.scheme.get(group, plural)
    if isinstance(current, CustomResourceType):
        registry.scheme.remove_type(group, plural)
        registry.remove(group, plural)
