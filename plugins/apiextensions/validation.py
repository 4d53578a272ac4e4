"""CustomResourceDefinition validation (``pkg/apis/apiextensions/validation``), with
kube-apiserver's field paths and messages."""

from __future__ import annotations

from kplane.api import FieldError, invalid, not_supported, required
from kplane.plugins.apiextensions.schema import cel, structural
from kplane.plugins.apiextensions.types import CLUSTER_SCOPED, NAMESPACE_SCOPED, CustomResourceDefinition


def validate_crd(crd: CustomResourceDefinition) -> list[FieldError]:
    errs: list[FieldError] = []
    spec = crd.spec
    names = spec.names
    if crd.metadata.name != f"{names.plural}.{spec.group}":
        errs.append(invalid("metadata.name", crd.metadata.name, "must be spec.names.plural+\".\"+spec.group"))
    if not spec.group:
        errs.append(required("spec.group", ""))
    if spec.scope not in (CLUSTER_SCOPED, NAMESPACE_SCOPED):
        errs.append(required("spec.scope", "") if not spec.scope else not_supported("spec.scope", spec.scope, [CLUSTER_SCOPED, NAMESPACE_SCOPED]))
    if not names.plural:
        errs.append(required("spec.names.plural", ""))
    if not names.kind:
        errs.append(required("spec.names.kind", ""))
    versions = spec.versions or []
    if not versions:
        errs.append(required("spec.versions", "must have exactly one version marked as storage version"))
    elif sum(1 for v in versions if v.storage) != 1:
        errs.append(invalid("spec.versions", [v.name for v in versions], "must have exactly one version marked as storage version"))
    for i, version in enumerate(versions):
        schema = version.schema.open_api_v3_schema if version.schema is not None else None
        if schema is not None:
            path = f"spec.versions[{i}].schema.openAPIV3Schema"
            errs += structural.validate_structural(schema, path)
            errs += cel.compile_errors(schema, path)
    return errs


def validate_crd_update(crd: CustomResourceDefinition, old: CustomResourceDefinition) -> list[FieldError]:
    return validate_crd(crd)


def validate_crd_status(crd: CustomResourceDefinition) -> list[FieldError]:
    return []
